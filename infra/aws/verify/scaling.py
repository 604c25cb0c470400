"""The checks of what scales an endpoint: the scalable targets (registered, with the config's bounds), the
target-tracking policies (type, metric, target value, cooldowns), the scale-from-zero step policy, and the
alarms (each exists; the scale-from-zero alarm watches the right metric and is wired to its policy).

Functions over a :class:`.report.Checker`, called by :mod:`.live` for every endpoint after its other checks.
"""

from __future__ import annotations

from typing import Any

from fastscale.infra.aws.clients import chunks, paginate
from fastscale.infra.aws.verify.report import Checker, text_of
from fastscale.infra.base.aws_facts import (
    COMPONENT_COPIES,
    NO_CAPACITY_METRIC,
    NS_INVOCATIONS,
    SCALE_FROM_ZERO_STEP,
    SERVICE_NAMESPACE,
    TARGET_TRACKING,
    VARIANT_INSTANCES,
)
from fastscale.infra.config import Autoscaling
from fastscale.infra.model.detection import WorkloadKind, scaling_metric
from fastscale.infra.model.naming import ComponentNames, EndpointNames


def check_scaling(v: Checker, n: EndpointNames) -> dict[str, str]:
    """Check scalable targets and policies; returns step-policy name -> ARN for the alarm checks."""
    ep = n.spec
    wanted: list[tuple[str, str, int, int, str | None, WorkloadKind, Autoscaling, ComponentNames | None]] = []
    if ep.model is not None and ep.model.autoscaling.enabled:
        wanted.append(
            (n.resource_id, VARIANT_INSTANCES, ep.instances.min, ep.instances.max, n.target_tracking_policy, "model", ep.model.autoscaling, None)
        )
    for c in n.components:
        if c.spec.autoscaling.enabled:
            cp = c.spec.copies
            wanted.append((c.resource_id, COMPONENT_COPIES, cp.min, cp.max, c.target_tracking_policy, "component", c.spec.autoscaling, c))
    if not wanted:
        return {}
    aas = v.aws.autoscaling
    targets: dict[tuple[str, str], dict[str, Any]] = {}
    for ids in chunks([w[0] for w in wanted], 50):
        for t in paginate(aas, "describe_scalable_targets", "ScalableTargets", ServiceNamespace=SERVICE_NAMESPACE, ResourceIds=ids):
            targets[(t["ResourceId"], t["ScalableDimension"])] = t

    step_arns: dict[str, str] = {}
    for rid, dim, lo, hi, tt_name, kind, autoscaling, comp in wanted:
        res = f"scalable-target/{rid}"
        target = targets.get((rid, dim))
        if target is None:
            v.record(res, "registered", False, f"{dim} min {lo} max {hi}", "not registered")
        else:
            v.compare(res, "capacity", f"min {lo} max {hi}", f"min {target['MinCapacity']} max {target['MaxCapacity']}")
        policies = {
            p["PolicyName"]: p
            for p in paginate(aas, "describe_scaling_policies", "ScalingPolicies", ServiceNamespace=SERVICE_NAMESPACE, ResourceId=rid)
        }
        if tt_name:
            _target_tracking(v, tt_name, policies.get(tt_name), scaling_metric(kind, autoscaling).predefined_metric_type, autoscaling)
        if comp is not None and comp.scale_from_zero_policy:
            arn = _step_policy(v, comp.scale_from_zero_policy, policies.get(comp.scale_from_zero_policy), autoscaling)
            if arn:
                step_arns[comp.scale_from_zero_policy] = arn
    return step_arns


def _target_tracking(v: Checker, name: str, policy: dict[str, Any] | None, expected_metric: str, autoscaling: Autoscaling) -> None:
    res = f"scaling-policy/{name}"
    if policy is None:
        v.record(res, "exists", False, f"{TARGET_TRACKING} on {expected_metric}", "does not exist")
        return
    if not v.compare(res, "policy type", TARGET_TRACKING, policy.get("PolicyType")):
        return
    cfg = policy.get("TargetTrackingScalingPolicyConfiguration", {})
    predefined = cfg.get("PredefinedMetricSpecification", {}).get("PredefinedMetricType")
    actual = predefined or ("a customized metric" if cfg.get("CustomizedMetricSpecification") else "none")
    detail = ""
    if predefined != expected_metric:
        detail = (
            "only the predefined HighResolution types give 10-second target tracking (scale-out in ~30 s)"
            if autoscaling.metric == "high_resolution"
            else "the config asks for the 1-minute invocations metric"
        )
    v.compare(res, "target-tracking metric", expected_metric, actual, detail)
    v.compare(res, "target value", autoscaling.tracking_target, cfg.get("TargetValue"))
    v.compare(
        res,
        "cooldowns",
        f"scale-in {autoscaling.scale_in_cooldown} s, scale-out {autoscaling.scale_out_cooldown} s",
        f"scale-in {cfg.get('ScaleInCooldown', 0)} s, scale-out {cfg.get('ScaleOutCooldown', 0)} s",
    )


