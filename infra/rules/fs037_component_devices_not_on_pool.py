"""A component's accelerator count per copy must exist on every fallback instance type.

A copy is placed on one instance. A component that reserves 4 GPUs per copy is never placed on a
fallback type with 2, so scaling out onto that pool adds instances without adding copies. Give the
component a per-type override (`capacity.fallback[].components.<name>.resources`) that fits.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import fallback_pools

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


@stack_rule(
    "FS037",
    "component-devices-not-on-pool",
    Severity.ERROR,
    "A component reserves more accelerators per copy than a fallback instance type has.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, ep, pool in fallback_pools(stack):
        if not catalog.is_known_instance_type(pool.instance_type):
            continue  # FS034
        spec = catalog.get(pool.instance_type)
        devices = spec.accelerator_count if spec is not None else 0
        for comp in ep.components:
            on_pool = comp.on_pools[pool.index]
            wanted = on_pool.resources.accelerators if on_pool.resources is not None else None
            if wanted is None or wanted <= devices:
                continue
            overridden = "resources" in on_pool.pool_overrides
            yield Hit(
                f"{path}.components.{comp.key}.resources.accelerators" if overridden else f"{path}.components",
                f"component '{comp.key}' reserves {wanted} accelerator device(s) per copy but {pool.instance_type} has "
                f"{devices}: no copy can be placed on instances of this pool.",
                f"add `components: {{{comp.key}: {{resources: {{accelerators: {max(devices, 1)}, memory_mb: ...}}}}}}` "
                "to this fallback (with a model that fits), or remove the pool"
                if devices
                else "fall back to an accelerator type",
            )
