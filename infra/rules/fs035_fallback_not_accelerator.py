"""Every instance pool should be an accelerator type, so container image caching applies on it too.

Container image caching only applies to GPU, Inferentia and Trainium instance types. A CPU fallback
pool pulls the whole image on every new instance: the capacity arrives, but minutes later than on the
other pools, exactly when the primary type had none to give.

AWS sources: https://aws.amazon.com/blogs/machine-learning/introducing-container-caching-in-amazon-sagemaker-ai-for-faster-model-scaling/.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import fallback_pools

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.12xlarge
    capacity:
      fallback:
        - {instance_type: ml.c7i.8xlarge}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule(
    "FS035",
    "fallback-not-accelerator",
    Severity.WARNING,
    "A fallback instance type has no accelerator, so container image caching does not apply on it.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _ep, pool in fallback_pools(stack):
        t = pool.instance_type
        if not catalog.is_known_instance_type(t) or catalog.is_accelerator(t):
            continue  # unknown types are FS034's
        yield Hit(
            f"{path}.instance_type",
            f"'{t}' has no GPU, Inferentia or Trainium accelerator: container image caching does not apply, so each "
            "instance of this fallback pool pulls the whole image and scale-out on it is slower.",
            "fall back to another accelerator type with enough accelerator memory, e.g. the previous GPU generation",
        )
