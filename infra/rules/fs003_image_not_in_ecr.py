"""Images outside Amazon ECR are not cached on new instances.

Container image caching (layer 3 of fast scale-out) applies only to images in Amazon ECR. An image from
Docker Hub, ECR Public (`public.ecr.aws`) or another registry is pulled in full by every new instance.
Inference components also document only ECR image paths.

AWS sources: https://aws.amazon.com/blogs/machine-learning/introducing-container-caching-in-amazon-sagemaker-ai-for-faster-model-scaling/, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentContainerSpecification.html.
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
      image: docker.io/vllm/vllm-openai:v0.9.2
"""


@rule("FS003", "image-not-in-ecr", Severity.WARNING, "The image is not in Amazon ECR, so it is not cached on new instances.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _ep, workload in workloads(config):
        ref = parse_image(workload.image)
        if ref.is_ecr:
            continue
        yield Hit(
            f"{path}.image",
            f"'{workload.image}' is not in a private Amazon ECR registry: container image caching only applies "
            "to ECR images, so every new instance pulls the whole image and scale-out is slower.",
            f"push the image to ECR in the endpoint's region and use it from there, e.g. "
            f"{regions.ecr_host('123456789012', regions.shown(config.region))}/{ref.repository.rsplit('/', 1)[-1]}"
            ":<version>",
        )
