"""CloudWatch resources (hashicorp/aws 6.25): metric alarms and dashboards.

`dimensions` of an alarm (and of a metric inside `metric_query`) is a map attribute, not a block, so it is
a plain mapping here. An alarm either watches one metric (`metric_name`, `namespace`, `statistic`, `period`)
or a metric math expression (`metric_query`); CloudWatch rejects a mix of both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from fastscale.infra.base.aws_facts import valid_alarm_period
from fastscale.stacks.resources.base import Resource


@dataclass(frozen=True, kw_only=True)
class MetricQueryMetric:
    metric_name: str
    namespace: str
    period: int
    stat: str
    dimensions: Mapping[str, str] | None = None
    unit: str | None = None


@dataclass(frozen=True, kw_only=True)
class MetricQuery:
    """One entry of a metric math alarm: a metric to fetch (`metric`) or an `expression` over other ids."""

    id: str
    expression: str | None = None
    metric: MetricQueryMetric | None = None
    label: str | None = None
    return_data: bool | None = None
    period: int | None = None


@dataclass(frozen=True, kw_only=True)
class CloudwatchMetricAlarmProps:
    alarm_name: str
    comparison_operator: str
    evaluation_periods: int
    threshold: float
    alarm_description: str | None = None
    # single-metric alarms
    metric_name: str | None = None
    namespace: str | None = None
    statistic: str | None = None
    period: int | None = None
    dimensions: Mapping[str, str] | None = None
    unit: str | None = None
    # metric math alarms
    metric_query: list[MetricQuery] | None = None
    datapoints_to_alarm: int | None = None
    treat_missing_data: str | None = None
    actions_enabled: bool | None = None
    alarm_actions: list[str] | None = None
    ok_actions: list[str] | None = None
    insufficient_data_actions: list[str] | None = None
    tags: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        single = any(v is not None for v in (self.metric_name, self.namespace, self.statistic, self.period))
        if single == (self.metric_query is not None):
            raise ValueError(f"alarm {self.alarm_name}: set either a single metric or metric_query, not both or neither")
        if self.period is not None and not valid_alarm_period(self.period):
            raise ValueError(f"alarm {self.alarm_name}: period {self.period} s is not 10, 20, 30 or a multiple of 60")


class CloudwatchMetricAlarm(Resource[CloudwatchMetricAlarmProps]):
    """`aws_cloudwatch_metric_alarm`."""

    TYPE: ClassVar[str] = "aws_cloudwatch_metric_alarm"
    PROVIDER: ClassVar[str] = "aws"


@dataclass(frozen=True, kw_only=True)
class CloudwatchDashboardProps:
    dashboard_name: str
    dashboard_body: str


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
