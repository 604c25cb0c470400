"""Operational alarms per endpoint and one CloudWatch dashboard per stack (filled in below)."""

from __future__ import annotations

from typing import Mapping

from infra.config import FastscaleConfig
from infra.naming import EndpointNames
from stacks.engine import Construct
from stacks.resources.base import Resource


class EndpointAlarms(Construct):
    """Operational alarms of one endpoint."""

    def __init__(
        self,
        scope: Construct,
        id_: str,
        *,
        config: FastscaleConfig,
        names: EndpointNames,
        endpoint: Resource,
        components: Mapping[str, Resource],
    ) -> None:
        super().__init__(scope, id_)


class StackDashboard(Construct):
    """One CloudWatch dashboard for every endpoint of the stack."""

    def __init__(self, scope: Construct, id_: str, *, config: FastscaleConfig) -> None:
        super().__init__(scope, id_)