def _step_policy(v: Checker, name: str, policy: dict[str, Any] | None, autoscaling: Autoscaling) -> str | None:
    res = f"scaling-policy/{name}"
    expected = SCALE_FROM_ZERO_STEP.describe(autoscaling.scale_from_zero.cooldown)
    if policy is None:
        v.record(res, "exists", False, expected, "does not exist")
        return None
    cfg = policy.get("StepScalingPolicyConfiguration", {})
    steps = cfg.get("StepAdjustments", [])
    step_text = ", ".join(
        f"{s.get('ScalingAdjustment', 0):+d} at >= {text_of(s.get('MetricIntervalLowerBound'))}" for s in steps
    ) or "no steps"
    actual = (
        f"{policy.get('PolicyType')} {cfg.get('AdjustmentType')} {step_text}, "
        f"{cfg.get('MetricAggregationType')}, cooldown {cfg.get('Cooldown')} s"
    )
    v.compare(res, "scale-from-zero step policy", expected, actual)
    return policy.get("PolicyARN")


def check_alarms(v: Checker, n: EndpointNames, step_arns: dict[str, str]) -> None:
    names = n.all_alarm_names
    if not names:
        return
    found: dict[str, dict[str, Any]] = {}
    for batch in chunks(names, 100):
        for described in paginate(v.aws.cloudwatch, "describe_alarms", "MetricAlarms", AlarmNames=batch):
            found[described["AlarmName"]] = described
    wiring = {c.scale_from_zero_alarm: c for c in n.components if c.scale_from_zero_alarm}
    for name in names:
        alarm = found.get(name)
        res = f"alarm/{name}"
        if alarm is None:
            v.record(res, "exists", False, "exists", "does not exist")
            continue
        comp = wiring.get(name)
        if comp is None:
            v.record(res, "exists", True)
        else:
            _scale_from_zero_alarm(v, res, alarm, comp, step_arns.get(comp.scale_from_zero_policy or ""))


def _scale_from_zero_alarm(v: Checker, res: str, alarm: dict[str, Any], comp: ComponentNames, policy_arn: str | None) -> None:
    zero = comp.spec.autoscaling.scale_from_zero
    v.compare(
        res, "metric", f"{NS_INVOCATIONS} {NO_CAPACITY_METRIC}", f"{alarm.get('Namespace')} {alarm.get('MetricName')}"
    )
    dims = ", ".join(f"{d['Name']}={d['Value']}" for d in alarm.get("Dimensions", [])) or "none"
    v.compare(res, "dimension", f"InferenceComponentName={comp.name}", dims)
    v.compare(res, "statistic", "Sum", alarm.get("Statistic") or alarm.get("ExtendedStatistic"))
    v.compare(
        res,
        "threshold",
        "GreaterThanOrEqualToThreshold 1",
        f"{alarm.get('ComparisonOperator')} {text_of(alarm.get('Threshold'))}",
        "" if alarm.get("ComparisonOperator") == "GreaterThanOrEqualToThreshold" else "the first failed request must trip the alarm",
    )
    v.compare(
        res,
        "period",
        f"{zero.period} s x {zero.evaluation_periods}",
        f"{alarm.get('Period')} s x {alarm.get('EvaluationPeriods')}",
    )
    actions = alarm.get("AlarmActions", [])
    if policy_arn is None:
        v.record(
            res,
            "wired to step policy",
            False,
            f"action {comp.scale_from_zero_policy}",
            ", ".join(actions) or "no actions",
            "the step policy does not exist, so nothing adds the first copy",
        )
    else:
        v.record(
            res,
            "wired to step policy",
            policy_arn in actions,
            policy_arn,
            ", ".join(actions) or "no actions",
            "" if policy_arn in actions else "a component scaled to zero will never get its first copy back",
        )
