"""An ECR image must be in the same region as the endpoint.

SageMaker pulls the container image from ECR in the region where the model and endpoint are created; an
image in another region's registry makes model or inference-component creation fail (API reference,
ContainerDefinition.Image). Only the region is checked: an image of another account, such as AWS's Deep
Learning Containers, passes.
The hint names the registry host in the endpoint's region (China's hosts end in .amazonaws.com.cn); while
the project's region is not a real SageMaker region (FS075) there is no right host to suggest, and this
rule stays silent.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ContainerDefinition.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import regions
from fastscale.infra.base.artifacts import parse_image
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.eu-west-1.amazonaws.com/llm:1.0
"""


@rule("FS004", "ecr-region-mismatch", Severity.ERROR, "The ECR image is in a different region than the endpoint.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    if not regions.is_sagemaker_region(config.region):
        return  # FS075 reports the region; no host in a region that does not exist is suggested
    for path, _ep, workload in workloads(config):
        ref = parse_image(workload.image)
        if not ref.is_ecr or ref.ecr_region == config.region or ref.ecr_account is None:
            continue
        pinned = f"@{ref.digest}" if ref.digest else f":{ref.tag or 'latest'}"
        fixed = f"{regions.ecr_host(ref.ecr_account, config.region)}/{ref.repository}{pinned}"
        yield Hit(
            f"{path}.image",
            f"the image is in ECR in {ref.ecr_region} but the endpoint is in {config.region}: SageMaker only pulls "
            "images from ECR in the endpoint's own region, so creating the model would fail.",
            f"replicate the repository to {config.region} (ECR replication or a push) and use {fixed}",
        )
