"""A rolling update of a component needs room for one batch of new copies beside the old ones.

A component's rolling update starts a batch of new copies, moves traffic to them and only then stops as
many old copies. The batch needs free accelerators (and memory, CPUs) while the old copies still run: on
the instances there are, or on new ones that managed instance scaling adds, up to `instances.max`. When
the component runs at `copies.max` (the other components at their `copies.min`) and `instances.max`
leaves no room for one more batch, an update at peak load waits for scale-out that can never come: it
stalls until traffic drops or the update times out and rolls back.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from fastscale.infra import catalog
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.deployment import component_settings
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints, fmt_num

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.2xlarge
    instances: {initial: 1, min: 1, max: 2}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
        copies: {initial: 1, min: 1, max: 2}
"""

PERCENT = 100


@rule(
    "FS045",
    "rollout-needs-spare-capacity",
    Severity.WARNING,
    "At its maximum copies a component's rolling update has no room for a batch of new copies.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for ep_path, ep in endpoints(config):
        spec = catalog.get(ep.instance_type)
        if not ep.inference_components or spec is None or ep.instances.max < 1:
            continue  # unknown types and impossible capacities are other rules' findings
        per_instance = {
            "accelerators": (spec.accelerator_count, "accelerator devices"),
            "memory_mb": (int(spec.memory_gib * 1024), "MB of host memory"),
            "cpus": (spec.vcpus, "vCPUs"),
        }
        for j, comp in enumerate(ep.inference_components):
            comp_path = f"{ep_path}.inference_components[{j}]"
            settings = component_settings(ep, comp, ep_path, comp_path)
            step = settings.rolling.batch
            batch = step.value if step.type == "COPY_COUNT" else math.ceil(step.value * comp.copies.max / PERCENT)
            for key, (capacity, unit) in per_instance.items():
                need = getattr(comp.resources, key) or 0
                if capacity <= 0 or need <= 0 or need > capacity:
                    continue  # a copy larger than an instance is FS006's finding
                others = sum(o.copies.min * (getattr(o.resources, key) or 0) for o in ep.inference_components if o is not comp)
                demand = (comp.copies.max + batch) * need + others
                available = ep.instances.max * capacity
                if demand <= available:
                    continue
                instances = math.ceil(demand / capacity)
                yield Hit(
                    f"{settings.rolling_path}.batch",
                    f"an update of {comp.name} at {comp.copies.max} copies starts {batch} more "
                    f"({fmt_num(need)} {unit} each) before it stops old ones: {fmt_num(demand)} {unit} with the other "
                    f"components at their minimum, but {ep.instances.max} x {ep.instance_type} have "
                    f"{fmt_num(available)}. At peak the update waits for a scale-out instances.max forbids, and "
                    "times out or rolls back.",
                    f"set instances.max: {instances} (room for one batch), or lower copies.max of {comp.name}",
                )
                break  # one finding per component: the first resource that runs out names the problem
