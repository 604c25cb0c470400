"""A component that may scale to zero copies needs its auto scaling enabled.

Coming back from zero copies relies on the step-scaling policy driven by the NoCapacityInvocationFailures
alarm, and both belong to the component's auto scaling. With `autoscaling.enabled: false` fastscale
creates neither, so once the component is at zero nothing ever adds a copy back and every request fails.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import components

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
        copies: {initial: 1, min: 0, max: 2}
        autoscaling: {enabled: false}
"""


@stack_rule(
    "FS014",
    "scale-to-zero-without-autoscaling",
    Severity.ERROR,
    "copies.min is 0 but auto scaling is disabled, so the component could never come back from zero.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _ep, c in components(stack):
        if c.copies.min == 0 and not c.scaling.enabled:
            yield Hit(
                f"{path}.autoscaling.enabled",
                "scale to zero without the step policy being possible: copies.min is 0 but autoscaling is disabled, "
                "so no scale-from-zero alarm and step policy are created and nothing adds a copy back once the "
                "component reaches zero.",
                "set autoscaling.enabled: true, or set copies.min: 1",
            )
