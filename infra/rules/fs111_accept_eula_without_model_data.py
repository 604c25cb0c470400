"""`accept_eula` needs `model_data`: the license is accepted on the model's S3 data source.

SageMaker takes the acceptance of a model's end-user license agreement as `ModelAccessConfig.AcceptEula`,
a member of the container's `ModelDataSource.S3DataSource` and nowhere else (botocore's
`S3ModelDataSource`; neither `ContainerDefinition` nor an inference component's container has one). A
workload without `model_data` has no S3 data source: nothing would carry the acceptance, and the container
would still fail to download the gated weights it was meant for. fastscale would silently drop the
setting, so it is refused instead.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_S3ModelDataSource.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      accept_eula: true
"""


@stack_rule(
    "FS111",
    "accept-eula-without-model-data",
    Severity.ERROR,
    "accept_eula is set on a workload without model_data, which is where SageMaker takes the acceptance.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _ep, workload in workloads(stack):
        if workload.accept_eula and not workload.model_data:
            yield Hit(
                f"{path}.accept_eula",
                "accept_eula: true has nothing to apply to: SageMaker accepts a model's license only on its S3 model "
                "data source (ModelAccessConfig), and this workload has no model_data.",
                "set model_data to the S3 URI of the licensed model artifact (e.g. the JumpStart model's hosting "
                "prefix), or remove accept_eula",
            )
