"""Copy placement applies to inference components, with an AZ imbalance of 0 to 100.

`capacity.placement` becomes each inference component's SchedulingConfig (PlacementStrategy and
AvailabilityZoneBalance with EnforcementMode PERMISSIVE). `max_imbalance` is MaxImbalance, which the API
accepts from 0 to 100. A single-model endpoint has no copies to place, so the setting would do nothing.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentSchedulingConfig.html.
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
  - name: shared
    instance_type: ml.g6.12xlarge
    capacity:
      placement: {strategy: SPREAD, az_balance: {max_imbalance: 200}}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
"""


@stack_rule(
    "FS043",
    "invalid-placement",
    Severity.ERROR,
    "capacity.placement is set on a single-model endpoint, or its max_imbalance is outside 0-100.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    lo, hi = capacity.MAX_IMBALANCE_MIN, capacity.MAX_IMBALANCE_MAX
    for ep in stack.endpoints:
        placement = ep.placement
        if placement is None:
            continue
        if ep.model is not None:
            yield Hit(
                f"{ep.path}.capacity.placement",
                "placement decides where copies of inference components go; a single-model endpoint has none, so "
                "the setting would do nothing.",
                "remove capacity.placement, or host the model as an inference component",
            )
            continue
        imbalance = placement.max_imbalance
        if imbalance is not None and not lo <= imbalance <= hi:
            yield Hit(
                f"{ep.path}.capacity.placement.az_balance.max_imbalance",
                f"max_imbalance is {imbalance}: SageMaker accepts {lo} to {hi} for "
                "AvailabilityZoneBalance.MaxImbalance, so creating the components would fail.",
                f"set max_imbalance: {min(max(imbalance, lo), hi)}",
            )
