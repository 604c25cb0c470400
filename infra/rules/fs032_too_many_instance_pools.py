"""An endpoint can have at most five instance pools.

`ProductionVariant.InstancePools` holds at most five entries: the endpoint's own `instance_type` is the
first pool and every `capacity.fallback` entry is one more. A sixth makes CreateEndpointConfig fail.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model import capacity
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.12xlarge
    capacity:
      fallback:
        - {instance_type: ml.g5.12xlarge}
        - {instance_type: ml.g6e.12xlarge}
        - {instance_type: ml.g6.24xlarge}
        - {instance_type: ml.g5.24xlarge}
        - {instance_type: ml.g6e.24xlarge}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule("FS032", "too-many-instance-pools", Severity.ERROR, "More than five instance pools (instance_type plus capacity.fallback).")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        n = len(ep.pools)
        if n <= capacity.MAX_POOLS:
            continue
        yield Hit(
            f"{ep.path}.capacity.fallback",
            f"{n} instance pools (instance_type and {n - 1} fallbacks): SageMaker accepts at most "
            f"{capacity.MAX_POOLS} InstancePools per variant, so creating the endpoint configuration would fail.",
            f"keep at most {capacity.MAX_POOLS - 1} fallback instance types, the ones most likely to have capacity",
        )
