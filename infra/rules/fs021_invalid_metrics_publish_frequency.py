"""`metrics_publish_frequency` must be one of the values the API accepts.

It becomes MetricsConfig.MetricPublishFrequencyInSeconds of the endpoint configuration, which accepts
10, 30, 60, 120, 180, 240 or 300 seconds.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_MetricsConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import VALID_FREQUENCIES

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    metrics_publish_frequency: 15
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule(
    "FS021",
    "invalid-metrics-publish-frequency",
    Severity.ERROR,
    "metrics_publish_frequency is not 10, 30, 60, 120, 180, 240 or 300.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        f = ep.metrics.publish_frequency
        if f is None or f in VALID_FREQUENCIES:
            continue
        closest = min(VALID_FREQUENCIES, key=lambda v: (abs(v - f), v))
        yield Hit(
            f"{ep.path}.metrics_publish_frequency",
            f"metrics_publish_frequency is {f}: SageMaker accepts only "
            f"{', '.join(map(str, VALID_FREQUENCIES))} seconds, so creating the endpoint configuration would fail.",
            "set metrics_publish_frequency: 10 for the fastest scaling signals"
            + (f" (closest valid value: {closest})" if closest != 10 else ""),
        )
