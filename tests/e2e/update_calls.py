"""A record of the UpdateEndpoint calls fastscale's emulator answers, so that a test can show which ones reached
it and with which registered scalable targets: the emulator itself (infra/project/emulator.py) answers them,
refusing as AWS does an update that changes the instance type of a variant registered for auto scaling.

Used by tests/e2e (in the emulator's threaded server, which shares this process's memory).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

#: Every UpdateEndpoint the emulator received: endpoint, old and new instance types, registered targets, outcome.
CALLS: list[dict[str, Any]] = []


def _variant_types(backend: Any, config_name: str) -> dict[str, str | None]:
    config = backend.describe_endpoint_config(config_name)
    return {v["VariantName"]: v.get("InstanceType") for v in config["ProductionVariants"]}


@contextmanager
def recording() -> Iterator[None]:
    """While a running emulator's UpdateEndpoint answers, append each call to :data:`CALLS`."""
    from moto.sagemaker.responses import SageMakerResponse

    from fastscale.infra.project.emulator import registered_variants

    answer = SageMakerResponse.update_endpoint  # the emulator's

    def update_endpoint(self: Any) -> Any:
        backend = self.sagemaker_backend
        name = self._get_param("EndpointName")
        endpoint = backend.endpoints.get(name)
        call = {"endpoint": name,
                "old": _variant_types(backend, endpoint.endpoint_config_name) if endpoint else {},
                "new": _variant_types(backend, self._get_param("EndpointConfigName")),
                "registered": sorted(registered_variants(self.current_account, self.region)), "ok": False}
        CALLS.append(call)
        result = answer(self)
        call["ok"] = True
        return result

    patch = pytest.MonkeyPatch()
    patch.setattr(SageMakerResponse, "update_endpoint", update_endpoint)
    try:
        yield
    finally:
        patch.undo()
        CALLS.clear()
