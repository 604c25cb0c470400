"""The components cannot all be at their maximum copies at once: they share capped capacity.

Summed over the endpoint's components, `copies.max` x `resources.accelerators` is more than
`instances.max` x accelerators per instance (host memory, `memory_mb`, and CPUs, `cpus`, are summed the
same way), while each component alone still reaches its `copies.max` with the others at their
`copies.min`. The components then compete for the same instances: whichever scales out first takes the
room, and the others stop short of their maximum until it scales in. Sharing capped capacity
can be deliberate (components that are rarely busy at the same time), so it is a warning that shows the
arithmetic, not an error (fastscale's choice).

Where it can never fit the rule does not speak: a copy larger than one instance is FS006's finding, and
a component whose `copies.max` does not fit even with the others at their minimum is FS110's. The sum is
a necessary condition, not a sufficient one: copies do not split across instances, so packing can need
more.
"""

from __future__ import annotations

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
    instance_type: ml.g5.2xlarge
    instances: {initial: 1, min: 0, max: 2}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 8192}
        copies: {initial: 1, min: 0, max: 2}
      - name: mistral
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 8192}
        copies: {initial: 1, min: 0, max: 2}
"""


@stack_rule(
    "FS011",
    "max-copies-do-not-fit",
    Severity.WARNING,
    "The components' maximum copies together need more accelerators (or memory, CPUs) than the maximum instances have.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        comps = ep.components
        for res in shared_resources(ep):
            at_max = res.demand([c.copies.max for c in comps])
            if at_max <= res.available:
                continue
            alone = [res.demand([o.copies.max if o is c else o.copies.min for o in comps]) for c in comps]
            if any(d > res.available for d in alone):
                continue  # a component that can never reach its max is FS110's error
            parts = " + ".join(f"{c.key} {c.copies.max} x {fmt_num(r)}" for c, r in zip(comps, res.per_copy) if r)
            yield Hit(
                f"{ep.path}.instances.max",
                f"at their max copies the components need {parts} = {fmt_num(at_max)} {res.unit}, but "
                f"{res.instances} x {ep.instance_type} x {fmt_num(res.per_instance)} = {fmt_num(res.available)}: "
                "they share that capacity, so they cannot all be at copies.max at once (each one alone can), and "
                "a component that scales out late stops short of its copies.max until another scales in.",
                f"if that cap is deliberate, nothing to change; for every component at its max together, set "
                f"instances.max: {res.instances_for(at_max)}",
            )
