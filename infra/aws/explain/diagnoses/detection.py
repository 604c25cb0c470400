"""The finders for demand that was seen late or acted on slowly: the live policy on another metric, a metric with
no datapoints or at a coarser resolution than the policy expects, a scale-out cooldown that held one back or set
the pace while the alarm stayed in ALARM, and a scale-from-zero alarm that cannot fire on the first request.

Also :func:`reinvoked_by`, which the timeline uses to tell an alarm's re-invocation from its change to ALARM.
:mod:`.capacity` and :mod:`.wiring` hold the other finders.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from fastscale.infra.analysis.simulate.params import load_params
from fastscale.infra.aws.explain.diagnoses.common import FAILED_ACTIVITY_STATUSES, cap, finding
from fastscale.infra.aws.explain.model import (
    INVOCATIONS_METRIC,
    Activity,
    AlarmDefinition,
    Evidence,
    Finding,
    clock_time,
)
from fastscale.infra.base.aws_facts import NO_CAPACITY_METRIC, TARGET_TRACKING


def find_metric_problems(ev: Evidence) -> list[Finding]:
    spec, out = ev.spec, []
    tt = next((p for p in ev.policies if p.type == TARGET_TRACKING), None)
    if tt is not None and tt.metric_type and tt.metric_type != spec.metric.predefined_metric_type:
        out.append(finding(
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
        out.append(finding(
            ev, "metric-missing", f"{series.name} had no datapoint while requests came in, so target tracking saw nothing",
            [f"{series.name} ({series.stat}, {series.period} s): 0 datapoints in the window",
             f"{INVOCATIONS_METRIC} peaked at {traffic:g} per datapoint"],
            f"{series.name} is only published for the high-resolution metric setup: check the endpoint "
            f"configuration's MetricsConfig (`{spec.endpoint_path}.metrics_publish_frequency`) and that the "
            "component receives its own invocations (InferenceComponentName on each request)",
        ))
    expected = spec.metric.period_s
    if series.resolution is not None and ev.window.metric_period < 60 and series.resolution > expected:
        out.append(finding(
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
    return [finding(
        ev, "cooldown", "a scale-out cooldown held back a scale-out that was asked for", cap(lines),
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
    scale_outs = sorted((a for a in ev.activities if not a.not_scaled and a.status not in FAILED_ACTIVITY_STATUSES
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
        out.append(finding(
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
    return [finding(
        ev, "alarm-cannot-fire", f"the scale-from-zero alarm {name} cannot wake the component on the first request",
        [f"{name}: {p}" for p in problems] + cap(evidence),
        "deploy with fastscale's scale-from-zero alarm: `GreaterThanOrEqualToThreshold` 1 on the Sum of "
        f"{NO_CAPACITY_METRIC} over 60 s (`{spec.config_path}.autoscaling.scale_from_zero`)",
    )]

