"""Cooldowns cannot be negative.

`scale_in_cooldown` and `scale_out_cooldown` (target tracking) and `scale_from_zero.cooldown` (the step
policy) are seconds that Application Auto Scaling waits between scaling activities. Checked where the
policy is created: target tracking when auto scaling is enabled, the step policy when the component can
scale to zero.

AWS sources: https://docs.aws.amazon.com/autoscaling/application/APIReference/API_TargetTrackingScalingPolicyConfiguration.html, https://docs.aws.amazon.com/autoscaling/application/userguide/target-tracking-scaling-policy-overview.html#target-tracking-cooldown.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import autoscaled_workloads, scale_from_zero_components

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      autoscaling: {scale_in_cooldown: -60}
"""


def _hit(path: str, value: int) -> Hit:
    return Hit(
        path,
        f"cooldown is {value} s: a cooldown is a wait between scaling activities and cannot be negative; "
        "Application Auto Scaling would reject the policy.",
        "set it to 0 or more (0 reacts at once; 300 is the usual scale-in cooldown)",
    )


@stack_rule("FS024", "negative-cooldown", Severity.ERROR, "A scale-in, scale-out or scale-from-zero cooldown is negative.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _ep, workload in autoscaled_workloads(stack):
        s = workload.scaling
        for key, value in (("scale_in_cooldown", s.scale_in_cooldown), ("scale_out_cooldown", s.scale_out_cooldown)):
            if value < 0:
                yield _hit(f"{path}.autoscaling.{key}", value)
    for path, _c, zero in scale_from_zero_components(stack):
        if zero.cooldown < 0:
            yield _hit(f"{path}.autoscaling.scale_from_zero.cooldown", zero.cooldown)
