"""Alarm periods must be 10, 20, 30 or a multiple of 60 seconds.

CloudWatch accepts only those periods. Checked for the operational alarms (`alarms.period`, when alarms
are enabled) and for each component's scale-from-zero alarm (`autoscaling.scale_from_zero.period`, when
the component can scale to zero).

AWS sources: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.aws_facts import valid_alarm_period
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import scale_from_zero_components

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    alarms: {period: 90}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


def _hit(path: str, period: int) -> Hit:
    nearest = max(60, round(period / 60) * 60)
    return Hit(
        path,
        f"period is {period} s: CloudWatch alarm periods must be 10, 20, 30 or a multiple of 60 seconds, so creating "
        "the alarm would fail.",
        f"set period: {nearest}",
    )


@stack_rule("FS026", "invalid-alarm-period", Severity.ERROR, "An alarm period is not 10, 20, 30 or a multiple of 60 seconds.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        if ep.alarms.enabled and not valid_alarm_period(ep.alarms.period):
            yield _hit(f"{ep.path}.alarms.period", ep.alarms.period)
    for path, _c, zero in scale_from_zero_components(stack):
        if not valid_alarm_period(zero.period):
            yield _hit(f"{path}.autoscaling.scale_from_zero.period", zero.period)
