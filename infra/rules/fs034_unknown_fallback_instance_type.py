"""Every fallback instance type must be one SageMaker real-time inference offers.

The same check as FS001, for `capacity.fallback[].instance_type`: an unknown type makes
CreateEndpointConfig fail during the deploy.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InstancePool.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import fallback_pools

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.12xlarge
    capacity:
      fallback:
        - {instance_type: ml.g5.12xlarg}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@rule("FS034", "unknown-fallback-instance-type", Severity.ERROR, "A fallback instance type is not a SageMaker inference instance type.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _ep, pool in fallback_pools(config):
        if catalog.is_known_instance_type(pool.instance_type):
            continue
        suggestions = catalog.suggest(pool.instance_type, n=3)
        yield Hit(
            f"{path}.instance_type",
            f"'{pool.instance_type}' is not a SageMaker real-time inference instance type: creating the endpoint "
            "configuration would fail during the deploy.",
            f"did you mean {' or '.join(suggestions)}?" if suggestions else "use an accelerator type such as ml.g5.12xlarge",
        )
