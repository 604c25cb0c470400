"""The target-tracking target must be a positive number of concurrent requests.

`target_concurrency` is the target value of the target-tracking policy: concurrent requests per copy
(components) or per model (single-model endpoints). Zero or a negative value can never be reached, so
auto scaling would run at maximum capacity or be rejected. Only checked where auto scaling is enabled.

AWS sources: https://docs.aws.amazon.com/autoscaling/application/APIReference/API_TargetTrackingScalingPolicyConfiguration.html.
"""

from __future__ import annotations

from collections.abc import Iterator

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
      autoscaling: {target_concurrency: 0}
"""


@stack_rule("FS023", "non-positive-target-concurrency", Severity.ERROR, "autoscaling.target_concurrency is 0 or negative.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _ep, workload in autoscaled_workloads(stack):
        target = workload.scaling.target_concurrency
        if target > 0:
            continue
        yield Hit(
            f"{path}.autoscaling.target_concurrency",
            f"target_concurrency is {fmt_num(target)}: target tracking keeps concurrent requests per copy near this "
            "value, and a target of 0 or less can never be met, so the policy would pin capacity at max.",
            "set target_concurrency to the concurrent requests one copy serves well, e.g. 4 for an 8B model on one L4",
        )
