"""The finders: pure functions ``Evidence -> list[Finding]``, one per cause, each finding with the evidence
that proves it and the fix. AWS only states a cause in free text (``StatusMessage``, ``FailureReason``), so the
finders match the wording AWS uses, quoted in the patterns below; anything failed that matches none is still
reported with AWS's own words."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta

from fastscale.infra.analysis.simulate.params import load_params
from fastscale.infra.aws.explain.model import (
    INVOCATIONS_METRIC,
    Activity,
    AlarmDefinition,
    Evidence,
    Finding,
    clock_time,
)
from fastscale.infra.aws.explain.paths import PATH_FROM_ZERO, PATH_INSTANCES, PATH_SCALE_IN, scaling_paths
from fastscale.infra.base.aws_facts import (
    NO_CAPACITY_METRIC,
    TARGET_TRACKING,
)

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



def _finding(ev: Evidence, code: str, title: str, evidence: Iterable[str], fix: str) -> Finding:
    return Finding(code, ev.spec.label, title, tuple(evidence), fix)


def _failure_texts(ev: Evidence) -> list[tuple[str, str]]:
    """(where, text) of every failed activity message and every SageMaker failure reason."""
    out = [(f"{clock_time(a.at)} scaling activity {a.status}", a.message or a.description)
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
    lines = [f"{clock_time(a.at)} not scaled: AlreadyAtMaxCapacity (max {maximum}); cause: {a.cause}" for a in blocked]
    spec = ev.spec
    return [_finding(
        ev, "max-reached", f"scale-out was wanted but the maximum of {maximum} {spec.unit} was reached",
        _cap(lines) + [f"{len(blocked)} scale-out decision(s) blocked between {clock_time(blocked[-1].at)} and {clock_time(blocked[0].at)}"
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
            lines.append(f"{clock_time(change.at)} {change.alarm} went to ALARM {held:.0f} s inside the {cooldown} s cooldown "
                         f"of the scale-out at {clock_time(last.at)}")
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
        went = (f"went to ALARM once at {clock_time(since)}" if since is not None
                else "was in ALARM from before the window") + " and stayed there"
        lines = [
            f"{alarm} {went}: CloudWatch invokes Auto Scaling actions again about every {every:g} s while an alarm "
            "stays in ALARM (only other actions wait for a state change), so the demand was there throughout",
            "scale-outs at " + ", ".join(f"{clock_time(a.at)}" + (f" (to {a.desired})" if a.desired is not None else "")
                                         for a in steps)
            + f": {', '.join(f'{(b.at - a.at).total_seconds():.0f} s' for a, b in paced)} apart, the policy "
              f"{policy}'s {cooldown} s cooldown; the invocations in between added nothing",
        ]
        series = ev.scaling_metric
        above = [v for t, v in (series.points if series else ()) if first.at <= t <= steps[-1].at
                 and v > ev.spec.target_value]
        if above:
            lines.append(f"{series.name if series else ''} stayed above the target {ev.spec.target_value:g} "
                         f"({len(above)} datapoint(s), peak {max(above):g}) between {clock_time(first.at)} and "
                         f"{clock_time(steps[-1].at)}")
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
        evidence += [f"{clock_time(t)} {v:g} request(s) failed for lack of capacity and the alarm did not fire" for t, v in quiet]
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
    lines = [f"{clock_time(a.at)} {a.status}: {a.message or a.description}" for a in ev.activities
             if a.status in _FAILED_ACTIVITY_STATUSES and not a.not_scaled
             and not any(p.search(a.text) for p in _CLASSIFIED)]
    lines += [f"{clock_time(a.at)} not scaled: {r.code}; cause: {a.cause}" for a in ev.activities for r in a.not_scaled
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


