"""Why did (or didn't) an endpoint scale? Read what AWS recorded, put it on one timeline, name the causes.

Three steps, kept apart so the reasoning can be tested without AWS:

1. :func:`collect` reads, for each scalable target fastscale deployed (names from :mod:`infra.naming`), the
   Application Auto Scaling activities (not-scaled ones included), its policies and the alarms they own, the
   state history of those alarms and of the stack's own alarms, the scaling metrics at their real resolution
   (GetMetricData), and the endpoint / inference component status. The answers become typed events
   (:class:`Activity`, :class:`AlarmChange`, :class:`MetricSeries`, :class:`ResourceState`) in an
   :class:`Evidence` per target.
2. :func:`timeline` orders the events of one target.
3. :func:`diagnose` runs the finders: pure functions ``Evidence -> list[Finding]``, one per cause, each
   finding with the evidence that proves it and the fix.

AWS only states a cause in free text (``StatusMessage``, ``FailureReason``), so the finders match the
wording AWS uses, quoted in the patterns below; anything failed that matches none is still reported with
AWS's own words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra import capacity
from fastscale.infra.aws.clients import AwsClients, ClientsArg, is_not_found, paginate, resolve, translate_errors
from fastscale.infra.aws.measure import requested_count
from fastscale.infra.aws_facts import (
    COMPONENT_COPIES,
    NO_CAPACITY_METRIC,
    NS_INVOCATIONS,
    SERVICE_NAMESPACE,
    TARGET_TRACKING,
    VARIANT_INSTANCES,
)
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.detection import ScalingMetric, scaling_metric
from fastscale.infra.instance_fit import Candidate, fallback_candidates
from fastscale.infra.naming import all_endpoint_names

NO_CAPACITY_METRIC = NO_CAPACITY_METRIC
INVOCATIONS_METRIC = "Invocations"

#: CloudWatch keeps sub-minute datapoints for 3 hours; older ranges must be read at a multiple of 60 s.
HIGH_RESOLUTION_RETENTION = timedelta(hours=3)
#: Metrics at 1-minute resolution stay for 15 days; the window may not start earlier.
MAX_WINDOW = timedelta(days=15)
DEFAULT_SINCE = "3h"
#: How many fallback types an insufficient-capacity finding names.
FALLBACK_SUGGESTIONS = 3

_FAILED_ACTIVITY_STATUSES = frozenset({"Failed", "Unfulfilled"})

# ------------------------------------------------------------------------------------ AWS's own wording
# "Unable to provision requested ML compute capacity due to InsufficientInstanceCapacity error. Please retry
# using a different ML instance type or after some time." (endpoint FailureReason); EC2's "We currently do
# not have sufficient capacity to launch new ml.g6e.2xlarge instances".
_CAPACITY = re.compile(r"InsufficientInstanceCapacity|Unable to provision requested ML compute capacity|"
                       r"insufficient capacity|not have sufficient capacity", re.IGNORECASE)
# "The account-level service limit 'ml.g5.xlarge for endpoint usage' is 4 Instances, with current utilization
# of 3 Instances and a request delta of 3 Instances." (ResourceLimitExceeded)
_QUOTA = re.compile(
    r"service limit '(?P<quota>[^']+)' is (?P<limit>\d+) Instances?, with current utilization of (?P<used>\d+) "
    r"Instances? and a request delta of (?P<delta>\d+) Instances?",
    re.IGNORECASE,
)
_QUOTA_LOOSE = re.compile(r"ResourceLimitExceeded|service limit|service quota", re.IGNORECASE)
# "The primary container for production variant AllTraffic did not pass the ping health check."
_HEALTH_CHECK = re.compile(r"ping health check|health check", re.IGNORECASE)
# 'Failed to download model data for container "container_1" from URL: "s3://..."'
_DOWNLOAD = re.compile(r"download(ing)? (the )?model|model data download|Failed to download", re.IGNORECASE)


# --------------------------------------------------------------------------------------------- window


_DURATION_PART = re.compile(r"(\d+)([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """'90m', '3h', '1h30m', '2d' -> timedelta. Raises ValueError with the accepted forms."""
    raw = text.strip().lower()
    parts = _DURATION_PART.findall(raw)
    if not raw or "".join(n + u for n, u in parts) != raw:
        raise ValueError(f"{text!r} is not a duration: use a number with s, m, h or d, e.g. 30m, 3h, 1h30m, 2d")
    value = timedelta(seconds=sum(int(n) * _UNITS[u] for n, u in parts))
    if value < timedelta(minutes=1):
        raise ValueError(f"{text!r} is shorter than one minute: metrics and alarms have nothing to show")
    if value > MAX_WINDOW:
        raise ValueError(f"{text!r} reaches past 15 days, the longest CloudWatch keeps 1-minute metrics")
    return value


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime

    @property
    def metric_period(self) -> int:
        """10 s while CloudWatch still holds 10-second datapoints for the whole window, else 60 s."""
        return 10 if self.end - self.start <= HIGH_RESOLUTION_RETENTION else 60

    def to_dict(self) -> dict[str, Any]:
        return {"start": _iso(self.start), "end": _iso(self.end), "metric_period": self.metric_period}


def _iso(when: datetime) -> str:
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
    #: Types that could stand in when AWS has no capacity of instance_type (infra.instance_fit), cheapest first.
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
                    target_value=ep.model.autoscaling.target_concurrency,
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
                target_value=spec.autoscaling.target_concurrency, target_tracking_policy=c.target_tracking_policy,
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
        return {**{a.name: a.role for a in self.alarms.values()}, **{n: _role(self.spec, n) for n in self.missing_alarms}}


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


def _when(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%H:%M:%S")


def _finding(ev: Evidence, code: str, title: str, evidence: Iterable[str], fix: str) -> Finding:
    return Finding(code, ev.spec.label, title, tuple(evidence), fix)


def _failure_texts(ev: Evidence) -> list[tuple[str, str]]:
    """(where, text) of every failed activity message and every SageMaker failure reason."""
    out = [(f"{_when(a.at)} scaling activity {a.status}", a.message or a.description)
           for a in ev.activities if a.status in _FAILED_ACTIVITY_STATUSES]
    if ev.resource is not None:
        out += ev.resource.messages()
    return out


def _cap(items: list[str], n: int = 3) -> list[str]:
    """At most n quoted pieces of evidence, then how many more there were."""
    return items[:n] + ([f"... and {len(items) - n} more like these"] if len(items) > n else [])


def find_max_reached(ev: Evidence) -> list[Finding]:
    blocked = [a for a in ev.activities for r in a.not_scaled if r.code == "AlreadyAtMaxCapacity"]
    if not blocked:
        return []
    maximum = next((r.maximum for a in blocked for r in a.not_scaled if r.maximum is not None), ev.capacity_max)
    lines = [f"{_when(a.at)} not scaled: AlreadyAtMaxCapacity (max {maximum}); cause: {a.cause}" for a in blocked]
    spec = ev.spec
    return [_finding(
        ev, "max-reached", f"scale-out was wanted but the maximum of {maximum} {spec.unit} was reached",
        _cap(lines) + [f"{len(blocked)} scale-out decision(s) blocked between {_when(blocked[-1].at)} and {_when(blocked[0].at)}"
                       if len(blocked) > 1 else f"{len(blocked)} scale-out decision blocked"],
        f"raise `{spec.capacity_path}` (now {spec.capacity_max}) and deploy"
        + (f"; each copy needs room on an instance, so check `{spec.endpoint_path}.instances.max` "
           f"({spec.instances_max}) too" if spec.kind == "component" else ""),
    )]


def find_insufficient_capacity(ev: Evidence) -> list[Finding]:
    hits = [f"{where}: {text}" for where, text in _failure_texts(ev) if _CAPACITY.search(text)]
    if not hits:
        return []
    spec = ev.spec
    pools = ev.resource.instance_pools if ev.resource else ()
    fallback = [c for c in spec.fallback if c.instance_type not in pools]
    fix = (f"AWS had no {spec.instance_type} capacity. Add a fallback instance type under "
           f"`{spec.endpoint_path}.capacity.fallback` (each one an InstancePool: SageMaker moves to the next after "
           "insufficient capacity)")
    if fallback:
        fix += (f" that runs the same containers and holds each copy's model on its accelerators, cheapest first: "
                f"e.g. `- instance_type: {fallback[0].instance_type}` ({fallback[0].price_note})")
        if len(fallback) > 1:
            fix += f" (or {' or '.join(c.describe() for c in fallback[1:])})"
    fix += (f", or set `{spec.endpoint_path}.instance_type` to one; `{spec.endpoint_path}.capacity.reservation_arn` "
            "(an ML capacity reservation) guarantees instances")
    if pools:
        fix += f" (pools already tried: {', '.join(pools)})"
    return [_finding(ev, "insufficient-capacity", f"no {spec.instance_type} capacity in the region",
                     _cap(hits), fix)]


def find_quota_reached(ev: Evidence) -> list[Finding]:
    hits, wanted, quota = [], 0, f"{ev.spec.instance_type} for endpoint usage"
    for where, text in _failure_texts(ev):
        m = _QUOTA.search(text)
        if m:
            quota = m.group("quota")
            wanted = max(wanted, int(m.group("used")) + int(m.group("delta")))
            hits.append(f"{where}: {text}")
        elif _QUOTA_LOOSE.search(text):
            hits.append(f"{where}: {text}")
    if not hits:
        return []
    at_least = f" to at least {wanted}" if wanted else ""
    return [_finding(
        ev, "quota-reached", f"the account's quota '{quota}' stopped the scale-out", _cap(hits),
        f"request an increase of the Service Quotas quota '{quota}' (service code sagemaker){at_least}: "
        f"`aws service-quotas list-service-quotas --service-code sagemaker` shows its code and value",
    )]


def find_metric_problems(ev: Evidence) -> list[Finding]:
    spec, out = ev.spec, []
    tt = next((p for p in ev.policies if p.type == TARGET_TRACKING), None)
    if tt is not None and tt.metric_type and tt.metric_type != spec.metric.predefined_metric_type:
        out.append(_finding(
            ev, "metric-resolution", "the live target-tracking policy follows a different metric than the config",
            [f"policy {tt.name}: {tt.metric_type}", f"config: {spec.metric.predefined_metric_type}"],
            "deploy again so the policy uses the metric the config names; only the predefined HighResolution "
            "types give 10-second target tracking",
        ))
    series = ev.scaling_metric
    if series is None:
        return out
    traffic = ev.invocations.peak if ev.invocations else None
    failures = ev.no_capacity.peak if ev.no_capacity else None
    # A component at zero copies has no per-copy metric (its requests fail for lack of capacity instead):
    # that is the scale-from-zero path, not a missing metric.
    if not series.points and (traffic or 0) > 0 and not failures:
        out.append(_finding(
            ev, "metric-missing", f"{series.name} had no datapoint while requests came in, so target tracking saw nothing",
            [f"{series.name} ({series.stat}, {series.period} s): 0 datapoints in the window",
             f"{INVOCATIONS_METRIC} peaked at {traffic:g} per datapoint"],
            f"{series.name} is only published for the high-resolution metric setup: check the endpoint "
            f"configuration's MetricsConfig (`{spec.endpoint_path}.metrics_publish_frequency`) and that the "
            "component receives its own invocations (InferenceComponentName on each request)",
        ))
    expected = spec.metric.period_s
    if series.resolution is not None and ev.window.metric_period < 60 and series.resolution > expected:
        out.append(_finding(
            ev, "metric-resolution",
            f"{series.name} arrives every {series.resolution:g} s, not every {expected} s as the policy expects",
            [f"closest datapoints {series.resolution:g} s apart over {len(series.points)} datapoints read at {series.period} s",
             "target tracking needs 3 datapoints before it acts: at this resolution detection takes "
             f"~{3 * series.resolution:g} s instead of ~{3 * expected} s"],
            f"set `{spec.endpoint_path}.metrics_publish_frequency` to 10 (MetricsConfig.MetricPublishFrequencyInSeconds) "
            "and deploy; the endpoint configuration is replaced",
        ))
    return out


def _scale_out_alarms(ev: Evidence) -> set[str]:
    roles = ev.alarm_roles()
    return {n for n, r in roles.items() if r in ("target tracking scale-out", "scale from zero")}


def _is_scale_out(a: Activity, scale_out_alarms: set[str]) -> bool:
    return "AlarmHigh" in a.cause or any(n in a.cause for n in scale_out_alarms)


def find_cooldown_holding(ev: Evidence) -> list[Finding]:
    cooldowns = {p.name: (p.scale_out_cooldown if p.type == TARGET_TRACKING else p.step_cooldown)
                 for p in ev.policies}
    if not any(cooldowns.values()):
        return []
    scale_out_alarms = _scale_out_alarms(ev)
    done = sorted((a for a in ev.activities if a.status == "Successful" and _is_scale_out(a, scale_out_alarms)),
                  key=lambda a: a.at)
    lines = []
    for change in sorted(ev.alarm_changes, key=lambda c: c.at):
        if change.new != "ALARM" or change.alarm not in scale_out_alarms:
            continue
        before = [a for a in done if a.at <= change.at]
        if not before:
            continue
        last = before[-1]
        policy = next((p for p in cooldowns if p in last.cause), None)
        cooldown = cooldowns.get(policy, 0) if policy else max(cooldowns.values())
        until = last.at + timedelta(seconds=cooldown)
        if change.at < until and not any(change.at <= a.at < until for a in done):
            held = (until - change.at).total_seconds()
            lines.append(f"{_when(change.at)} {change.alarm} went to ALARM {held:.0f} s inside the {cooldown} s cooldown "
                         f"of the scale-out at {_when(last.at)}")
    if not lines:
        return []
    field_name = "scale_out_cooldown"
    return [_finding(
        ev, "cooldown", "a scale-out cooldown held back a scale-out that was asked for", _cap(lines),
        f"lower `{ev.spec.config_path}.autoscaling.{field_name}` (0 lets target tracking add capacity as soon as "
        "the next datapoints breach; it never removes capacity faster)",
    )]


# "monitor alarm TargetTracking-...-AlarmHigh-... in state ALARM triggered policy demo-qwen-target-tracking"
_CAUSE = re.compile(r"monitor alarm (?P<alarm>\S+) in state (?P<state>\w+) triggered policy (?P<policy>\S+)")


def _cause(a: Activity) -> tuple[str, str] | None:
    """(alarm, policy) an activity names as its cause, when an alarm triggered it."""
    m = _CAUSE.search(a.cause)
    return (m.group("alarm"), m.group("policy")) if m else None


def _alarm_state_at(ev: Evidence, alarm: str, at: datetime) -> tuple[str | None, datetime | None]:
    """The alarm's state at ``at`` and since when (None: since before the window, or unknown)."""
    changes = sorted((c for c in ev.alarm_changes if c.alarm == alarm), key=lambda c: c.at)
    before = [c for c in changes if c.at <= at]
    if before:
        return before[-1].new, before[-1].at
    if changes:
        return changes[0].old or None, None
    definition = ev.alarms.get(alarm)
    return (definition.state if definition else None), None


