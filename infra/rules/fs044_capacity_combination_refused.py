"""Capacity settings the API refuses together.

- `scale_in` on a single-model endpoint: the scale-in policy belongs to managed instance scaling, which
  SageMaker supports only on endpoints of inference components (the ones that can scale to zero); a
  single-model endpoint scales its instances with Application Auto Scaling instead.
- `reservation_arn` with `capacity.fallback`: with capacity-reservations-only SageMaker launches instances
  only into the one reservation, whose instance type must be the variant's; fallback types could never
  launch, and the variant has no single InstanceType to match the reservation.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantCapacityReservationConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    scale_in: {strategy: IDLE_RELEASE, cooldown_minutes: 5}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule(
    "FS044",
    "capacity-combination-refused",
    Severity.ERROR,
    "scale_in on a single-model endpoint, or a capacity reservation together with fallback pools.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        if ep.scale_in is not None and ep.model is not None:
            yield Hit(
                f"{ep.path}.scale_in",
                "a scale-in policy is part of managed instance scaling, which SageMaker supports only on endpoints "
                "of inference components: the endpoint configuration would be refused.",
                "remove scale_in (target tracking scales this endpoint's instances), or host the model as an "
                "inference component to scale to zero",
            )
        if ep.reservation_arn and ep.has_pools:
            yield Hit(
                f"{ep.path}.capacity.reservation_arn",
                "instances of a capacity-reservations-only variant come only from the one reservation, whose "
                "instance type must be the variant's: the fallback pools could never launch.",
                "use either the reservation (no fallback) or fallback pools (no reservation)",
            )
