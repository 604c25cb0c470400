"""What ``explain`` reasons about: the window, the scalable targets of a config, the events AWS recorded
(typed, one :class:`Evidence` per target) and the findings; no AWS calls here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from fastscale.infra.analysis.endpoint_traffic.window import HIGH_RESOLUTION_RETENTION as HIGH_RESOLUTION_RETENTION
from fastscale.infra.analysis.endpoint_traffic.window import MINUTE_RETENTION
from fastscale.infra.analysis.endpoint_traffic.window import parse_duration as _parse_duration
from fastscale.infra.aws.measure import requested_count
from fastscale.infra.base.aws_facts import (
    COMPONENT_COPIES,
    VARIANT_INSTANCES,
)
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model import capacity
from fastscale.infra.model.detection import ScalingMetric, scaling_metric
from fastscale.infra.model.instance_fit import Candidate, fallback_candidates
from fastscale.infra.model.naming import all_endpoint_names

INVOCATIONS_METRIC = "Invocations"

#: Metrics at 1-minute resolution stay for 15 days; the window may not start earlier. (Sub-minute datapoints
#: stay for 3 hours: HIGH_RESOLUTION_RETENTION.)
MAX_WINDOW = MINUTE_RETENTION
DEFAULT_SINCE = "3h"
#: How many fallback types an insufficient-capacity finding names.
FALLBACK_SUGGESTIONS = 3


# --------------------------------------------------------------------------------------------- window


def parse_duration(text: str) -> timedelta:
    """'90m', '3h', '1h30m', '2d' -> timedelta. Raises ValueError with the accepted forms."""
    return _parse_duration(text, longest=MAX_WINDOW, why_shortest="metrics and alarms have nothing to show",
                           why_longest="reaches past 15 days, the longest CloudWatch keeps 1-minute metrics")


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime

    @property
    def metric_period(self) -> int:
        """10 s while CloudWatch still holds 10-second datapoints for the whole window, else 60 s."""
        return 10 if self.end - self.start <= HIGH_RESOLUTION_RETENTION else 60

    def to_dict(self) -> dict[str, Any]:
        return {"start": iso_time(self.start), "end": iso_time(self.end), "metric_period": self.metric_period}


def iso_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------------------------- targets


@dataclass(frozen=True)
class TargetSpec:
    """One scalable target as fastscale deployed it: the names to read and what the config says."""

    kind: str  # "component" (copies) or "variant" (instances)
    label: str  # config names, e.g. "qwen3/qwen3-8b"
    config_path: str  # e.g. "endpoints[0].inference_components[1]"
    resource_id: str
    dimension: str
    endpoint: str
    variant: str
    component: str | None
    instance_type: str
    capacity_min: int
    capacity_max: int
    instances_max: int
    endpoint_path: str  # e.g. "endpoints[0]"
    metric: ScalingMetric
    target_value: float
    target_tracking_policy: str | None
    scale_from_zero_policy: str | None = None
    scale_from_zero_alarm: str | None = None
    stuck_at_zero_alarm: str | None = None
    operational_alarms: tuple[str, ...] = ()
    model_download_timeout: int | None = None
    startup_health_check_timeout: int | None = None
    #: Types that could stand in when AWS has no capacity of instance_type (infra.model.instance_fit), cheapest first.
    fallback: tuple[Candidate, ...] = ()

    @property
    def unit(self) -> str:
        return "copies" if self.kind == "component" else "instances"

    @property
    def name(self) -> str:
        return self.component or self.endpoint

    @property
    def what(self) -> str:
        return f"inference component {self.component}" if self.component else f"endpoint {self.endpoint}"

    @property
    def capacity_path(self) -> str:
        return f"{self.config_path}.copies.max" if self.kind == "component" else f"{self.endpoint_path}.instances.max"


class TargetSelectionError(ValueError):
    """--endpoint / --component name nothing in the config (bad input)."""


def targets_of(config: FastscaleConfig, endpoint: str | None = None, component: str | None = None) -> list[TargetSpec]:
    """Every scalable target the stack registers, optionally only one endpoint's or one component's."""
    if endpoint is not None and endpoint not in {e.name for e in config.endpoints}:
        raise TargetSelectionError(
            f"no endpoint {endpoint!r} in the config (it has: {', '.join(e.name for e in config.endpoints)})"
        )
    known_components = [c.name for e in config.endpoints for c in e.inference_components
                        if endpoint is None or e.name == endpoint]
    if component is not None and component not in known_components:
        where = f"endpoint {endpoint!r}" if endpoint else "the config"
        raise TargetSelectionError(
            f"no inference component {component!r} in {where} (it has: {', '.join(known_components) or 'none'})"
        )
    out: list[TargetSpec] = []
    for i, (ep, names) in enumerate(zip(config.endpoints, all_endpoint_names(config))):
        if endpoint is not None and ep.name != endpoint:
            continue
        ep_path = f"endpoints[{i}]"
        operational = tuple(names.alarms.values())
        fallback = tuple(fallback_candidates(ep, exclude=capacity.instance_types(ep), n=FALLBACK_SUGGESTIONS))
        if ep.model is not None:
            if component is None and ep.model.autoscaling.enabled:
                out.append(TargetSpec(
                    kind="variant", label=ep.name, config_path=f"{ep_path}.model", resource_id=names.resource_id,
                    dimension=VARIANT_INSTANCES, endpoint=names.endpoint, variant=names.variant, component=None,
                    instance_type=ep.instance_type, capacity_min=ep.instances.min, capacity_max=ep.instances.max,
                    instances_max=ep.instances.max, endpoint_path=ep_path,
                    metric=scaling_metric("model", ep.model.autoscaling),
                    target_value=ep.model.autoscaling.tracking_target,
                    target_tracking_policy=names.target_tracking_policy, operational_alarms=operational,
                    model_download_timeout=ep.model.model_download_timeout or ep.model_download_timeout,
                    startup_health_check_timeout=ep.model.startup_health_check_timeout or ep.startup_health_check_timeout,
                    fallback=fallback,
                ))
            continue
        for j, (spec, c) in enumerate(zip(ep.inference_components, names.components)):
            if (component is not None and spec.name != component) or not spec.autoscaling.enabled:
                continue
            out.append(TargetSpec(
                kind="component", label=f"{ep.name}/{spec.name}", config_path=f"{ep_path}.inference_components[{j}]",
                resource_id=c.resource_id, dimension=COMPONENT_COPIES, endpoint=names.endpoint,
                variant=names.variant, component=c.name, instance_type=ep.instance_type,
                capacity_min=spec.copies.min, capacity_max=spec.copies.max, instances_max=ep.instances.max,
                endpoint_path=ep_path, metric=scaling_metric("component", spec.autoscaling),
                target_value=spec.autoscaling.tracking_target, target_tracking_policy=c.target_tracking_policy,
                scale_from_zero_policy=c.scale_from_zero_policy, scale_from_zero_alarm=c.scale_from_zero_alarm,
                stuck_at_zero_alarm=c.stuck_at_zero_alarm, operational_alarms=operational,
                model_download_timeout=spec.model_download_timeout or ep.model_download_timeout,
                startup_health_check_timeout=spec.startup_health_check_timeout or ep.startup_health_check_timeout,
                fallback=fallback,
            ))
    return out


# --------------------------------------------------------------------------------------------- events


@dataclass(frozen=True)
class NotScaled:
    code: str
    current: int | None = None
    minimum: int | None = None
    maximum: int | None = None


@dataclass(frozen=True)
class Activity:
    """One Application Auto Scaling activity (a not-scaled decision included)."""

    at: datetime
    end: datetime | None
    status: str
    description: str
    cause: str
    message: str = ""
    not_scaled: tuple[NotScaled, ...] = ()
    activity_id: str = ""

    @property
    def desired(self) -> int | None:
        """The capacity this activity set (or tried to set), from its description or message."""
        return requested_count(self.description) or requested_count(self.message)

    @property
    def text(self) -> str:
        return " ".join(t for t in (self.message, self.description) if t)


@dataclass(frozen=True)
class AlarmChange:
    at: datetime
    alarm: str
    role: str  # e.g. "target tracking scale-out", "scale from zero", "model-latency"
    old: str
    new: str
    reason: str = ""


@dataclass(frozen=True)
class AlarmAction:
    at: datetime
    alarm: str
    role: str
    summary: str

    @property
    def failed(self) -> bool:
        return self.summary.lower().startswith("failed")


@dataclass(frozen=True)
class AlarmDefinition:
    name: str
    role: str
    namespace: str | None
    metric: str | None
    statistic: str | None
    comparison: str | None
    threshold: float | None
    period: int | None
    evaluation_periods: int | None
    datapoints_to_alarm: int | None
    actions_enabled: bool
    actions: tuple[str, ...]
    state: str | None


@dataclass(frozen=True)
class Policy:
    name: str
    type: str
    arn: str = ""
    metric_type: str | None = None  # predefined metric of a target-tracking policy
    target_value: float | None = None
    scale_out_cooldown: int = 0
    scale_in_cooldown: int = 0
    step_cooldown: int = 0
    alarms: tuple[str, ...] = ()
    disable_scale_in: bool = False  # TargetTrackingScalingPolicyConfiguration.DisableScaleIn


@dataclass(frozen=True)
class MetricSeries:
    """Datapoints of one metric in the window, in time order."""

    name: str
    stat: str
    period: int
    points: tuple[tuple[datetime, float], ...] = ()
    status: str = "Complete"

    @property
    def resolution(self) -> float | None:
        """Seconds between the two closest datapoints: the resolution CloudWatch stored, once there are 3+."""
        if len(self.points) < 3:
            return None
        return min((b[0] - a[0]).total_seconds() for a, b in zip(self.points, self.points[1:]))

    @property
    def peak(self) -> float | None:
        return max((v for _, v in self.points), default=None)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.name, "stat": self.stat, "period": self.period, "datapoints": len(self.points),
                "resolution_seconds": self.resolution, "peak": self.peak, "status": self.status}


@dataclass(frozen=True)
class VariantStage:
    status: str
    message: str = ""
    at: datetime | None = None


@dataclass(frozen=True)
class ResourceState:
    """Endpoint and (for a component) inference component as SageMaker describes them now."""

    endpoint_status: str  # "does not exist" when it is gone
    endpoint_failure: str = ""
    stages: tuple[VariantStage, ...] = ()
    instances_current: int | None = None
    instances_desired: int | None = None
    instances_max: int | None = None  # managed instance scaling maximum
    managed_scaling: str | None = None  # ManagedInstanceScaling.Status of the variant (None: not set)
    instance_pools: tuple[str, ...] = ()
    component_status: str | None = None
    component_failure: str = ""
    copies_current: int | None = None
    copies_desired: int | None = None
    startup: dict[str, int] = field(default_factory=dict)  # StartupParameters of the component

    def messages(self) -> list[tuple[str, str]]:
        """(where, text) of every failure reason and stage message SageMaker shows."""
        out = []
        if self.endpoint_failure:
            out.append(("endpoint FailureReason", self.endpoint_failure))
        if self.component_failure:
            out.append(("inference component FailureReason", self.component_failure))
        out += [(f"variant {s.status}", s.message) for s in self.stages if s.message]
        return out


@dataclass
class Evidence:
    """Everything read about one scalable target in the window."""

    spec: TargetSpec
    window: Window
    registered: bool = True
    capacity_min: int | None = None
    capacity_max: int | None = None
    suspended: dict[str, bool] = field(default_factory=dict)
    policies: list[Policy] = field(default_factory=list)
    activities: list[Activity] = field(default_factory=list)
    alarm_changes: list[AlarmChange] = field(default_factory=list)
    alarm_actions: list[AlarmAction] = field(default_factory=list)
    alarms: dict[str, AlarmDefinition] = field(default_factory=dict)
    missing_alarms: list[str] = field(default_factory=list)
    scaling_metric: MetricSeries | None = None
    no_capacity: MetricSeries | None = None
    invocations: MetricSeries | None = None
    resource: ResourceState | None = None

    def alarm_roles(self) -> dict[str, str]:
        return {**{a.name: a.role for a in self.alarms.values()}, **{n: alarm_role(self.spec, n) for n in self.missing_alarms}}


# --------------------------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Finding:
    code: str
    target: str  # the target's label
    title: str
    evidence: tuple[str, ...]
    fix: str

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "target": self.target, "title": self.title, "evidence": list(self.evidence),
                "fix": self.fix}



def clock_time(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%H:%M:%S")


def alarm_role(spec: TargetSpec, alarm: str) -> str:
    """The part an alarm plays for the target (the role a finding and the timeline name it by)."""
    if alarm == spec.scale_from_zero_alarm:
        return "scale from zero"
    if alarm == spec.stuck_at_zero_alarm:
        return "stuck at zero"
    if "AlarmHigh" in alarm:
        return "target tracking scale-out"
    if "AlarmLow" in alarm:
        return "target tracking scale-in"
    prefix = f"{spec.endpoint}-"
    return alarm[len(prefix):] if alarm.startswith(prefix) else "operational"
