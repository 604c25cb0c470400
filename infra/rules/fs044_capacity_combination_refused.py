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

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints

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


@rule(
    "FS044",
    "capacity-combination-refused",
    Severity.ERROR,
    "scale_in on a single-model endpoint, or a capacity reservation together with fallback pools.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        if ep.scale_in is not None and ep.model is not None:
            yield Hit(
                f"{path}.scale_in",
                "a scale-in policy is part of managed instance scaling, which SageMaker supports only on endpoints "
                "of inference components: the endpoint configuration would be refused.",
                "remove scale_in (target tracking scales this endpoint's instances), or host the model as an "
                "inference component to scale to zero",
            )
        if ep.capacity.reservation_arn and ep.capacity.fallback:
            yield Hit(
                f"{path}.capacity.reservation_arn",
                "instances of a capacity-reservations-only variant come only from the one reservation, whose "
                "instance type must be the variant's: the fallback pools could never launch.",
                "use either the reservation (no fallback) or fallback pools (no reservation)",
            )
