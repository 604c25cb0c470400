"""Read AWS (Application Auto Scaling, CloudWatch, SageMaker) for each target and turn the answers into the
typed events of :mod:`.model`."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import AwsClients, ClientsArg, is_not_found, paginate, resolve, translate_errors
from fastscale.infra.aws.explain.model import (
    INVOCATIONS_METRIC,
    Activity,
    AlarmAction,
    AlarmChange,
    AlarmDefinition,
    Evidence,
    MetricSeries,
    NotScaled,
    Policy,
    ResourceState,
    TargetSpec,
    VariantStage,
    Window,
    alarm_role,
    targets_of,
)
from fastscale.infra.base.aws_facts import (
    NO_CAPACITY_METRIC,
    NS_INVOCATIONS,
    SERVICE_NAMESPACE,
)
from fastscale.infra.model.resolved import ResolvedStack


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
        ev.alarms = {n: parse_alarm(found[n], alarm_role(spec, n)) for n in names if n in found}
        ev.missing_alarms = [n for n in names if n not in found]
        for n in ev.alarms:
            for item in self.history(n):
                parsed = parse_history(item, alarm_role(spec, n))
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
    stack: ResolvedStack,
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
    specs = targets_of(stack, endpoint, component)
    collector = _Collector(resolve(clients, stack), Window(now - since, now))
    return [collector.evidence(s) for s in specs]
