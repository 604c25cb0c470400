"""The finders for the scaling set-up itself: a target not registered with Application Auto Scaling, dynamic
scaling suspended on it, and a scaling path (target tracking out and in, scale from zero, managed instance
scaling) that is missing or unwired (:mod:`..paths` says which paths a target should have).

:mod:`.capacity` and :mod:`.detection` hold the other finders.
"""

from __future__ import annotations

from fastscale.infra.aws.explain.diagnoses.common import finding
from fastscale.infra.aws.explain.model import Evidence, Finding
from fastscale.infra.aws.explain.paths import PATH_FROM_ZERO, PATH_INSTANCES, PATH_SCALE_IN, scaling_paths
from fastscale.infra.base.aws_facts import NO_CAPACITY_METRIC


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
            out.append(finding(
                ev, "scale-from-zero-broken", title, evidence,
                f"deploy again (`fastscale deploy`): it puts back the step policy {spec.scale_from_zero_policy} and "
                f"the alarm {spec.scale_from_zero_alarm} on {NO_CAPACITY_METRIC} with the policy as its action and "
                "actions enabled (`aws cloudwatch enable-alarm-actions --alarm-names "
                f"{spec.scale_from_zero_alarm}` re-enables disabled actions)",
            ))
        elif path.name == PATH_SCALE_IN and any("DisableScaleIn" in p for p in path.problems):
            floor = " (nor to zero)" if spec.capacity_min == 0 else ""
            out.append(finding(
                ev, "scale-in-disabled", f"scale-in is disabled on the target-tracking policy: {spec.unit} are "
                f"never removed{floor}, and every one is billed", evidence,
                "fastscale never sets DisableScaleIn: deploy again (`fastscale deploy`) so the policy is as the "
                "config says",
            ))
        elif path.name == PATH_INSTANCES:
            out.append(finding(
                ev, "instance-scaling-off", "managed instance scaling is off: copies cannot get new instances",
                evidence,
                f"deploy again: the endpoint configuration enables ManagedInstanceScaling with "
                f"`{spec.endpoint_path}.instances.min`/`max`",
            ))
        else:
            out.append(finding(
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


def find_scaling_suspended(ev: Evidence) -> list[Finding]:
    stopped = [k for k in ("DynamicScalingOutSuspended", "DynamicScalingInSuspended") if ev.suspended.get(k)]
    if not stopped:
        return []
    return [finding(
        ev, "scaling-suspended", "dynamic scaling is suspended on the target",
        [f"{ev.spec.resource_id}: {', '.join(stopped)} = true"],
        "resume it: `aws application-autoscaling register-scalable-target --service-namespace sagemaker "
        f"--resource-id {ev.spec.resource_id} --scalable-dimension {ev.spec.dimension} --suspended-state "
        "DynamicScalingInSuspended=false,DynamicScalingOutSuspended=false` (an interrupted measurement can leave it)",
    )]


def find_not_registered(ev: Evidence) -> list[Finding]:
    if ev.registered:
        return []
    return [finding(ev, "not-registered", "the target is not registered with Application Auto Scaling",
                     [f"DescribeScalableTargets has no {ev.spec.dimension} target {ev.spec.resource_id}"],
                     "deploy the stack (`fastscale deploy`): without a scalable target nothing scales it")]

