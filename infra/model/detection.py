"""How fast each endpoint notices it needs more capacity: the metric behind scale-out and its detection time.

This is the "detect fast" layer of fastscale: the scaling metric per workload, how often it is emitted, how
many datapoints target tracking needs before it acts, and so roughly how long traffic can outgrow capacity
before a scale-out even starts (instance start-up comes on top; see `infra.analysis.estimate`). For components that
scale to zero it also gives the zero-to-one alarm delay, since target tracking cannot scale out from zero.

The stacks take their predefined metric types from here too, so the table and the Terraform cannot disagree;
the figures themselves are AWS's, in :mod:`fastscale.infra.base.aws_facts`.
Pure Python: no cdktf, no AWS calls.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from fastscale.infra.base.aws_facts import (
    COMPONENT_HIGH_RESOLUTION,
    COMPONENT_INVOCATIONS,
    HIGH_RESOLUTION_PERIOD_S,
    METRIC_OF_PREDEFINED_TYPE,
    SCALE_IN_DATAPOINTS,
    SCALE_IN_PERIOD_S,
    SCALE_OUT_DATAPOINTS,
    STANDARD_PERIOD_S,
    VARIANT_HIGH_RESOLUTION,
    VARIANT_INVOCATIONS,
)
from fastscale.infra.config import Autoscaling, FastscaleConfig
from fastscale.infra.model.naming import component_name_of, endpoint_name_of

WorkloadKind = Literal["model", "component"]


@dataclass(frozen=True)
class ScalingMetric:
    """A predefined Application Auto Scaling metric and the CloudWatch metric behind it."""

    predefined_metric_type: str
    cloudwatch_metric: str
    period_s: int

    @property
    def high_resolution(self) -> bool:
        return self.period_s < 60


_SCALING_METRIC_TYPES: tuple[tuple[WorkloadKind, str, str, int], ...] = (
    ("model", "high_resolution", VARIANT_HIGH_RESOLUTION, HIGH_RESOLUTION_PERIOD_S),
    ("model", "invocations", VARIANT_INVOCATIONS, STANDARD_PERIOD_S),
    ("component", "high_resolution", COMPONENT_HIGH_RESOLUTION, HIGH_RESOLUTION_PERIOD_S),
    ("component", "invocations", COMPONENT_INVOCATIONS, STANDARD_PERIOD_S),
)
# (workload kind, config `autoscaling.metric`) -> the metric target tracking follows.
SCALING_METRICS: dict[tuple[WorkloadKind, str], ScalingMetric] = {
    (kind, setting): ScalingMetric(metric_type, METRIC_OF_PREDEFINED_TYPE[metric_type], period)
    for kind, setting, metric_type, period in _SCALING_METRIC_TYPES
}


def scaling_metric(kind: WorkloadKind, autoscaling: Autoscaling) -> ScalingMetric:
    """The metric target tracking uses for a single model ("model") or an inference component."""
    return SCALING_METRICS[(kind, autoscaling.metric)]


@dataclass(frozen=True)
class DetectionRow:
    """One workload: what drives its scale-out and how long detection takes.

    `scale_out_detection_s` is None when auto scaling is disabled; `zero_to_one_s` is None unless the
    component can scale to zero.
    """

    endpoint: str
    workload: str  # the component's resource name, or the endpoint name for a single model
    kind: WorkloadKind
    autoscaling: bool
    metric: str | None
    predefined_metric_type: str | None
    resolution_s: int | None
    datapoints: int | None
    scale_out_detection_s: int | None
    scale_in_detection_s: int | None
    zero_to_one_s: int | None = None

    @property
    def high_resolution(self) -> bool:
        return self.resolution_s is not None and self.resolution_s < 60

    def to_dict(self) -> dict[str, object]:
        return {**asdict(self), "high_resolution": self.high_resolution}


def _row(endpoint: str, workload: str, kind: WorkloadKind, autoscaling: Autoscaling, zero_to_one_s: int | None) -> DetectionRow:
    if not autoscaling.enabled:
        return DetectionRow(endpoint, workload, kind, False, None, None, None, None, None, None, None)
    metric = scaling_metric(kind, autoscaling)
    return DetectionRow(
        endpoint=endpoint,
        workload=workload,
        kind=kind,
        autoscaling=True,
        metric=metric.cloudwatch_metric,
        predefined_metric_type=metric.predefined_metric_type,
        resolution_s=metric.period_s,
        datapoints=SCALE_OUT_DATAPOINTS,
        scale_out_detection_s=SCALE_OUT_DATAPOINTS * metric.period_s,
        scale_in_detection_s=SCALE_IN_DATAPOINTS * SCALE_IN_PERIOD_S,
        zero_to_one_s=zero_to_one_s,
    )


def detection_summary(config: FastscaleConfig) -> list[DetectionRow]:
    """One row per single-model endpoint and per inference component, in config order."""
    rows: list[DetectionRow] = []
    for ep in config.endpoints:
        ep_name = endpoint_name_of(config.project, ep)
        if ep.model is not None:
            rows.append(_row(ep_name, ep_name, "model", ep.model.autoscaling, None))
            continue
        for c in ep.inference_components:
            zero = None
            if c.autoscaling.enabled and c.copies.min == 0:
                # The NoCapacityInvocationFailures alarm must breach for all its evaluation periods before the
                # step policy adds the first copy.
                zero = c.autoscaling.scale_from_zero.period * c.autoscaling.scale_from_zero.evaluation_periods
            rows.append(_row(ep_name, component_name_of(config.project, c), "component", c.autoscaling, zero))
    return rows
