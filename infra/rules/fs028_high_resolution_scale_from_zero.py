"""A note when the scale-from-zero alarm uses a 10, 20 or 30-second period.

A period of 10, 20 or 30 s makes a high-resolution alarm, which only gets datapoints for metrics stored
at 1-second resolution. AWS does not document at what resolution NoCapacityInvocationFailures is
published. AWS's own material differs: the developer guide's example ("Scale an endpoint to zero
instances", `put-metric-alarm --period 60`) uses 60 s, while the scale-to-zero samples in
aws-samples/sagemaker-genai-hosting-examples (notebooks and CDK stack) use 30 s. A 30 s period is
therefore what AWS's samples do, not the user's own risk: this is a note (`info`), never a warning. It
says what to look at in CloudWatch: if the alarm sits in INSUFFICIENT_DATA, the first request after
scale to zero never brings a copy back, and 60 s (fastscale's default) is the documented period.

AWS sources: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html, https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-zero-instances.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.aws_facts import HIGH_RESOLUTION_ALARM_PERIODS
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import scale_from_zero_components

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
        autoscaling:
          scale_from_zero: {period: 10}
"""


@stack_rule(
    "FS028",
    "high-resolution-scale-from-zero-alarm",
    Severity.INFO,
    "The scale-from-zero alarm period is 10/20/30 s, as in AWS's samples; the metric's resolution is not documented.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _c, zero in scale_from_zero_components(stack):
        period = zero.period
        if period not in HIGH_RESOLUTION_ALARM_PERIODS:
            continue
        yield Hit(
            f"{path}.autoscaling.scale_from_zero.period",
            f"period {period} s makes a high-resolution alarm, as AWS's scale-to-zero samples use (30 s); AWS does "
            "not document that NoCapacityInvocationFailures is published at high resolution, and its developer "
            "guide's example uses 60 s. If it is not, the alarm sits in INSUFFICIENT_DATA and never adds the first "
            "copy back.",
            "after the first scale to zero, check that the alarm leaves INSUFFICIENT_DATA when a request fails; "
            "if it does not, set scale_from_zero.period: 60 (the default)",
        )
