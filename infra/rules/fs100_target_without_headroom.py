"""The scaling target must sit below the concurrency at which a copy saturates.

Target tracking adds copies only once the metric (concurrent requests per copy) has stayed above the target
for some datapoints (three in fastscale's model, docs/scale-out-layers.md), and the new copies then take
minutes to serve. A target at or above
`serving.max_concurrency` (where time to first token starts to climb) means every copy is already saturated
before a scale-out is even detected: each spike queues for the whole cold start. A target below the capacity
is the headroom that absorbs the spike while new copies start.
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
      autoscaling: {target_concurrency: 8}
      serving: {max_concurrency: 8}
"""


@stack_rule(
    "FS100",
    "target-without-headroom",
    Severity.WARNING,
    "autoscaling.target_concurrency is at or above serving.max_concurrency: no headroom while copies start.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _ep, workload in autoscaled_workloads(stack):
        capacity = workload.serving.max_concurrency
        target = workload.scaling.target_concurrency
        if capacity is None or target < capacity:
            continue
        yield Hit(
            f"{path}.autoscaling.target_concurrency",
            f"target_concurrency {fmt_num(target)} is at or above serving.max_concurrency {fmt_num(capacity)}: copies "
            "are saturated before target tracking even detects a spike, so requests queue for the whole cold start.",
            f"set target_concurrency below the capacity, e.g. {fmt_num(round(capacity * 0.8, 2))} (80% of it), and "
            "check the cost of the extra copies with `fastscale simulate`",
        )
