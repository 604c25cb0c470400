"""A component's accelerator count per copy must exist on every fallback instance type.

A copy is placed on one instance. A component that reserves 4 GPUs per copy is never placed on a
fallback type with 2, so scaling out onto that pool adds instances without adding copies. Give the
component a per-type override (`capacity.fallback[].components.<name>.resources`) that fits.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model import capacity
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import fallback_pools

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.12xlarge
    capacity:
      fallback:
        - {instance_type: ml.g6.2xlarge}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 4, memory_mb: 16384}
"""


@rule(
    "FS037",
    "component-devices-not-on-pool",
    Severity.ERROR,
    "A component reserves more accelerators per copy than a fallback instance type has.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep, pool in fallback_pools(config):
        if not catalog.is_known_instance_type(pool.instance_type):
            continue  # FS034
        spec = catalog.get(pool.instance_type)
        devices = spec.accelerator_count if spec is not None else 0
        for comp in ep.inference_components:
            wanted = capacity.component_on(pool, comp).resources.accelerators
            if wanted is None or wanted <= devices:
                continue
            override = capacity.component_override(pool, comp)
            overridden = override is not None and override.resources is not None
            yield Hit(
                f"{path}.components.{comp.name}.resources.accelerators" if overridden else f"{path}.components",
                f"component '{comp.name}' reserves {wanted} accelerator device(s) per copy but {pool.instance_type} has "
                f"{devices}: no copy can be placed on instances of this pool.",
                f"add `components: {{{comp.name}: {{resources: {{accelerators: {max(devices, 1)}, memory_mb: ...}}}}}}` "
                "to this fallback (with a model that fits), or remove the pool"
                if devices
                else "fall back to an accelerator type",
            )
