"""The scale-from-zero alarm should use a 60-second period.

A period of 10, 20 or 30 s makes a high-resolution alarm, which only gets datapoints for metrics stored
at 1-second resolution. AWS does not document that NoCapacityInvocationFailures is published at high
resolution; if it is not, the alarm sits in INSUFFICIENT_DATA and the first request after scale to zero
may never bring a copy back. A 60 s period is documented to work and costs at most a minute.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.aws_facts import HIGH_RESOLUTION_ALARM_PERIODS
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import scale_from_zero_components

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


@rule(
    "FS028",
    "high-resolution-scale-from-zero-alarm",
    Severity.WARNING,
    "The scale-from-zero alarm period is 10/20/30 s; NoCapacityInvocationFailures is not documented at high resolution.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _ep, names in scale_from_zero_components(config):
        period = names.spec.autoscaling.scale_from_zero.period
        if period not in HIGH_RESOLUTION_ALARM_PERIODS:
            continue
        yield Hit(
            f"{path}.autoscaling.scale_from_zero.period",
            f"period {period} s makes a high-resolution alarm, but AWS does not document that "
            "NoCapacityInvocationFailures is published at high resolution: the alarm may sit in INSUFFICIENT_DATA "
            "and never add the first copy back.",
            "set scale_from_zero.period: 60 unless you have seen the metric at 10-second resolution in CloudWatch",
        )