def reinvoke_seconds() -> float:
    """How often CloudWatch invokes an Auto Scaling action again while its alarm stays in ALARM: the figure
    (and source) the simulator uses, so both reason with the same AWS semantics."""
    from fastscale.infra.simulate.params import load_params

    return float(load_params().alarm_reinvoke_seconds.value)


def reinvoked_by(ev: Evidence, a: Activity) -> tuple[str, datetime | None] | None:
    """(alarm, in ALARM since) when ``a`` came from an alarm that was already in ALARM, not from its change to
    ALARM: "Except for Auto Scaling actions, the actions happen only on state transitions, and are not
    performed again if the condition persists" (CloudWatch user guide, Alarm actions,
    https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/alarm-actions.html); Auto Scaling actions
    are invoked again while the alarm stays in ALARM."""
    cause = _cause(a)
    if cause is None:
        return None
    state, since = _alarm_state_at(ev, cause[0], a.at)
    if state != "ALARM":
        return None
    if since is not None and (a.at - since).total_seconds() < reinvoke_seconds() / 2:
        return None  # the action of the change to ALARM itself
    return cause[0], since


def _policy_cooldown(ev: Evidence, policy_name: str) -> tuple[int, str] | None:
    """(scale-out cooldown, config field) of a live policy."""
    p = next((p for p in ev.policies if p.name == policy_name), None)
    if p is None:
        return None
    if p.type == TARGET_TRACKING:
        return p.scale_out_cooldown, "autoscaling.scale_out_cooldown"
    return p.step_cooldown, "autoscaling.scale_from_zero.cooldown"


