"""The scaling paths the config expects for a target (target tracking out and in, scale from zero, managed
instance scaling), each checked to exist and be wired on AWS's side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fastscale.infra.aws.explain.model import Evidence
from fastscale.infra.base.aws_facts import (
    NO_CAPACITY_METRIC,
    TARGET_TRACKING,
)

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


