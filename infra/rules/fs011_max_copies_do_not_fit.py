"""Every component at its maximum copies must fit on the endpoint's maximum instances.

Summed over the endpoint's components, `copies.max` x `resources.accelerators` must not exceed
`instances.max` x accelerators per instance. Otherwise auto scaling asks for copies that no instance can
host: they stay pending, requests keep queueing, and the scale-out the file promises never happens.
Host memory (`memory_mb`) and CPUs (`cpus`) are summed the same way. The sum is a necessary condition,
not a sufficient one: copies do not split across instances, so packing can need more. A resource for
which one copy already exceeds one instance is left to FS006, which names the cause.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from fastscale.infra import catalog
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints, fmt_num

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.12xlarge
    instances: {initial: 1, min: 1, max: 2}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 2, memory_mb: 32768}
        copies: {initial: 1, min: 1, max: 6}
"""


@rule(
    "FS011",
    "max-copies-do-not-fit",
    Severity.ERROR,
    "The components' maximum copies need more accelerators (or memory, CPUs) than the maximum instances have.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        if not ep.inference_components or ep.instances.max < 1:
            continue  # FS009 reports a max below 1
        spec = catalog.get(ep.instance_type)
        if spec is None:
            continue  # unknown or CPU type: nothing reliable to sum against
        per_instance = {
            "accelerators": (spec.accelerator_count, "accelerator devices"),
            "memory_mb": (int(spec.memory_gib * 1024), "MB of host memory"),
            "cpus": (spec.vcpus, "vCPUs"),
        }
        for key, (capacity, unit) in per_instance.items():
            requests = [getattr(c.resources, key) or 0 for c in ep.inference_components]
            if capacity <= 0 or any(r > capacity for r in requests):
                continue  # a copy that exceeds one instance is FS006's: do not report the same cause twice
            demand = sum(c.copies.max * r for c, r in zip(ep.inference_components, requests))
            available = ep.instances.max * capacity
            if demand <= available:
                continue
            parts = ", ".join(
                f"{c.name} {c.copies.max} x {fmt_num(getattr(c.resources, key))}"
                for c in ep.inference_components
                if getattr(c.resources, key)
            )
            needed_instances = math.ceil(demand / capacity)
            yield Hit(
                f"{path}.instances.max",
                f"at their max copies the components need {fmt_num(demand)} {unit} ({parts}) but "
                f"{ep.instances.max} x {ep.instance_type} have {fmt_num(available)}: copies beyond that can never "
                "be placed, so scale-out stops short of copies.max.",
                f"set instances.max: {needed_instances} or more, or lower copies.max",
            )
