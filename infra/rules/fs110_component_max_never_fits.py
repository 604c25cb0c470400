"""A component's maximum copies must fit on the maximum instances beside the other components' minimum.

The other components never go below their `copies.min`, so what is left for a component at most is
`instances.max` x accelerators per instance minus their `copies.min` x accelerators (host memory,
`memory_mb`, and CPUs, `cpus`, the same way). When `copies.max` x `resources.accelerators` of the
component is more than that, its maximum can never be reached, whatever the traffic: auto scaling asks
for copies that no instance can host, they stay pending, requests keep queueing, and the scale-out the
file promises never happens.

This is the case of FS011 that can never fit, and an error; a shared cap that each component alone can
reach is FS011's warning. A copy larger than one instance is FS006's finding.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import fmt_num
from fastscale.infra.rules._stack import shared_resources

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


@stack_rule(
    "FS110",
    "component-max-never-fits",
    Severity.ERROR,
    "A component's maximum copies cannot fit on the maximum instances even with the other components at their minimum.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        comps = ep.components
        resources = shared_resources(ep)
        for j, comp in enumerate(comps):
            for res in resources:
                need = res.per_copy[j]
                if need <= 0:
                    continue
                others = res.demand([0 if o is comp else o.copies.min for o in comps])
                demand = comp.copies.max * need + others
                if demand <= res.available:
                    continue
                beside = f" beside the others' minimum {fmt_num(others)}" if others else ""
                reachable = max(0, math.floor((res.available - others) / need))
                yield Hit(
                    f"{ep.path}.{comp.path}.copies.max",
                    f"{comp.key} at {comp.copies.max} copies needs {comp.copies.max} x {fmt_num(need)} {res.unit}"
                    f"{beside} = {fmt_num(demand)}, but {res.instances} x {ep.instance_type} have "
                    f"{fmt_num(res.available)}: copies beyond {reachable} can never be placed, so scale-out always "
                    "stops short of copies.max.",
                    f"set instances.max: {res.instances_for(demand)} or more, or copies.max: {reachable} for {comp.key}",
                )
                break  # one finding per component: the first resource that runs out names the problem
