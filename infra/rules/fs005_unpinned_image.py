"""An image should be pinned to a version tag or a digest.

SageMaker resolves an image given by tag to a digest when it deploys a production variant, and reports both
(`DescribeEndpoint`'s `DeployedImages`: `SpecifiedImage`, `ResolvedImage`, `ResolutionTime`; SageMaker API
reference, DeployedImage). So with `latest` (or no tag, which means `latest`) the config does not say which
image runs: each deployment of a new endpoint configuration (every change fastscale rolls out, and a
rollback to an earlier config) resolves the tag again to whatever was pushed last, and the file cannot
reproduce an earlier deploy. A digest (`@sha256:...`) pins exactly; any tag other than `latest` is taken as
a deliberate version.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeployedImage.html.
"""

from __future__ import annotations

from collections.abc import Iterator

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
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:latest
"""


@rule("FS005", "unpinned-image", Severity.WARNING, "The image has no version tag or digest (or uses `latest`).")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _ep, workload in workloads(config):
        ref = parse_image(workload.image)
        if ref.pinned:
            continue
        what = "uses the tag 'latest'" if ref.tag else "has no tag, so it means 'latest'"
        base = workload.image.strip()
        if ref.tag:
            base = base[: -(len(ref.tag) + 1)]
        yield Hit(
            f"{path}.image",
            f"the image {what}: SageMaker resolves the tag to a digest each time it deploys a new endpoint "
            "configuration, so every change or rollback runs whatever was pushed last and the config does not say "
            "which image that is.",
            f"pin a version tag or a digest, e.g. {base}:1.4.2 or {base}@sha256:<digest>",
        )
