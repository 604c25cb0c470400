"""An endpoint with operational alarms hosts more components than one CloudWatch alarm can watch.

On an inference-component endpoint, the latency and 5xx alarms combine every component's metric with
metric math (fastscale's choice: it alarms on each component's
own metrics). CloudWatch refuses a metric math alarm
over more than 10 metrics, so the apply would fail on the alarm after the endpoint was already created.

AWS sources: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/cloudwatch_limits.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.aws_facts import MAX_METRICS_PER_MATH_ALARM
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: many
    instance_type: ml.g6.48xlarge
    instances: {initial: 1, min: 1, max: 2}
    inference_components:
""" + "".join(
    f"""      - name: m{i}
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {{accelerators: 1, memory_mb: 8192}}
"""
    for i in range(MAX_METRICS_PER_MATH_ALARM + 1)
)


@stack_rule(
    "FS030",
    "too-many-components-for-alarms",
    Severity.ERROR,
    f"More than {MAX_METRICS_PER_MATH_ALARM} components on an endpoint with alarms: a CloudWatch metric math alarm "
    f"watches at most {MAX_METRICS_PER_MATH_ALARM} metrics.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        count = len(ep.components)
        if ep.alarms.enabled and count > MAX_METRICS_PER_MATH_ALARM:
            yield Hit(
                f"{ep.path}.alarms.enabled",
                f"this endpoint hosts {count} inference components; its latency and 5xx alarms combine one metric "
                f"per component, and CloudWatch accepts at most {MAX_METRICS_PER_MATH_ALARM} metrics in one alarm, "
                "so the apply would fail.",
                f"split the components over endpoints of at most {MAX_METRICS_PER_MATH_ALARM}, or set "
                "alarms: {enabled: false} on this endpoint",
            )
