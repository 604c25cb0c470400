"""Container image caching only applies to accelerator instance types.

SageMaker caches the container image of an endpoint on new instances only for accelerator (GPU,
Inferentia, Trainium) instance types. On a CPU type every new instance pulls the full image from ECR,
which for a multi-GB LLM serving image is the largest part of scale-out time (333 s of 525 s in AWS's
Qwen3-8B measurement). The endpoint works; it just scales out slower.

AWS sources: https://aws.amazon.com/blogs/machine-learning/introducing-container-caching-in-amazon-sagemaker-ai-for-faster-model-scaling/.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: embed
    instance_type: ml.c7i.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/embedder:1.0
"""


@stack_rule(
    "FS002",
    "not-accelerator-instance-type",
    Severity.WARNING,
    "The instance type has no accelerator, so container image caching does not apply.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        t = ep.instance_type
        # Unknown types are FS001's to report; only known CPU types land here.
        if not catalog.is_known_instance_type(t) or catalog.is_accelerator(t):
            continue
        yield Hit(
            f"{ep.path}.instance_type",
            f"'{t}' has no GPU, Inferentia or Trainium accelerator: SageMaker's container image caching only "
            "applies to accelerator instance types, so every new instance pulls the whole image from ECR "
            "and scale-out is slower.",
            "for LLM serving use an accelerator type such as ml.g6.2xlarge (1 x NVIDIA L4) or ml.inf2.xlarge; "
            "keep the CPU type only for small models whose image pulls quickly",
        )
