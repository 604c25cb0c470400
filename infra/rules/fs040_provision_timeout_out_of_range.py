"""`capacity.provision_timeout` must be between 300 and 3600 seconds.

It becomes the variant's VariantInstanceProvisionTimeoutInSeconds: how long SageMaker keeps trying to
provision instances, across all pools, before the operation fails. The API accepts 300 to 3600.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra import capacity
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints

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


@rule("FS040", "provision-timeout-out-of-range", Severity.ERROR, "capacity.provision_timeout is outside 300-3600 s.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    lo, hi = capacity.PROVISION_TIMEOUT_MIN, capacity.PROVISION_TIMEOUT_MAX
    for path, ep in endpoints(config):
        value = ep.capacity.provision_timeout
        if value is None or lo <= value <= hi:
            continue
        yield Hit(
            f"{path}.capacity.provision_timeout",
            f"provision_timeout is {value} s: SageMaker accepts {lo} to {hi} s for "
            "VariantInstanceProvisionTimeoutInSeconds, so creating the endpoint configuration would fail.",
            f"set provision_timeout: {min(max(value, lo), hi)}",
        )
