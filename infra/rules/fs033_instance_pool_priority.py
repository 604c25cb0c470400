"""Instance pool priorities must be 1 to 5 and unique, and each instance type may appear once.

SageMaker provisions pools in priority order (1 first). The endpoint's own `instance_type` is priority 1;
a fallback without `priority` takes its position plus 2. Two pools with the same priority leave the order
undefined, a priority outside 1-5 is refused by the API, and the same instance type twice is a pool that
can never add capacity the first one could not.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InstancePool.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model import capacity
from fastscale.infra.model.resolved import ResolvedPool, ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.12xlarge
    capacity:
      fallback:
        - {instance_type: ml.g5.12xlarge, priority: 2}
        - {instance_type: ml.g6e.12xlarge, priority: 2}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule(
    "FS033",
    "instance-pool-priority",
    Severity.ERROR,
    "An instance pool priority is outside 1-5 or used twice, or an instance type appears in two pools.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    lo, hi = capacity.PRIORITY_MIN, capacity.PRIORITY_MAX
    for ep in stack.endpoints:
        if not ep.has_pools:
            continue
        by_priority: dict[int, ResolvedPool] = {}
        by_type: dict[str, ResolvedPool] = {}
        for pool in ep.pools:
            where = f"{ep.path}.{pool.path}"
            if not lo <= pool.priority <= hi:
                if not pool.priority_set:
                    continue  # a default past 5 means more than five pools: FS032's
                yield Hit(
                    f"{where}.priority",
                    f"priority is {pool.priority}: InstancePool priorities are {lo} (tried first) to {hi}, so the "
                    "endpoint configuration would be refused.",
                    f"set a priority from {lo + 1} to {hi} (priority {lo} is the endpoint's instance_type), or leave it out",
                )
            elif pool.priority in by_priority:
                other = by_priority[pool.priority]
                yield Hit(
                    f"{where}.priority" if pool.index else f"{ep.path}.instance_type",
                    f"priority {pool.priority} is also the priority of {other.instance_type} ({other.path}): with two "
                    "pools at one priority the order SageMaker tries them in is not defined.",
                    "give every pool its own priority, or leave `priority` out to use the list order",
                )
            else:
                by_priority[pool.priority] = pool
            if pool.instance_type in by_type:
                yield Hit(
                    f"{where}.instance_type",
                    f"{pool.instance_type} is already a pool ({by_type[pool.instance_type].path}): a second pool of the "
                    "same type never finds capacity the first one did not.",
                    "remove this fallback or pick another instance type",
                )
            else:
                by_type[pool.instance_type] = pool
