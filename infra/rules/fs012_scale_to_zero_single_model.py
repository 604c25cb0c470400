"""`instances.min: 0` is only possible on inference-component endpoints.

Scale to zero works through managed instance scaling (`MinInstanceCount` 0), which SageMaker supports
only for endpoints that host inference components. A single-model endpoint's variant cannot go below
one instance: the deploy would fail when the scalable target or endpoint configuration is created.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    instances: {initial: 1, min: 0, max: 2}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule(
    "FS012",
    "scale-to-zero-single-model",
    Severity.ERROR,
    "instances.min is 0 on a single-model endpoint; only inference-component endpoints scale to zero.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        if ep.model is not None and ep.instances.min == 0:
            yield Hit(
                f"{ep.path}.instances.min",
                "instances min is 0 on a single-model endpoint: SageMaker scales to zero only endpoints whose "
                "models are inference components (managed instance scaling), so the deploy would fail.",
                "set instances.min: 1, or move the model into inference_components (with resources and copies "
                "min: 0) to scale to zero",
            )
