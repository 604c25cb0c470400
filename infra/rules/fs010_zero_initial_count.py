"""Deploy-time counts must be at least 1: `instances.initial` and every component's `copies.initial`.

The API refuses an endpoint variant with an initial instance count of 0 (ProductionVariant's
InitialInstanceCount has a minimum of 1). An inference component's CopyCount may be 0 in the API, but
fastscale starts every component with at least one copy (fastscale's choice: a component created with no
copy serves nothing until a request fails and scale-from-zero adds one). Scale to zero is reached
afterwards, by auto scaling down to `min: 0`.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentRuntimeConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.12xlarge
    instances: {initial: 1, min: 0, max: 2}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
        copies: {initial: 0, min: 0, max: 2}
"""


@stack_rule("FS010", "zero-initial-count", Severity.ERROR, "instances.initial or copies.initial is below 1; the API refuses 0 at creation.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        if ep.instances.initial < 1:
            yield Hit(
                f"{ep.path}.instances.initial",
                f"instances initial is {ep.instances.initial}: SageMaker creates an endpoint with at least one "
                "instance (InitialInstanceCount >= 1).",
                "set initial: 1; use min: 0 to let an inference-component endpoint scale to zero afterwards",
            )
        for c in ep.components:
            if c.copies.initial < 1:
                yield Hit(
                    f"{ep.path}.{c.path}.copies.initial",
                    f"copies initial is {c.copies.initial}: the API refuses to create an inference component with "
                    "0 copies.",
                    "set initial: 1; with min: 0 auto scaling takes it to zero when idle",
                )
