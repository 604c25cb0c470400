"""Some regions have rejected `MinInstanceCount` 0.

Managed instance scaling with a minimum of 0 instances was accepted in us-east-1 and rejected in
eu-west-3. The region list is what has been observed, not an AWS statement; the deploy may fail there.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: eu-west-3
endpoints:
  - name: shared
    instance_type: ml.g6.12xlarge
    instances: {initial: 1, min: 0, max: 2}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.eu-west-3.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
        copies: {initial: 1, min: 0, max: 2}
"""


#: Regions where CreateEndpointConfig has been seen refusing MinInstanceCount 0.
REJECTS_MIN_INSTANCE_COUNT_ZERO = frozenset({"eu-west-3"})


@stack_rule(
    "FS015",
    "scale-to-zero-region",
    Severity.WARNING,
    "The region has been seen rejecting MinInstanceCount 0 (scale to zero).",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    if stack.region not in REJECTS_MIN_INSTANCE_COUNT_ZERO:
        return
    for ep in stack.endpoints:
        if ep.components and ep.instances.min == 0:
            yield Hit(
                f"{ep.path}.instances.min",
                f"instances.min is 0 in {stack.region}, where SageMaker has been seen rejecting MinInstanceCount 0: "
                "the deploy may fail when the endpoint configuration is created.",
                "deploy to a region where scale to zero is accepted (e.g. us-east-1), or set instances.min: 1",
            )
