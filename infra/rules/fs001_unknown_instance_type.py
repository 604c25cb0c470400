"""The instance type must be one SageMaker real-time inference offers.

A typo (`ml.g6.2xlarg`) or a training-only type would only surface when Terraform asks SageMaker to
create the endpoint configuration, minutes into a deploy. The hint lists the closest known types.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarg
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@rule("FS001", "unknown-instance-type", Severity.ERROR, "The instance type is not a SageMaker inference instance type.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        if catalog.is_known_instance_type(ep.instance_type):
            continue
        suggestions = catalog.suggest(ep.instance_type, n=3)
        hint = (
            f"did you mean {' or '.join(suggestions)}?"
            if suggestions
            else "use a SageMaker hosting instance type such as ml.g6.2xlarge"
        )
        yield Hit(
            f"{path}.instance_type",
            f"'{ep.instance_type}' is not a SageMaker real-time inference instance type: "
            "creating the endpoint configuration would fail during the deploy.",
            hint,
        )