def find_cooldown_limited(ev: Evidence) -> list[Finding]:
    """One change to ALARM, then scale-outs spaced by the policy's cooldown while the alarm stays in ALARM.

    CloudWatch invokes an alarm's Auto Scaling action again about every minute while it stays in ALARM, so a
    policy whose scale-out cooldown is longer than that adds capacity once per cooldown: the demand was there
    all along (the alarm never left ALARM), the cooldown set the pace.
    """
    every = reinvoke_seconds()
    scale_outs = sorted((a for a in ev.activities if not a.not_scaled and a.status not in _FAILED_ACTIVITY_STATUSES
                         and _cause(a) is not None), key=lambda a: a.at)
    by_cause: dict[tuple[str, str], list[Activity]] = {}
    for a in scale_outs:
        cause = _cause(a)
        assert cause is not None
        by_cause.setdefault(cause, []).append(a)
    out = []
    for (alarm, policy), acts in by_cause.items():
        known = _policy_cooldown(ev, policy)
        if known is None or known[0] <= every:
            continue  # without a cooldown longer than the re-invocation interval, CloudWatch sets the pace
        cooldown, setting = known
        paced = [(a, b) for a, b in zip(acts, acts[1:])
                 if reinvoked_by(ev, b) is not None and (_alarm_state_at(ev, alarm, b.at)[1] or a.at) <= a.at
                 and cooldown - every / 6 <= (b.at - a.at).total_seconds() <= cooldown + every + every / 6]
        if not paced:
            continue
        first = paced[0][0]
        state, since = _alarm_state_at(ev, alarm, first.at)
        steps = [paced[0][0]] + [b for _, b in paced]
        went = (f"went to ALARM once at {_when(since)}" if since is not None
                else "was in ALARM from before the window") + " and stayed there"
        lines = [
            f"{alarm} {went}: CloudWatch invokes Auto Scaling actions again about every {every:g} s while an alarm "
            "stays in ALARM (only other actions wait for a state change), so the demand was there throughout",
            "scale-outs at " + ", ".join(f"{_when(a.at)}" + (f" (to {a.desired})" if a.desired is not None else "")
                                         for a in steps)
            + f": {', '.join(f'{(b.at - a.at).total_seconds():.0f} s' for a, b in paced)} apart, the policy "
              f"{policy}'s {cooldown} s cooldown; the invocations in between added nothing",
        ]
        series = ev.scaling_metric
        above = [v for t, v in (series.points if series else ()) if first.at <= t <= steps[-1].at
                 and v > ev.spec.target_value]
        if above:
            lines.append(f"{series.name if series else ''} stayed above the target {ev.spec.target_value:g} "
                         f"({len(above)} datapoint(s), peak {max(above):g}) between {_when(first.at)} and "
                         f"{_when(steps[-1].at)}")
        out.append(_finding(
            ev, "cooldown-limited",
            f"scale-out was limited by the {cooldown} s cooldown: one alarm, then one step per cooldown while "
            "demand exceeded capacity",
            lines,
            f"lower `{ev.spec.config_path}.{setting}` (now {cooldown}) and deploy: while the alarm stays in ALARM "
            f"the policy is invoked about every {every:g} s and can add capacity each time the cooldown allows",
        ))
    return out


