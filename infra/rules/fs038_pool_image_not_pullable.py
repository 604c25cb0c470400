"""The image each pool runs must be pullable in the endpoint's region.

A fallback pool may override the image (`capacity.fallback[].model.image` or `.components.<name>.image`).
SageMaker pulls images only from Amazon ECR in the endpoint's own region (FS004): an override image in
another region's registry makes the pool's model fail to create. An override outside ECR is pulled in
full by every instance of the pool (no image caching), so it is reported too.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ContainerDefinition.html, https://aws.amazon.com/blogs/machine-learning/introducing-container-caching-in-amazon-sagemaker-ai-for-faster-model-scaling/.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.artifacts import parse_image
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
        - instance_type: ml.g5.12xlarge
          model: {image: 123456789012.dkr.ecr.eu-west-1.amazonaws.com/llm:1.0-a10g}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@rule(
    "FS038",
    "pool-image-not-pullable",
    Severity.ERROR,
    "A fallback pool's override image is not in Amazon ECR in the endpoint's region.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _ep, pool in fallback_pools(config):
        fb = pool.fallback
        if fb is None:
            continue  # fallback_pools yields fallbacks only
        overrides = [("model", fb.model)] + [(f"components.{name}", o) for name, o in fb.components.items()]
        for key, override in overrides:
            if override is None or override.image is None:
                continue
            ref = parse_image(override.image)
            if ref.is_ecr and ref.ecr_region == config.region:
                continue
            where = f"ECR in {ref.ecr_region}" if ref.is_ecr else "a registry outside Amazon ECR"
            yield Hit(
                f"{path}.{key}.image",
                f"the image for {pool.instance_type} is in {where}, but the endpoint is in {config.region}: SageMaker "
                "pulls from ECR in the endpoint's region only (and caches only ECR images), so this pool would fail "
                "or start slowly.",
                f"push the image to ECR in {config.region} and use it from there",
            )
