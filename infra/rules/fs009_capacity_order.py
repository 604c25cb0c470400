"""Instance and copy counts must satisfy 0 <= min <= initial <= max, with max >= 1.

A minimum above the maximum is no range at all, and registering a scalable target changes the resource's
current capacity to a value inside [min, max] (Application Auto Scaling API reference,
RegisterScalableTarget), so an initial count outside the range would not be what the deploy leaves running. A maximum of 0 means nothing could ever serve.

AWS sources: https://docs.aws.amazon.com/autoscaling/application/APIReference/API_RegisterScalableTarget.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import Count, ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    instances: {initial: 5, min: 1, max: 4}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


def _check_triple(path: str, what: str, cap: Count) -> Iterator[Hit]:
    if cap.min < 0:
        yield Hit(f"{path}.min", f"{what} min is {cap.min}: counts cannot be negative.", "set min: 0 or more")
    if cap.max < 1:
        yield Hit(
            f"{path}.max",
            f"{what} max is {cap.max}: with a maximum below 1 nothing could ever serve requests.",
            f"set max: {max(1, cap.initial, cap.min)} or more",
        )
    if cap.min > cap.max:
        yield Hit(
            f"{path}.min",
            f"{what} min ({cap.min}) is above max ({cap.max}): auto scaling rejects a range whose minimum exceeds "
            "its maximum.",
            f"set min to at most {cap.max}, or raise max to {cap.min}",
        )
    elif not (cap.min <= cap.initial <= cap.max):
        bound = "min" if cap.initial < cap.min else "max"
        yield Hit(
            f"{path}.initial",
            f"{what} initial ({cap.initial}) is outside min..max ({cap.min}..{cap.max}): auto scaling would move it "
            f"to {bound} right after the deploy, so the file does not describe what runs.",
            f"set initial between {cap.min} and {cap.max}",
        )


@stack_rule("FS009", "capacity-out-of-order", Severity.ERROR, "Instance or copy counts do not satisfy min <= initial <= max.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        yield from _check_triple(f"{ep.path}.instances", "instances", ep.instances)
        for c in ep.components:
            yield from _check_triple(f"{ep.path}.{c.path}.copies", "copies", c.copies)