def _needed_to_fire(alarm: AlarmDefinition) -> float | None:
    """Smallest whole count of events in one period that trips the alarm, for Sum on a count metric."""
    if alarm.threshold is None or alarm.comparison is None:
        return None
    if alarm.comparison == "GreaterThanThreshold":
        return float(int(alarm.threshold) + 1)
    if alarm.comparison == "GreaterThanOrEqualToThreshold":
        return float(-(-alarm.threshold // 1))
    return None


def find_alarm_cannot_fire(ev: Evidence) -> list[Finding]:
    spec = ev.spec
    name = spec.scale_from_zero_alarm
    if not name:
        return []
    alarm = ev.alarms.get(name)  # a missing alarm is a broken scale-from-zero path (find_broken_paths)
    if alarm is None:
        return []
    problems, evidence = [], []
    needed = _needed_to_fire(alarm) if alarm.statistic == "Sum" else None
    if needed is not None and needed > 1:
        problems.append(f"`{alarm.comparison}` {alarm.threshold:g} on the Sum of {alarm.metric} needs "
                        f"{needed:g} failed requests in one {alarm.period} s period")
        quiet = [(t, v) for t, v in (ev.no_capacity.points if ev.no_capacity else ()) if 0 < v < needed]
        evidence += [f"{_when(t)} {v:g} request(s) failed for lack of capacity and the alarm did not fire" for t, v in quiet]
    periods = alarm.datapoints_to_alarm or alarm.evaluation_periods or 1
    if periods > 1:
        problems.append(f"it needs {periods} breaching periods of {alarm.period} s before it acts")
    res = ev.no_capacity.resolution if ev.no_capacity else None
    if alarm.period is not None and alarm.period < 60 and (alarm.state == "INSUFFICIENT_DATA" or (res or 0) >= 60):
        problems.append(f"its period of {alarm.period} s is finer than the metric"
                        + (f", which arrives every {res:g} s" if res else "") + f" (state {alarm.state})")
    if not problems:
        return []
    return [_finding(
        ev, "alarm-cannot-fire", f"the scale-from-zero alarm {name} cannot wake the component on the first request",
        [f"{name}: {p}" for p in problems] + _cap(evidence),
        "deploy with fastscale's scale-from-zero alarm: `GreaterThanOrEqualToThreshold` 1 on the Sum of "
        f"{NO_CAPACITY_METRIC} over 60 s (`{spec.config_path}.autoscaling.scale_from_zero`)",
    )]


# --------------------------------------------------------------------------------------------- scaling paths

PATH_SCALE_OUT = "target tracking scale-out"
PATH_SCALE_IN = "target tracking scale-in"
PATH_FROM_ZERO = "scale from zero"
PATH_INSTANCES = "managed instance scaling"


@dataclass(frozen=True)
class ScalingPath:
    """One way the config expects the target to scale, and what is missing or unwired on AWS's side."""

    name: str
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.name, "ok": self.ok, "problems": list(self.problems)}


def _alarm_problems(ev: Evidence, name: str, what: str) -> list[str]:
    alarm = ev.alarms.get(name)
    if alarm is None:
        return [f"its {what} alarm {name} does not exist (DescribeAlarms)"]
    if not alarm.actions_enabled:
        return [f"its {what} alarm {name} has its actions disabled (ActionsEnabled false)"]
    return []


def scaling_paths(ev: Evidence) -> list[ScalingPath]:
    """Every scaling path the config expects for the target, each checked to exist and be wired on AWS:
    target tracking (scale-out and scale-in), the step policy and alarm that bring a component back from
    zero copies, and the managed instance scaling that gives components' copies instances."""
    spec = ev.spec
    out: list[ScalingPath] = []
    unregistered = (f"no scalable target {spec.resource_id} is registered",) if not ev.registered else ()

    tt = next((p for p in ev.policies if p.name == spec.target_tracking_policy and p.type == TARGET_TRACKING), None)
    if unregistered:
        out += [ScalingPath(PATH_SCALE_OUT, unregistered), ScalingPath(PATH_SCALE_IN, unregistered)]
    elif tt is None:
        gone = (f"the target-tracking policy {spec.target_tracking_policy} does not exist (DescribeScalingPolicies)",)
        out += [ScalingPath(PATH_SCALE_OUT, gone), ScalingPath(PATH_SCALE_IN, gone)]
    else:
        high = [a for a in tt.alarms if "AlarmHigh" in a]
        low = [a for a in tt.alarms if "AlarmLow" in a]
        scale_out = [p for a in high for p in _alarm_problems(ev, a, "scale-out")]
        if not high:
            scale_out.append(f"the policy {tt.name} has no scale-out alarm (AlarmHigh)")
        scale_in = [p for a in low for p in _alarm_problems(ev, a, "scale-in")]
        if tt.disable_scale_in:
            scale_in.insert(0, f"the policy {tt.name} has DisableScaleIn true: target tracking never removes capacity")
        elif not low:
            scale_in.append(f"the policy {tt.name} has no scale-in alarm (AlarmLow)")
        out += [ScalingPath(PATH_SCALE_OUT, tuple(scale_out)), ScalingPath(PATH_SCALE_IN, tuple(scale_in))]

    if spec.scale_from_zero_policy and spec.scale_from_zero_alarm:
        problems = list(unregistered)
        step = next((p for p in ev.policies if p.name == spec.scale_from_zero_policy), None)
        if not unregistered and step is None:
            problems.append(f"the step-scaling policy {spec.scale_from_zero_policy} does not exist "
                            "(DescribeScalingPolicies)")
        alarm = ev.alarms.get(spec.scale_from_zero_alarm)
        problems += _alarm_problems(ev, spec.scale_from_zero_alarm, NO_CAPACITY_METRIC)
        if alarm is not None:
            if step is not None and step.arn and step.arn not in alarm.actions:
                problems.append(f"the alarm {alarm.name}'s actions do not include the step policy {step.name}")
            elif step is None and alarm.actions:
                problems.append(f"the alarm {alarm.name}'s action names a policy that no longer exists")
        out.append(ScalingPath(PATH_FROM_ZERO, tuple(problems)))

    r = ev.resource
    if spec.kind == "component" and r is not None and r.endpoint_status != "does not exist":
        problems = []
        if r.managed_scaling != "ENABLED":
            problems.append(f"the variant's ManagedInstanceScaling is {r.managed_scaling or 'not set'}: copies that "
                            "need another instance never get one")
        out.append(ScalingPath(PATH_INSTANCES, tuple(problems)))
    return out


def find_broken_paths(ev: Evidence) -> list[Finding]:
    """A finding for every expected scaling path that is missing or unwired (not-registered covers a target
    that is not registered at all)."""
    if not ev.registered:
        return []
    spec, r = ev.spec, ev.resource
    at_zero = r is not None and r.copies_current == 0
    out = []
    for path in scaling_paths(ev):
        if path.ok:
            continue
        evidence = [f"{path.name}: {p}" for p in path.problems]
        if path.name == PATH_FROM_ZERO:
            title = (f"{spec.component} is at 0 copies and its scale-from-zero path is broken: no request brings a "
                     "copy back" if at_zero else
                     "the scale-from-zero path is broken: once at 0 copies, no request brings a copy back")
            if at_zero and r is not None:
                evidence.append(f"{spec.component}: {r.copies_current} of {r.copies_desired} copies now "
                                f"(copies.min {spec.capacity_min})")
            out.append(_finding(
                ev, "scale-from-zero-broken", title, evidence,
                f"deploy again (`fastscale deploy`): it puts back the step policy {spec.scale_from_zero_policy} and "
                f"the alarm {spec.scale_from_zero_alarm} on {NO_CAPACITY_METRIC} with the policy as its action and "
                "actions enabled (`aws cloudwatch enable-alarm-actions --alarm-names "
                f"{spec.scale_from_zero_alarm}` re-enables disabled actions)",
            ))
        elif path.name == PATH_SCALE_IN and any("DisableScaleIn" in p for p in path.problems):
            floor = " (nor to zero)" if spec.capacity_min == 0 else ""
            out.append(_finding(
                ev, "scale-in-disabled", f"scale-in is disabled on the target-tracking policy: {spec.unit} are "
                f"never removed{floor}, and every one is billed", evidence,
                "fastscale never sets DisableScaleIn: deploy again (`fastscale deploy`) so the policy is as the "
                "config says",
            ))
        elif path.name == PATH_INSTANCES:
            out.append(_finding(
                ev, "instance-scaling-off", "managed instance scaling is off: copies cannot get new instances",
                evidence,
                f"deploy again: the endpoint configuration enables ManagedInstanceScaling with "
                f"`{spec.endpoint_path}.instances.min`/`max`",
            ))
        else:
            out.append(_finding(
                ev, "target-tracking-broken", f"the {path.name} path is missing or unwired", evidence,
                "deploy again (`fastscale deploy`): it puts back the target-tracking policy, and AWS re-creates "
                "its alarms; `aws cloudwatch enable-alarm-actions` re-enables disabled alarm actions",
            ))
    # Both target-tracking paths broken for the same reason (the policy is gone) is one problem.
    merged: dict[tuple[str, tuple[str, ...]], Finding] = {}
    for f in out:
        key = (f.code, tuple(e.split(": ", 1)[1] for e in f.evidence))
        merged.setdefault(key, f)
    return list(merged.values())


def find_copies_pending(ev: Evidence) -> list[Finding]:
    r, spec = ev.resource, ev.spec
    if spec.kind != "component" or r is None or r.copies_desired is None or r.copies_current is None:
        return []
    if r.copies_desired <= r.copies_current:
        return []
    limit = r.instances_max if r.instances_max is not None else spec.instances_max
    if r.instances_current is None or r.instances_current < limit:
        return []
    return [_finding(
        ev, "copies-pending", f"{r.copies_desired - r.copies_current} copy(ies) wait for an instance that may not be added",
        [f"{spec.component}: {r.copies_current} of {r.copies_desired} copies running",
         f"endpoint {spec.endpoint}: {r.instances_current} instance(s), managed instance scaling maximum {limit}"],
        f"raise `{spec.endpoint_path}.instances.max` (now {spec.instances_max}) so SageMaker can add an instance "
        "for the copies, or reserve fewer accelerators / less memory per copy so more copies share an instance",
    )]


#: (code, pattern, live StartupParameters key, config field, title, what to check first)
_STARTUP_FAILURES = (
    ("model-download", _DOWNLOAD, "ModelDataDownloadTimeoutInSeconds", "model_download_timeout",
     "the model download failed or ran out of time",
     "check the model data URL and that the execution role may read it; if the download is only slow, raise"),
    ("health-check", _HEALTH_CHECK, "ContainerStartupHealthCheckTimeoutInSeconds", "startup_health_check_timeout",
     "the container did not pass its start-up health check in time",
     "if the model only loads slowly raise (else fix the container: out of memory is common)"),
)


def find_startup_timeouts(ev: Evidence) -> list[Finding]:
    spec, out = ev.spec, []
    texts = _failure_texts(ev)
    startup = ev.resource.startup if ev.resource else {}
    for code, pattern, key, setting, title, advice in _STARTUP_FAILURES:
        hits = [f"{w}: {t}" for w, t in texts if pattern.search(t)]
        if not hits:
            continue
        live = startup.get(key, getattr(spec, setting))
        out.append(_finding(
            ev, code, title, _cap(hits),
            f"{advice} `{spec.config_path}.{setting}` (now {live or 'the SageMaker default'}; 60-3600 s); the "
            f"container log group /aws/sagemaker/Endpoints/{spec.endpoint} says why",
        ))
    return out


def find_scaling_suspended(ev: Evidence) -> list[Finding]:
    stopped = [k for k in ("DynamicScalingOutSuspended", "DynamicScalingInSuspended") if ev.suspended.get(k)]
    if not stopped:
        return []
    return [_finding(
        ev, "scaling-suspended", "dynamic scaling is suspended on the target",
        [f"{ev.spec.resource_id}: {', '.join(stopped)} = true"],
        "resume it: `aws application-autoscaling register-scalable-target --service-namespace sagemaker "
        f"--resource-id {ev.spec.resource_id} --scalable-dimension {ev.spec.dimension} --suspended-state "
        "DynamicScalingInSuspended=false,DynamicScalingOutSuspended=false` (an interrupted measurement can leave it)",
    )]


def find_not_registered(ev: Evidence) -> list[Finding]:
    if ev.registered:
        return []
    return [_finding(ev, "not-registered", "the target is not registered with Application Auto Scaling",
                     [f"DescribeScalableTargets has no {ev.spec.dimension} target {ev.spec.resource_id}"],
                     "deploy the stack (`fastscale deploy`): without a scalable target nothing scales it")]


_CLASSIFIED: tuple[re.Pattern[str], ...] = (_CAPACITY, _QUOTA, _QUOTA_LOOSE, _HEALTH_CHECK, _DOWNLOAD)


#: Not-scaled codes that are the configured bounds at work (max-reached covers the one that blocks scale-out).
_BOUND_CODES = frozenset({"AlreadyAtMaxCapacity", "AlreadyAtMinCapacity", "AlreadyAtDesiredCapacity"})


def find_other_failures(ev: Evidence) -> list[Finding]:
    """Failed activities, refusals by SageMaker and failed resources that no other finder explains."""
    lines = [f"{_when(a.at)} {a.status}: {a.message or a.description}" for a in ev.activities
             if a.status in _FAILED_ACTIVITY_STATUSES and not a.not_scaled
             and not any(p.search(a.text) for p in _CLASSIFIED)]
    lines += [f"{_when(a.at)} not scaled: {r.code}; cause: {a.cause}" for a in ev.activities for r in a.not_scaled
              if r.code not in _BOUND_CODES]
    r = ev.resource
    if r is not None:
        lines += [f"{where}: {text}" for where, text in r.messages()
                  if where.endswith("FailureReason") and not any(p.search(text) for p in _CLASSIFIED)]
    if not lines:
        return []
    return [_finding(ev, "scaling-failed", "scaling was refused or failed for a reason AWS states in its own words",
                     _cap(lines),
                     "act on AWS's message (TargetServicePutResourceAsUnscalable: the endpoint or component was "
                     "being updated; auto scaling retries once it is InService), then watch the next activity "
                     "(`aws application-autoscaling describe-scaling-activities --include-not-scaled-activities`)")]


FINDERS: tuple[Callable[[Evidence], list[Finding]], ...] = (
    find_not_registered,
    find_scaling_suspended,
    find_max_reached,
    find_insufficient_capacity,
    find_quota_reached,
    find_copies_pending,
    find_startup_timeouts,
    find_metric_problems,
    find_cooldown_holding,
    find_cooldown_limited,
    find_broken_paths,
    find_alarm_cannot_fire,
    find_other_failures,
)


def diagnose(ev: Evidence) -> list[Finding]:
    return [f for finder in FINDERS for f in finder(ev)]


# --------------------------------------------------------------------------------------------- timeline


@dataclass(frozen=True)
class TimelineEntry:
    at: datetime
    source: str  # "scaling", "alarm", "metric", "sagemaker"
    event: str

    def to_dict(self) -> dict[str, Any]:
        return {"at": _iso(self.at), "source": self.source, "event": self.event}


def timeline(ev: Evidence) -> list[TimelineEntry]:
    out: list[TimelineEntry] = []
    for a in ev.activities:
        if a.not_scaled:
            reasons = ", ".join(
                r.code + "".join(f" {k} {v}" for k, v in (("current", r.current), ("max", r.maximum), ("min", r.minimum))
                                 if v is not None) for r in a.not_scaled)
            out.append(TimelineEntry(a.at, "scaling", f"not scaled ({reasons}); cause: {a.cause}"))
        else:
            text = f"{a.description} {a.status}"
            if a.message:
                text += f": {a.message}"
            again = reinvoked_by(ev, a)
            note = ""
            if again is not None:
                since = f"since {_when(again[1])}" if again[1] is not None else "from before the window"
                note = (f"; re-invoked: {again[0]} in ALARM {since} (Auto Scaling actions repeat while the alarm "
                        "stays in ALARM)")
            out.append(TimelineEntry(a.at, "scaling", f"{text} (cause: {a.cause}{note})"))
    for c in ev.alarm_changes:
        out.append(TimelineEntry(c.at, "alarm", f"{c.role} alarm {c.alarm}: {c.old} -> {c.new}"
                                 + (f" ({c.reason})" if c.reason else "")))
    for act in ev.alarm_actions:
        out.append(TimelineEntry(act.at, "alarm", f"{act.role} alarm {act.alarm}: {act.summary}"))
    series = ev.scaling_metric
    if series and series.points:
        above = next(((t, v) for t, v in series.points if v > ev.spec.target_value), None)
        if above:
            out.append(TimelineEntry(above[0], "metric", f"{series.name} {above[1]:g} above the target "
                                     f"{ev.spec.target_value:g} (first datapoint above)"))
        top = max(series.points, key=lambda p: p[1])
        out.append(TimelineEntry(top[0], "metric", f"{series.name} peak {top[1]:g}"))
    if ev.no_capacity:
        first = next(((t, v) for t, v in ev.no_capacity.points if v > 0), None)
        if first:
            out.append(TimelineEntry(first[0], "metric", f"{NO_CAPACITY_METRIC} {first[1]:g} (first failed request "
                                     "for lack of capacity)"))
    r = ev.resource
    if r is not None:
        for s in r.stages:
            if s.at is not None:
                out.append(TimelineEntry(s.at, "sagemaker", f"variant {s.status}" + (f": {s.message}" if s.message else "")))
        now = f"endpoint {r.endpoint_status}"
        if r.instances_current is not None:
            now += f", {r.instances_current} instance(s)"
        if r.component_status:
            now += f"; component {r.component_status}, {r.copies_current} of {r.copies_desired} copies"
        for where, text in r.messages():
            if not where.startswith("variant"):
                now += f"; {where}: {text}"
        out.append(TimelineEntry(ev.window.end, "sagemaker", f"now: {now}"))
    order = {"metric": 0, "alarm": 1, "scaling": 2, "sagemaker": 3}  # cause before effect at the same second
    return sorted(out, key=lambda e: (e.at, order.get(e.source, 4)))


# --------------------------------------------------------------------------------------------- report


@dataclass
class TargetReport:
    evidence: Evidence
    findings: list[Finding]
    timeline: list[TimelineEntry]

    @property
    def paths(self) -> list[ScalingPath]:
        return scaling_paths(self.evidence)

    def to_dict(self) -> dict[str, Any]:
        ev, spec = self.evidence, self.evidence.spec
        metrics = [m.to_dict() for m in (ev.scaling_metric, ev.no_capacity, ev.invocations) if m is not None]
        return {
            "target": spec.label,
            "kind": spec.kind,
            "resource_id": spec.resource_id,
            "scalable_dimension": spec.dimension,
            "registered": ev.registered,
            "capacity": {"min": ev.capacity_min, "max": ev.capacity_max},
            "suspended": ev.suspended,
            "scaling_paths": [p.to_dict() for p in self.paths],
            "timeline": [e.to_dict() for e in self.timeline],
            "metrics": metrics,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass
class Explanation:
    window: Window
    targets: list[TargetReport]

    @property
    def findings(self) -> list[Finding]:
        return [f for t in self.targets for f in t.findings]

    @property
    def ok(self) -> bool:
        """Nothing found, and every scaling path the config expects exists and is wired."""
        return not self.findings and all(p.ok for t in self.targets for p in t.paths)

    def to_dict(self) -> dict[str, Any]:
        return {"window": self.window.to_dict(), "ok": self.ok, "findings": len(self.findings),
                "targets": [t.to_dict() for t in self.targets]}


def explain(evidence: list[Evidence]) -> Explanation:
    """Findings and timeline of every target (pure: no AWS)."""
    window = evidence[0].window if evidence else Window(datetime.now(UTC), datetime.now(UTC))
    return Explanation(window, [TargetReport(ev, diagnose(ev), timeline(ev)) for ev in evidence])


# --------------------------------------------------------------------------------------------- fetch


def _role(spec: TargetSpec, alarm: str) -> str:
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


def parse_activity(raw: dict[str, Any]) -> Activity:
    return Activity(
        at=raw["StartTime"], end=raw.get("EndTime"), status=raw.get("StatusCode", ""),
        description=raw.get("Description", ""), cause=raw.get("Cause", ""), message=raw.get("StatusMessage", ""),
        not_scaled=tuple(NotScaled(r["Code"], r.get("CurrentCapacity"), r.get("MinCapacity"), r.get("MaxCapacity"))
                         for r in raw.get("NotScaledReasons", [])),
        activity_id=raw.get("ActivityId", ""),
    )


def parse_policy(raw: dict[str, Any]) -> Policy:
    tt = raw.get("TargetTrackingScalingPolicyConfiguration") or {}
    step = raw.get("StepScalingPolicyConfiguration") or {}
    return Policy(
        name=raw["PolicyName"], type=raw.get("PolicyType", ""), arn=raw.get("PolicyARN", ""),
        metric_type=(tt.get("PredefinedMetricSpecification") or {}).get("PredefinedMetricType"),
        target_value=tt.get("TargetValue"), scale_out_cooldown=int(tt.get("ScaleOutCooldown", 0)),
        scale_in_cooldown=int(tt.get("ScaleInCooldown", 0)), step_cooldown=int(step.get("Cooldown", 0)),
        alarms=tuple(a["AlarmName"] for a in raw.get("Alarms", [])),
        disable_scale_in=bool(tt.get("DisableScaleIn", False)),
    )


def parse_alarm(raw: dict[str, Any], role: str) -> AlarmDefinition:
    return AlarmDefinition(
        name=raw["AlarmName"], role=role, namespace=raw.get("Namespace"), metric=raw.get("MetricName"),
        statistic=raw.get("Statistic") or raw.get("ExtendedStatistic"), comparison=raw.get("ComparisonOperator"),
        threshold=raw.get("Threshold"), period=raw.get("Period"), evaluation_periods=raw.get("EvaluationPeriods"),
        datapoints_to_alarm=raw.get("DatapointsToAlarm"), actions_enabled=bool(raw.get("ActionsEnabled", True)),
        actions=tuple(raw.get("AlarmActions", [])), state=raw.get("StateValue"),
    )


_SUMMARY = re.compile(r"from (\w+) to (\w+)")


def parse_history(item: dict[str, Any], role: str) -> AlarmChange | AlarmAction | None:
    kind = item.get("HistoryItemType")
    name, at, summary = item.get("AlarmName", ""), item["Timestamp"], item.get("HistorySummary", "")
    if kind == "Action":
        return AlarmAction(at, name, role, summary)
    if kind != "StateUpdate":
        return None
    old = new = reason = ""
    try:
        data = json.loads(item.get("HistoryData") or "{}")
        old = data.get("oldState", {}).get("stateValue", "")
        new = data.get("newState", {}).get("stateValue", "")
        reason = data.get("newState", {}).get("stateReason", "")
    except (ValueError, AttributeError):
        pass
    if not new:
        m = _SUMMARY.search(summary)
        old, new = (m.group(1), m.group(2)) if m else ("", summary)
    return AlarmChange(at, name, role, old, new, reason)


def parse_resource(endpoint: dict[str, Any] | None, component: dict[str, Any] | None, variant: str) -> ResourceState:
    if endpoint is None:
        return ResourceState("does not exist")
    v: dict[str, Any] = next((x for x in endpoint.get("ProductionVariants", []) if x.get("VariantName") == variant), {})
    mis = v.get("ManagedInstanceScaling") or {}
    state = ResourceState(
        endpoint_status=endpoint.get("EndpointStatus", "unknown"), endpoint_failure=endpoint.get("FailureReason", ""),
        stages=tuple(VariantStage(s["Status"], s.get("StatusMessage", ""), s.get("StartTime"))
                     for s in v.get("VariantStatus", [])),
        instances_current=v.get("CurrentInstanceCount"), instances_desired=v.get("DesiredInstanceCount"),
        instances_max=mis.get("MaxInstanceCount") if mis.get("Status") == "ENABLED" else None,
        managed_scaling=mis.get("Status"),
        instance_pools=tuple(p["InstanceType"] for p in v.get("InstancePools", [])),
    )
    if component is None:
        return state
    runtime = component.get("RuntimeConfig", {})
    specification = component.get("Specification") or {}
    return ResourceState(
        **{k: getattr(state, k) for k in ("endpoint_status", "endpoint_failure", "stages", "instances_current",
                                          "instances_desired", "instances_max", "managed_scaling",
                                          "instance_pools")},
        component_status=component.get("InferenceComponentStatus", "unknown"),
        component_failure=component.get("FailureReason", ""),
        copies_current=runtime.get("CurrentCopyCount"), copies_desired=runtime.get("DesiredCopyCount"),
        startup=dict(specification.get("StartupParameters") or {}),
    )


def parse_metric(result: dict[str, Any] | None, name: str, stat: str, period: int) -> MetricSeries:
    if result is None:
        return MetricSeries(name, stat, period)
    points = tuple(sorted(zip(result.get("Timestamps", []), result.get("Values", [])), key=lambda p: p[0]))
    return MetricSeries(name, stat, period, points, result.get("StatusCode", "Complete"))


class _Collector:
    """Reads AWS for each target; describe calls shared by several targets are made once."""

    def __init__(self, aws: AwsClients, window: Window):
        self.aws, self.window = aws, window
        self._endpoints: dict[str, dict[str, Any] | None] = {}
        self._history: dict[str, list[dict[str, Any]]] = {}

    def endpoint(self, name: str) -> dict[str, Any] | None:
        if name not in self._endpoints:
            try:
                self._endpoints[name] = self.aws.sagemaker.describe_endpoint(EndpointName=name)
            except ClientError as exc:
                if not is_not_found(exc):
                    raise
                self._endpoints[name] = None
        return self._endpoints[name]

    def component(self, name: str) -> dict[str, Any] | None:
        try:
            desc: dict[str, Any] = self.aws.sagemaker.describe_inference_component(InferenceComponentName=name)
            return desc
        except ClientError as exc:
            if not is_not_found(exc):
                raise
            return None

    def activities(self, spec: TargetSpec) -> list[Activity]:
        """Newest first, as AWS returns them; pages stop once they reach before the window."""
        out: list[Activity] = []
        params: dict[str, Any] = {"ServiceNamespace": SERVICE_NAMESPACE, "ResourceId": spec.resource_id,
                                  "ScalableDimension": spec.dimension, "IncludeNotScaledActivities": True}
        while True:
            page = self.aws.autoscaling.describe_scaling_activities(**params)
            acts = [parse_activity(a) for a in page.get("ScalingActivities", [])]
            out += [a for a in acts if self.window.start <= a.at <= self.window.end]
            token = page.get("NextToken")
            if not token or any(a.at < self.window.start for a in acts):
                return out
            params["NextToken"] = token

    def history(self, alarm: str) -> list[dict[str, Any]]:
        if alarm not in self._history:
            self._history[alarm] = list(paginate(
                self.aws.cloudwatch, "describe_alarm_history", "AlarmHistoryItems", AlarmName=alarm,
                StartDate=self.window.start, EndDate=self.window.end, ScanBy="TimestampAscending",
            ))
        return self._history[alarm]

    def metrics(self, spec: TargetSpec) -> tuple[MetricSeries, MetricSeries | None, MetricSeries]:
        period = self.window.metric_period
        if spec.kind == "component":
            dims = [{"Name": "InferenceComponentName", "Value": spec.name}]
        else:
            dims = [{"Name": "EndpointName", "Value": spec.endpoint}, {"Name": "VariantName", "Value": spec.variant}]
        variant_dims = [{"Name": "EndpointName", "Value": spec.endpoint}, {"Name": "VariantName", "Value": spec.variant}]
        queries = [_query("scaling", spec.metric.cloudwatch_metric, dims, "Average", period),
                   _query("invocations", INVOCATIONS_METRIC, variant_dims, "Sum", period)]
        if spec.kind == "component":
            queries.append(_query("nocapacity", NO_CAPACITY_METRIC, dims, "Sum", period))
        results: dict[str, dict[str, Any]] = {}
        for page in self.aws.cloudwatch.get_paginator("get_metric_data").paginate(
            MetricDataQueries=queries, StartTime=self.window.start, EndTime=self.window.end,
            ScanBy="TimestampAscending",
        ):
            for r in page.get("MetricDataResults", []):
                merged = results.setdefault(r["Id"], {"Timestamps": [], "Values": [], "StatusCode": r.get("StatusCode")})
                merged["Timestamps"] += r.get("Timestamps", [])
                merged["Values"] += r.get("Values", [])
                merged["StatusCode"] = r.get("StatusCode", merged["StatusCode"])
        return (
            parse_metric(results.get("scaling"), spec.metric.cloudwatch_metric, "Average", period),
            parse_metric(results.get("nocapacity"), NO_CAPACITY_METRIC, "Sum", period) if spec.kind == "component" else None,
            parse_metric(results.get("invocations"), INVOCATIONS_METRIC, "Sum", period),
        )

    def evidence(self, spec: TargetSpec) -> Evidence:
        ev = Evidence(spec, self.window)
        aas = self.aws.autoscaling
        targets = aas.describe_scalable_targets(ServiceNamespace=SERVICE_NAMESPACE, ResourceIds=[spec.resource_id],
                                                ScalableDimension=spec.dimension).get("ScalableTargets", [])
        if targets:
            t = targets[0]
            ev.capacity_min, ev.capacity_max = t.get("MinCapacity"), t.get("MaxCapacity")
            ev.suspended = {k: bool(v) for k, v in (t.get("SuspendedState") or {}).items()}
        else:
            ev.registered = False
        ev.policies = [parse_policy(p) for p in paginate(
            aas, "describe_scaling_policies", "ScalingPolicies", ServiceNamespace=SERVICE_NAMESPACE,
            ResourceId=spec.resource_id, ScalableDimension=spec.dimension)]
        ev.activities = self.activities(spec)

        names = [a for p in ev.policies for a in p.alarms]
        names += [n for n in (spec.scale_from_zero_alarm, spec.stuck_at_zero_alarm, *spec.operational_alarms) if n]
        names = list(dict.fromkeys(names))
        found = {a["AlarmName"]: a for a in paginate(self.aws.cloudwatch, "describe_alarms", "MetricAlarms",
                                                      AlarmNames=names)} if names else {}
        ev.alarms = {n: parse_alarm(found[n], _role(spec, n)) for n in names if n in found}
        ev.missing_alarms = [n for n in names if n not in found]
        for n in ev.alarms:
            for item in self.history(n):
                parsed = parse_history(item, _role(spec, n))
                if isinstance(parsed, AlarmChange):
                    ev.alarm_changes.append(parsed)
                elif isinstance(parsed, AlarmAction):
                    ev.alarm_actions.append(parsed)

        ev.scaling_metric, ev.no_capacity, ev.invocations = self.metrics(spec)
        endpoint = self.endpoint(spec.endpoint)
        component = self.component(spec.component) if spec.component and endpoint is not None else None
        ev.resource = parse_resource(endpoint, component, spec.variant)
        return ev


def _query(qid: str, metric: str, dims: list[dict[str, str]], stat: str, period: int) -> dict[str, Any]:
    return {"Id": qid, "ReturnData": True, "MetricStat": {
        "Metric": {"Namespace": NS_INVOCATIONS, "MetricName": metric, "Dimensions": dims},
        "Period": period, "Stat": stat}}


@translate_errors
def collect(
    config: FastscaleConfig,
    clients: ClientsArg = None,
    *,
    since: timedelta,
    now: datetime,
    endpoint: str | None = None,
    component: str | None = None,
) -> list[Evidence]:
    """Read the evidence of every selected target over ``[now - since, now]``.

    Raises TargetSelectionError for names not in the config (before any AWS call) and AwsError when AWS
    cannot be used at all.
    """
    specs = targets_of(config, endpoint, component)
    collector = _Collector(resolve(clients, config), Window(now - since, now))
    return [collector.evidence(s) for s in specs]
