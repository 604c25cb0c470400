"""Auto scaling of endpoints and inference components (filled in below)."""

from __future__ import annotations

from typing import Mapping

from infra.config import FastscaleConfig
from infra.naming import EndpointNames
from stacks.engine import Construct
from stacks.resources.base import Resource


class EndpointScaling(Construct):
    """Scalable targets and policies of one endpoint."""

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
