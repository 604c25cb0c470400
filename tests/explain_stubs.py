"""Recorded-style AWS answers for `explain`: what Application Auto Scaling, CloudWatch and SageMaker return
around a traffic spike, in their own wording, queued on botocore Stubbers (which check every request and
response against the real service models).

A :class:`Recorded` starts as a healthy scale-out of one inference component; each test changes the part
that makes its scenario, then :meth:`Recorded.run` plays it through :func:`collect`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from botocore.stub import ANY, Stubber

from fastscale.infra.aws.explain import Evidence, collect
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.resolved import resolve

REGION = "us-east-1"
ACCOUNT = "123456789012"
NOW = datetime(2026, 3, 12, 12, 0, tzinfo=UTC)
SINCE = timedelta(hours=3)
SPIKE = NOW - timedelta(hours=1)  # traffic starts rising here
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"

IC, EP = "demo-qwen", "demo-shared"
IC_RID = f"inference-component/{IC}"
IC_DIM = "sagemaker:inference-component:DesiredCopyCount"
CHAT, CHAT_RID, VARIANT_DIM = "demo-chat", "endpoint/demo-chat/variant/AllTraffic", "sagemaker:variant:DesiredInstanceCount"
ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint"

#: The wording AWS uses (SageMaker FailureReason and Application Auto Scaling StatusMessage).
ICE_REASON = ("Unable to provision requested ML compute capacity due to InsufficientInstanceCapacity error. "
              "Please retry using a different ML instance type or after some time.")
QUOTA_MESSAGE = ("Failed to set desired instance count to 3. Reason: The account-level service limit "
                 "'ml.g6.2xlarge for endpoint usage' is 2 Instances, with current utilization of 2 Instances and a "
                 "request delta of 1 Instances. Please contact AWS support to request an increase for this limit. "
                 "(Service: AmazonSageMaker; Status Code: 400; Error Code: ResourceLimitExceeded; "
                 "Request ID: 5b1d6f6e-7c1a-4b8e-9a0e-2f4d1c3b9e71)")
HEALTH_REASON = ("The primary container for production variant AllTraffic did not pass the ping health check. "
                 "Please check CloudWatch logs for this endpoint.")
DOWNLOAD_REASON = ('Failed to download model data for container "qwen" from URL: "s3://demo-models/qwen3-8b/". '
                   "Please ensure that there is an object located at the URL and that the role passed to "
                   "CreateModel has permissions to download the object.")

CONFIG: dict[str, Any] = {
    "project": "demo",
    "region": REGION,
    "endpoints": [
        {
            "name": "shared",
            "instance_type": "ml.g6.12xlarge",
            "instances": {"initial": 1, "min": 0, "max": 2},
            "metrics_publish_frequency": 10,
            "inference_components": [
                {"name": "qwen", "image": LMI, "model_data": "s3://demo-models/qwen3-8b/", "model_size_gb": 16,
                 "resources": {"accelerators": 1, "memory_mb": 32768},
                 "copies": {"initial": 1, "min": 0, "max": 4},
                 "autoscaling": {"target_concurrency": 4}},
            ],
        },
        {
            "name": "chat",
            "instance_type": "ml.g6.2xlarge",
            "instances": {"initial": 1, "min": 1, "max": 3},
            "model": {"image": LMI, "model_data": "s3://demo-models/qwen3-8b/", "model_size_gb": 16,
                      "autoscaling": {"target_concurrency": 4}},
        },
    ],
}


def at(seconds: float) -> datetime:
    return SPIKE + timedelta(seconds=seconds)


def tt_alarm_name(rid: str, kind: str) -> str:
    # AWS names the alarms it creates for a target-tracking policy like this.
    suffix = "3f9c1e2a-6b7d-4e8f-9a0b-1c2d3e4f5a6b" if kind == "High" else "7a6b5c4d-3e2f-4a1b-8c9d-0e1f2a3b4c5d"
    return f"TargetTracking-{rid}-Alarm{kind}-{suffix}"


def policy_arn(rid: str, name: str) -> str:
    return (f"arn:aws:autoscaling:{REGION}:{ACCOUNT}:scalingPolicy:9d8c7b6a-5f4e-4d3c-2b1a-0f9e8d7c6b5a:"
            f"resource/sagemaker/{rid}:policyName/{name}")


def alarm_arn(name: str) -> str:
    return f"arn:aws:cloudwatch:{REGION}:{ACCOUNT}:alarm:{name}"


def scalable_target(rid: str, dim: str, lo: int, hi: int, suspended: dict[str, bool] | None = None) -> dict[str, Any]:
    out = {"ServiceNamespace": "sagemaker", "ResourceId": rid, "ScalableDimension": dim, "MinCapacity": lo,
           "MaxCapacity": hi, "RoleARN": ROLE_ARN, "CreationTime": NOW - timedelta(days=7),
           "SuspendedState": {"DynamicScalingInSuspended": False, "DynamicScalingOutSuspended": False,
                              "ScheduledScalingSuspended": False}}
    if suspended:
        out["SuspendedState"].update(suspended)
    return out


def tt_policy(rid: str, dim: str, name: str, metric_type: str, *, target: float = 4.0,
              scale_out_cooldown: int = 0, scale_in_cooldown: int = 300) -> dict[str, Any]:
    return {
        "PolicyARN": policy_arn(rid, name), "PolicyName": name, "ServiceNamespace": "sagemaker", "ResourceId": rid,
        "ScalableDimension": dim, "PolicyType": "TargetTrackingScaling", "CreationTime": NOW - timedelta(days=7),
        "TargetTrackingScalingPolicyConfiguration": {
            "TargetValue": target, "PredefinedMetricSpecification": {"PredefinedMetricType": metric_type},
            "ScaleOutCooldown": scale_out_cooldown, "ScaleInCooldown": scale_in_cooldown},
        "Alarms": [{"AlarmName": tt_alarm_name(rid, k), "AlarmARN": alarm_arn(tt_alarm_name(rid, k))}
                   for k in ("High", "Low")],
    }


def step_policy(rid: str, name: str, cooldown: int = 60) -> dict[str, Any]:
    return {
        "PolicyARN": policy_arn(rid, name), "PolicyName": name, "ServiceNamespace": "sagemaker", "ResourceId": rid,
        "ScalableDimension": IC_DIM, "PolicyType": "StepScaling", "CreationTime": NOW - timedelta(days=7),
        "StepScalingPolicyConfiguration": {"AdjustmentType": "ChangeInCapacity", "Cooldown": cooldown,
                                           "MetricAggregationType": "Maximum",
                                           "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]},
        "Alarms": [{"AlarmName": f"{IC}-no-capacity", "AlarmARN": alarm_arn(f"{IC}-no-capacity")}],
    }


def activity(seconds: float, desired: int, *, status: str = "Successful", unit: str = "copy", rid: str = IC_RID,
             dim: str = IC_DIM, cause: str | None = None, message: str | None = None,
             not_scaled: list[dict[str, Any]] | None = None, duration: float = 240) -> dict[str, Any]:
    out: dict[str, Any] = {
        "ActivityId": f"{int(seconds):06d}-{desired}-{status}", "ServiceNamespace": "sagemaker", "ResourceId": rid,
        "ScalableDimension": dim, "Description": f"Setting desired {unit} count to {desired}.",
        "Cause": cause or f"monitor alarm {tt_alarm_name(rid, 'High')} in state ALARM triggered policy "
                          f"{rid.split('/')[1]}-target-tracking",
        "StartTime": at(seconds), "StatusCode": status,
    }
    if status == "Successful":
        out["EndTime"] = at(seconds + duration)
        out["StatusMessage"] = message or f"Successfully set desired {unit} count to {desired}. Change successfully fulfilled by sagemaker."
    elif message:
        out["StatusMessage"] = message
    if not_scaled:
        out["Description"] = "Attempting to scale due to alarm triggered"
        out["NotScaledReasons"] = not_scaled
    return out


def metric_alarm(name: str, metric: str, dims: dict[str, str], *, comparison: str, threshold: float, period: int,
                 statistic: str = "Sum", evaluation_periods: int = 1, actions: list[str] | None = None,
                 state: str = "OK", actions_enabled: bool = True) -> dict[str, Any]:
    return {
        "AlarmName": name, "AlarmArn": alarm_arn(name), "ActionsEnabled": actions_enabled,
        "AlarmActions": actions or [], "StateValue": state, "StateReason": "Threshold Crossed",
        "StateUpdatedTimestamp": NOW - timedelta(hours=2), "MetricName": metric, "Namespace": "AWS/SageMaker",
        "Statistic": statistic, "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()],
        "Period": period, "EvaluationPeriods": evaluation_periods, "Threshold": threshold,
        "ComparisonOperator": comparison, "TreatMissingData": "missing",
    }


def scale_from_zero_alarm(*, comparison: str = "GreaterThanOrEqualToThreshold", **kw: Any) -> dict[str, Any]:
    return metric_alarm(f"{IC}-no-capacity", "NoCapacityInvocationFailures", {"InferenceComponentName": IC},
                        comparison=comparison, threshold=1.0, period=60, **kw)


def state_change(alarm: str, seconds: float, old: str, new: str, reason: str = "") -> dict[str, Any]:
    data = {"version": "1.0", "oldState": {"stateValue": old},
            "newState": {"stateValue": new, "stateReason": reason or "Threshold Crossed: 3 datapoints were greater "
                         "than the threshold (4.0). The most recent datapoints which crossed the threshold: "
                         "[6.2 (12/03/26 11:00:20), 5.9 (12/03/26 11:00:10), 6.1 (12/03/26 11:00:00)]."}}
    return {"AlarmName": alarm, "AlarmType": "MetricAlarm", "Timestamp": at(seconds), "HistoryItemType": "StateUpdate",
            "HistorySummary": f"Alarm updated from {old} to {new}", "HistoryData": json.dumps(data)}


def series(start: float, step: float, values: list[float]) -> tuple[list[datetime], list[float]]:
    return [at(start + i * step) for i in range(len(values))], list(values)


def endpoint_desc(name: str, *, status: str = "InService", instances: int = 1, desired: int | None = None,
                  managed_max: int | None = 2, failure: str | None = None,
                  stages: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    variant: dict[str, Any] = {"VariantName": "AllTraffic", "CurrentInstanceCount": instances,
                               "DesiredInstanceCount": instances if desired is None else desired}
    if managed_max is not None:
        variant["ManagedInstanceScaling"] = {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": managed_max}
    if stages:
        variant["VariantStatus"] = stages
    out = {"EndpointName": name, "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{name}",
           "EndpointConfigName": f"{name}-20260305101500000000000001", "EndpointStatus": status,
           "CreationTime": NOW - timedelta(days=7), "LastModifiedTime": at(0), "ProductionVariants": [variant]}
    if failure:
        out["FailureReason"] = failure
    return out


def component_desc(*, status: str = "InService", current: int = 2, desired: int | None = None,
                   failure: str | None = None) -> dict[str, Any]:
    out = {"InferenceComponentName": IC, "InferenceComponentArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/{IC}",
           "EndpointName": EP, "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{EP}",
           "VariantName": "AllTraffic", "CreationTime": NOW - timedelta(days=7), "LastModifiedTime": at(0),
           "InferenceComponentStatus": status,
           "Specification": {"ModelName": "demo-qwen-1a2b3c4d",
                             "StartupParameters": {"ModelDataDownloadTimeoutInSeconds": 600,
                                                   "ContainerStartupHealthCheckTimeoutInSeconds": 600},
                             "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 1,
                                                             "MinMemoryRequiredInMb": 32768},
                             "DataCacheConfig": {"EnableCaching": True}},
           "RuntimeConfig": {"DesiredCopyCount": current if desired is None else desired, "CurrentCopyCount": current}}
    if failure:
        out["FailureReason"] = failure
    return out


def _client(service: str) -> tuple[Any, Stubber]:
    c = boto3.client(service, region_name=REGION, aws_access_key_id="x", aws_secret_access_key="y")
    s = Stubber(c)
    s.activate()
    return c, s


@dataclass
class Recorded:
    """What AWS answers for one scalable target; starts as a healthy component scale-out from 1 to 2 copies."""

    kind: str = "component"
    target: dict[str, Any] | None = None
    policies: list[dict[str, Any]] = field(default_factory=list)
    activities: list[dict[str, Any]] = field(default_factory=list)
    alarms: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    metrics: dict[str, tuple[list[datetime], list[float]]] = field(default_factory=dict)
    endpoint: dict[str, Any] | None = None
    component: dict[str, Any] | None = None
    metric_queries: Any = field(default_factory=lambda: ANY)  # expected MetricDataQueries (ANY unless a test checks them)

    @classmethod
    def healthy_component(cls) -> Recorded:
        high, low = tt_alarm_name(IC_RID, "High"), tt_alarm_name(IC_RID, "Low")
        tt = tt_policy(IC_RID, IC_DIM, f"{IC}-target-tracking",
                       "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution")
        step = step_policy(IC_RID, f"{IC}-scale-from-zero")
        dims = {"InferenceComponentName": IC}
        alarms = {
            high: metric_alarm(high, "ConcurrentRequestsPerCopy", dims, comparison="GreaterThanThreshold",
                               threshold=4.0, period=10, statistic="Average", evaluation_periods=3,
                               actions=[tt["PolicyARN"]]),
            low: metric_alarm(low, "ConcurrentRequestsPerCopy", dims, comparison="LessThanThreshold",
                              threshold=3.6, period=60, statistic="Average", evaluation_periods=15,
                              actions=[tt["PolicyARN"]], state="ALARM"),
            f"{IC}-no-capacity": scale_from_zero_alarm(actions=[step["PolicyARN"]]),
            f"{IC}-stuck-at-zero": metric_alarm(f"{IC}-stuck-at-zero", "NoCapacityInvocationFailures", dims,
                                                comparison="GreaterThanOrEqualToThreshold", threshold=1.0, period=60,
                                                evaluation_periods=10),
        }
        for kind, metric in (("model-latency", "ModelLatency"), ("5xx-errors", "Invocation5XXErrors"),
                             ("gpu-memory", "GPUMemoryUtilization")):
            name = f"{EP}-{kind}"
            alarms[name] = metric_alarm(name, metric, {"EndpointName": EP, "VariantName": "AllTraffic"},
                                        comparison="GreaterThanThreshold", threshold=10000.0, period=60,
                                        statistic="Average", evaluation_periods=5)
        return cls(
            kind="component",
            target=scalable_target(IC_RID, IC_DIM, 0, 4),
            policies=[tt, step],
            activities=[activity(30, 2)],
            alarms=alarms,
            history={high: [state_change(high, 30, "OK", "ALARM"),
                            state_change(high, 320, "ALARM", "OK", "Threshold Crossed: 3 datapoints were not greater "
                                         "than the threshold (4.0).")]},
            metrics={"scaling": series(0, 10, [3.5, 5.0, 6.2, 6.0, 5.8, 5.1, 4.6, 3.9, 3.1, 2.9, 3.0, 3.2]),
                     "invocations": series(0, 10, [40, 61, 75, 80, 78, 70, 66, 60, 52, 50, 49, 51]),
                     "nocapacity": ([], [])},
            endpoint=endpoint_desc(EP, instances=1),
            component=component_desc(current=2),
        )

    @classmethod
    def healthy_variant(cls) -> Recorded:
        high, low = tt_alarm_name(CHAT_RID, "High"), tt_alarm_name(CHAT_RID, "Low")
        tt = tt_policy(CHAT_RID, VARIANT_DIM, f"{CHAT}-target-tracking",
                       "SageMakerVariantConcurrentRequestsPerModelHighResolution")
        dims = {"EndpointName": CHAT, "VariantName": "AllTraffic"}
        alarms = {
            high: metric_alarm(high, "ConcurrentRequestsPerModel", dims, comparison="GreaterThanThreshold",
                               threshold=4.0, period=10, statistic="Average", evaluation_periods=3),
            low: metric_alarm(low, "ConcurrentRequestsPerModel", dims, comparison="LessThanThreshold",
                              threshold=3.6, period=60, statistic="Average", evaluation_periods=15),
        }
        for kind in ("model-latency", "5xx-errors", "gpu-memory"):
            name = f"{CHAT}-{kind}"
            alarms[name] = metric_alarm(name, "ModelLatency", dims, comparison="GreaterThanThreshold",
                                        threshold=10000.0, period=60, statistic="Average", evaluation_periods=5)
        return cls(
            kind="variant",
            target=scalable_target(CHAT_RID, VARIANT_DIM, 1, 3),
            policies=[tt],
            activities=[activity(30, 2, unit="instance", rid=CHAT_RID, dim=VARIANT_DIM)],
            alarms=alarms,
            history={high: [state_change(high, 30, "OK", "ALARM")]},
            metrics={"scaling": series(0, 10, [3.0, 5.0, 6.0, 5.5, 4.2, 3.0]),
                     "invocations": series(0, 10, [30, 50, 60, 55, 42, 30])},
            endpoint=endpoint_desc(CHAT, instances=2, managed_max=None),
        )

    # ------------------------------------------------------------------ playing it back

    @property
    def rid(self) -> str:
        return IC_RID if self.kind == "component" else CHAT_RID

    @property
    def dim(self) -> str:
        return IC_DIM if self.kind == "component" else VARIANT_DIM

    def alarm_names(self) -> list[str]:
        """In the order collect() asks for them: the policies' alarms, then fastscale's own."""
        names = [a["AlarmName"] for p in self.policies for a in p.get("Alarms", [])]
        if self.kind == "component":
            names += [f"{IC}-no-capacity", f"{IC}-stuck-at-zero"]
            names += [f"{EP}-{k}" for k in ("model-latency", "5xx-errors", "gpu-memory")]
        else:
            names += [f"{CHAT}-{k}" for k in ("model-latency", "5xx-errors", "gpu-memory")]
        return list(dict.fromkeys(names))

    def queue(self) -> tuple[dict[str, Any], list[Stubber]]:
        """Clients with every answer of one collect() for this target queued, in call order."""
        (aas, aas_s), (cw, cw_s), (sm, sm_s) = _client("application-autoscaling"), _client("cloudwatch"), _client("sagemaker")
        ids = {"ServiceNamespace": "sagemaker", "ResourceId": self.rid, "ScalableDimension": self.dim}
        aas_s.add_response("describe_scalable_targets",
                           {"ScalableTargets": [self.target] if self.target else []},
                           {"ServiceNamespace": "sagemaker", "ResourceIds": [self.rid], "ScalableDimension": self.dim})
        aas_s.add_response("describe_scaling_policies", {"ScalingPolicies": self.policies}, ids)
        newest_first = sorted(self.activities, key=lambda a: a["StartTime"], reverse=True)
        aas_s.add_response("describe_scaling_activities", {"ScalingActivities": newest_first},
                           {**ids, "IncludeNotScaledActivities": True})
        names = self.alarm_names()
        cw_s.add_response("describe_alarms", {"MetricAlarms": [self.alarms[n] for n in names if n in self.alarms]},
                          {"AlarmNames": names})
        for n in names:
            if n in self.alarms:
                cw_s.add_response("describe_alarm_history", {"AlarmHistoryItems": self.history.get(n, [])},
                                  {"AlarmName": n, "StartDate": NOW - SINCE, "EndDate": NOW,
                                   "ScanBy": "TimestampAscending"})
        results = [{"Id": qid, "Label": qid, "Timestamps": ts, "Values": vs, "StatusCode": "Complete"}
                   for qid, (ts, vs) in self.metrics.items()]
        cw_s.add_response("get_metric_data", {"MetricDataResults": results, "Messages": []},
                          {"MetricDataQueries": self.metric_queries, "StartTime": NOW - SINCE, "EndTime": NOW,
                           "ScanBy": "TimestampAscending"})
        ep_name = EP if self.kind == "component" else CHAT
        if self.endpoint is None:
            sm_s.add_client_error("describe_endpoint", "ValidationException", f'Could not find endpoint "{ep_name}".',
                                  expected_params={"EndpointName": ep_name})
        else:
            sm_s.add_response("describe_endpoint", self.endpoint, {"EndpointName": ep_name})
            if self.kind == "component":
                sm_s.add_response("describe_inference_component", self.component, {"InferenceComponentName": IC})
        return {"application-autoscaling": aas, "cloudwatch": cw, "sagemaker": sm}, [aas_s, cw_s, sm_s]

    def run(self, config: FastscaleConfig) -> Evidence:
        clients, stubbers = self.queue()
        only = {"component": "qwen"} if self.kind == "component" else {"endpoint": "chat"}
        evidence = collect(resolve(config), clients, since=SINCE, now=NOW, **only)
        for s in stubbers:
            s.assert_no_pending_responses()
        assert len(evidence) == 1
        return evidence[0]
