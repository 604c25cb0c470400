"""`capacity.reservation_arn` must be a SageMaker ARN in the stack's region.

The ARN becomes the variant's CapacityReservationConfig.MlReservationArn, which the API requires to match
`arn:aws[-partition]:sagemaker:<region>:<12-digit account>:<resource type>/<name>` (e.g. a training plan
bought for endpoints). A reservation holds capacity in one region only: one from another region can
never serve this endpoint.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantCapacityReservationConfig.html.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fastscale.infra.base.regions import partition_of, shown
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.p5.48xlarge
    capacity: {reservation_arn: "arn:aws:sagemaker:us-west-2:123456789012:training-plan/p5-for-inference"}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

#: `MlReservationArn`'s pattern in the SageMaker API model, with its parts captured; length 20-258.
RESERVATION_ARN_RE = re.compile(
    r"arn:aws[a-z\-]*:sagemaker:(?P<region>[a-z0-9\-]*):(?P<account>[0-9]{12}):(?P<kind>[a-z0-9\-]{1,14})/(?P<name>.*)"
)
ARN_MIN_LEN, ARN_MAX_LEN = 20, 258


@rule(
    "FS041",
    "invalid-reservation-arn",
    Severity.ERROR,
    "capacity.reservation_arn is not a well-formed SageMaker ARN in the stack's region.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        arn = ep.capacity.reservation_arn
        if arn is None:
            continue
        where = f"{path}.capacity.reservation_arn"
        m = RESERVATION_ARN_RE.fullmatch(arn)
        if m is None or not ARN_MIN_LEN <= len(arn) <= ARN_MAX_LEN:
            yield Hit(
                where,
                f"'{arn}' is not an ML reservation ARN: SageMaker expects arn:aws:sagemaker:<region>:<account>:"
                "<type>/<name> (20-258 characters), so the endpoint configuration would be refused.",
                f"copy the ARN of the reservation (e.g. arn:{partition_of(config.region)}:sagemaker:{shown(config.region)}:"
                "123456789012:training-plan/<name>)",
            )
        elif m["region"] != config.region:
            yield Hit(
                where,
                f"the reservation is in {m['region'] or 'no region'} but the stack is in {config.region}: a capacity "
                "reservation only provides instances in its own region.",
                f"use a reservation made in {config.region}, or remove reservation_arn",
            )
