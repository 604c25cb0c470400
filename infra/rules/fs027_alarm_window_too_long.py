"""An alarm must evaluate at least one period and at most CloudWatch's maximum window.

CloudWatch needs `evaluation_periods` >= 1, and limits period x evaluation periods to 604,800 s (7 days),
or to 86,400 s (1 day) when the period is below one hour. Checked for the operational alarms, each
component's scale-from-zero alarm, and the stuck-at-zero alarm (`alarms.stuck_at_zero_minutes`, evaluated
in 1-minute periods, so at most 1440 minutes). Periods that are themselves invalid are FS026's.

AWS sources: https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricAlarm.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import scale_from_zero_components

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    alarms: {period: 300, evaluation_periods: 500}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


MAX_WINDOW_S = 604_800
MAX_WINDOW_SHORT_PERIOD_S = 86_400  # when the period is below 3600 s


def max_window(period: int) -> int:
    return MAX_WINDOW_S if period >= 3600 else MAX_WINDOW_SHORT_PERIOD_S


def _check(path: str, period: int, evaluation_periods: int, key: str = "evaluation_periods") -> Iterator[Hit]:
    if evaluation_periods < 1:
        yield Hit(
            f"{path}.{key}",
            f"{key} is {evaluation_periods}: an alarm must evaluate at least one period.",
            f"set {key}: 1 or more",
        )
        return
    if period <= 0:
        return  # FS026
    limit = max_window(period)
    if period * evaluation_periods > limit:
        yield Hit(
            f"{path}.{key}",
            f"period {period} s x {evaluation_periods} = {period * evaluation_periods} s exceeds CloudWatch's limit of "
            f"{limit} s for an alarm's evaluation window{' (periods under one hour)' if period < 3600 else ''}, "
            "so creating the alarm would fail.",
            f"set {key} to at most {limit // period}, or use a longer period",
        )


@stack_rule(
    "FS027",
    "alarm-window-too-long",
    Severity.ERROR,
    "An alarm's period x evaluation periods exceeds CloudWatch's window (or evaluates no period).",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        alarms = ep.alarms
        if not alarms.enabled:
            continue
        yield from _check(f"{ep.path}.alarms", alarms.period, alarms.evaluation_periods)
        if any(c.stuck_at_zero_alarm for c in ep.components):
            yield from _check(f"{ep.path}.alarms", 60, alarms.stuck_at_zero_minutes, key="stuck_at_zero_minutes")
    for path, _c, zero in scale_from_zero_components(stack):
        yield from _check(f"{path}.autoscaling.scale_from_zero", zero.period, zero.evaluation_periods)
