"""The target-tracking target must be within what Application Auto Scaling accepts.

`TargetValue` is a double, but the API refuses values outside -2^360..2^360. A target that large also
means the policy could never scale out. Values at or below 0 are FS023's.

AWS sources: https://docs.aws.amazon.com/autoscaling/application/APIReference/API_TargetTrackingScalingPolicyConfiguration.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.limits import MAX_TARGET_VALUE
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import fmt_num
from fastscale.infra.rules._stack import autoscaled_workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      autoscaling: {target_concurrency: 1.0e+200}
"""


@stack_rule(
    "FS062",
    "target-concurrency-too-large",
    Severity.ERROR,
    "autoscaling.target_concurrency is above what Application Auto Scaling accepts.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _ep, workload in autoscaled_workloads(stack):
        target = workload.scaling.target_concurrency
        if target <= MAX_TARGET_VALUE:
            continue
        yield Hit(
            f"{path}.autoscaling.target_concurrency",
            f"target_concurrency is {fmt_num(target)}: Application Auto Scaling refuses target values above 2^360 "
            f"({MAX_TARGET_VALUE:.3g}), and no endpoint ever reaches such a concurrency.",
            "set target_concurrency to the concurrent requests one copy serves well, e.g. 4 for an 8B model on one L4",
        )
