"""CloudWatch resources (hashicorp/aws 6.25): metric alarms and dashboards.

Their props are generated from the provider schema (`stacks.resources.generated.aws`:
`CloudwatchMetricAlarmProps`, `MetricQuery`, `MetricQueryMetric`, `CloudwatchDashboardProps`). `dimensions`
of an alarm (and of a metric inside `metric_query`) is a map attribute, not a block, so it is a plain mapping.
An alarm either watches one metric (`metric_name`, `namespace`, `statistic`, `period`) or a metric math
expression (`metric_query`); CloudWatch rejects a mix of both, which `CloudwatchMetricAlarm` refuses when it
is made, with a period CloudWatch does not take.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from fastscale.infra.base.aws_facts import valid_alarm_period
from fastscale.stacks.resources.base import Lifecycle, Resource, Scope
from fastscale.stacks.resources.generated.aws import CloudwatchDashboardProps, CloudwatchMetricAlarmProps


def check_alarm(props: CloudwatchMetricAlarmProps) -> None:
    """Refuse an alarm CloudWatch would reject: a single metric and metric math mixed (or neither), or a
    period other than 10, 20, 30 s or a multiple of 60."""
    single = any(v is not None for v in (props.metric_name, props.namespace, props.statistic, props.period))
    if single == (props.metric_query is not None):
        raise ValueError(f"alarm {props.alarm_name}: set either a single metric or metric_query, not both or neither")
    period = props.period  # a number, or a reference (a str) known only at apply time
    if period is not None and not isinstance(period, str) and not (period == int(period) and valid_alarm_period(int(period))):
        raise ValueError(f"alarm {props.alarm_name}: period {period} s is not 10, 20, 30 or a multiple of 60")


class CloudwatchMetricAlarm(Resource[CloudwatchMetricAlarmProps]):
    """`aws_cloudwatch_metric_alarm`."""

    TYPE: ClassVar[str] = "aws_cloudwatch_metric_alarm"
    PROVIDER: ClassVar[str] = "aws"

    def __init__(
        self,
        scope: Scope,
        id_: str,
        props: CloudwatchMetricAlarmProps,
        *,
        depends_on: Sequence[Resource[Any]] | None = None,
        lifecycle: Lifecycle | None = None,
    ) -> None:
        check_alarm(props)
        super().__init__(scope, id_, props, depends_on=depends_on, lifecycle=lifecycle)


class CloudwatchDashboard(Resource[CloudwatchDashboardProps]):
    """`aws_cloudwatch_dashboard`: the body is the dashboard JSON as a string."""

    TYPE: ClassVar[str] = "aws_cloudwatch_dashboard"
    PROVIDER: ClassVar[str] = "aws"


def evaluation_window(period: int, evaluation_periods: int, datapoints_to_alarm: int) -> str:
    """How long a breach must last before the alarm fires, as CloudWatch evaluates it."""
    total = period * evaluation_periods
    span = f"{total // 60:g} min" if total % 60 == 0 else f"{total} s"
    if datapoints_to_alarm == evaluation_periods:
        if evaluation_periods == 1:
            return f"in one {period} s period"
        return f"in each of {evaluation_periods} consecutive {period} s periods ({span})"
    return f"in {datapoints_to_alarm} of {evaluation_periods} consecutive {period} s periods ({span})"
