"""`capacity.provision_timeout` must be between 300 and 3600 seconds.

It becomes the variant's VariantInstanceProvisionTimeoutInSeconds: how long SageMaker keeps trying to
provision instances, across all pools, before the operation fails. The API accepts 300 to 3600.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html, https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html.
"""

from __future__ import annotations

from fastscale.infra.model import capacity
from fastscale.infra.rules import Severity
from fastscale.infra.rules._bounds import Bound, Cases, bounded_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.12xlarge
    capacity: {provision_timeout: 120}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

#: The EXAMPLE at and past each limit (tests/rules/test_bounded_rules.py).
CASES = (
    Cases("provision_timeout: 120", "provision_timeout: {}", passing=(300, 301, 3599, 3600),
          failing={299: "set provision_timeout: 300", 3601: "set provision_timeout: 3600", 0: "set provision_timeout: 300"}),
)

check = bounded_rule(
    "FS040", "provision-timeout-out-of-range", Severity.ERROR, "capacity.provision_timeout is outside 300-3600 s.",
    module=__name__,
    stack_holders=lambda stack: ((f"{ep.path}.capacity", ep) for ep in stack.endpoints),
    bounds=[Bound("provision_timeout", "VariantInstanceProvisionTimeoutInSeconds", capacity.PROVISION_TIMEOUT_MIN,
                  capacity.PROVISION_TIMEOUT_MAX, "creating the endpoint configuration would fail", unit="s")],
)
