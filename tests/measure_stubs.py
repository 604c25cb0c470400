"""Stubber helpers for the measure-scaleout tests: SageMaker answers (validated by botocore against the real
service model) and a clock that advances without sleeping."""

from __future__ import annotations

import datetime as dt
from typing import Any

import boto3
from botocore.stub import Stubber

from fastscale.infra.aws.waiters import Clock

REGION = "us-east-1"
ACCOUNT = "123456789012"
WHEN = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
VARIANT = "AllTraffic"


class FakeClock:
    """`sleep` moves time forward instantly; `interrupt_after` raises KeyboardInterrupt on that sleep (Ctrl-C)."""

    def __init__(self, interrupt_after: int | None = None):
        self.t = 1000.0
        self.sleeps: list[float] = []
        self.interrupt_after = interrupt_after

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if self.interrupt_after is not None and len(self.sleeps) >= self.interrupt_after:
            raise KeyboardInterrupt
        self.t += seconds

    @property
    def clock(self) -> Clock:
        return Clock(now=self.now, sleep=self.sleep)


def stubbed_sagemaker() -> tuple[Any, Stubber]:
    client = boto3.client("sagemaker", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="y")
    stubber = Stubber(client)
    stubber.activate()
    return client, stubber


def endpoint(name: str, status: str = "InService", instances: int = 1, desired: int | None = None,
             stages: tuple[str, ...] = ()) -> dict[str, Any]:
    variant: dict[str, Any] = {
        "VariantName": VARIANT,
        "CurrentInstanceCount": instances,
        "DesiredInstanceCount": instances if desired is None else desired,
    }
    if stages:
        variant["VariantStatus"] = [{"Status": s, "StartTime": WHEN} for s in stages]
    return {
        "EndpointName": name,
        "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{name}",
        "EndpointStatus": status,
        "CreationTime": WHEN,
        "LastModifiedTime": WHEN,
        "ProductionVariants": [variant],
    }


def component(name: str, endpoint_name: str, status: str = "InService", current: int = 1,
              desired: int | None = None, failure: str | None = None) -> dict[str, Any]:
    out = {
        "InferenceComponentName": name,
        "InferenceComponentArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/{name}",
        "EndpointName": endpoint_name,
        "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{endpoint_name}",
        "VariantName": VARIANT,
        "CreationTime": WHEN,
        "LastModifiedTime": WHEN,
        "InferenceComponentStatus": status,
        "RuntimeConfig": {"DesiredCopyCount": current if desired is None else desired, "CurrentCopyCount": current},
    }
    if failure:
        out["FailureReason"] = failure
    return out


class Script:
    """Queues the calls a measurement makes, in order, so each test reads like the run it simulates."""

    def __init__(self, stubber: Stubber, endpoint_name: str, component_name: str | None = None):
        self.s, self.ep, self.ic = stubber, endpoint_name, component_name

    def describe_endpoint(self, **kw: Any) -> Script:
        self.s.add_response("describe_endpoint", endpoint(self.ep, **kw), {"EndpointName": self.ep})
        return self

    def describe_component(self, **kw: Any) -> Script:
        self.s.add_response("describe_inference_component", component(self.ic, self.ep, **kw),
                            {"InferenceComponentName": self.ic})
        return self

    def poll_component(self, *, instances: int = 1, **kw: Any) -> Script:
        return self.describe_endpoint(instances=instances).describe_component(**kw)

    def set_copies(self, n: int, error: str | None = None, message: str = "") -> Script:
        params = {"InferenceComponentName": self.ic, "DesiredRuntimeConfig": {"CopyCount": n}}
        if error:
            self.s.add_client_error("update_inference_component_runtime_config", error, message,
                                    expected_params=params)
        else:
            self.s.add_response("update_inference_component_runtime_config",
                                {"InferenceComponentArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/{self.ic}"},
                                params)
        return self

    def set_instances(self, n: int, error: str | None = None, message: str = "") -> Script:
        params = {"EndpointName": self.ep, "DesiredWeightsAndCapacities": [{"VariantName": VARIANT, "DesiredInstanceCount": n}]}
        if error:
            self.s.add_client_error("update_endpoint_weights_and_capacities", error, message, expected_params=params)
        else:
            self.s.add_response("update_endpoint_weights_and_capacities",
                                {"EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{self.ep}"}, params)
        return self

    def throttle(self, method: str) -> Script:
        self.s.add_client_error(method, "ThrottlingException", "Rate exceeded")
        return self


# --------------------------------------------------------------------------------------------- auto scaling

COMPONENT_DIM = "sagemaker:inference-component:DesiredCopyCount"
VARIANT_DIM = "sagemaker:variant:DesiredInstanceCount"
SCALING_ROLE = (f"arn:aws:iam::{ACCOUNT}:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/"
                "AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint")


def stubbed_autoscaling() -> tuple[Any, Stubber]:
    client = boto3.client("application-autoscaling", region_name=REGION, aws_access_key_id="x",
                          aws_secret_access_key="y")
    stubber = Stubber(client)
    stubber.activate()
    return client, stubber


def record_calls(*clients: Any) -> list[str]:
    """Every API call the clients make, in order across clients (e.g. "RegisterScalableTarget")."""
    calls: list[str] = []
    for c in clients:
        c.meta.events.register("provide-client-params.*.*", lambda model, **_: calls.append(model.name))
    return calls


def scaling_activity(activity_id: str, status: str, desired: int, unit: str = "copy",
                     resource_id: str = "inference-component/demo-qwen") -> dict[str, Any]:
    out = {"ActivityId": activity_id, "ServiceNamespace": "sagemaker", "ResourceId": resource_id,
           "ScalableDimension": COMPONENT_DIM if unit == "copy" else VARIANT_DIM,
           "Description": f"Setting desired {unit} count to {desired}.",
           "Cause": f"monitor alarm TargetTracking-{resource_id}-AlarmHigh-0b1c2d3e in state ALARM triggered policy "
                    "demo-qwen-target-tracking",
           "StartTime": WHEN, "StatusCode": status}
    if status == "Successful":
        out["EndTime"] = WHEN
        out["StatusMessage"] = f"Successfully set desired {unit} count to {desired}. Change successfully fulfilled by sagemaker."
    return out


class Scaling:
    """Queues the Application Auto Scaling calls of a measurement's guard (check, suspend, restore, resume)."""

    def __init__(self, stubber: Stubber, resource_id: str = "inference-component/demo-qwen", dim: str = COMPONENT_DIM):
        self.s, self.rid, self.dim = stubber, resource_id, dim

    @property
    def ids(self) -> dict[str, str]:
        return {"ServiceNamespace": "sagemaker", "ResourceId": self.rid, "ScalableDimension": self.dim}

    def target(self, *, registered: bool = True, lo: int = 1, hi: int = 4, scheduled: bool = False,
               suspended: dict[str, bool] | None = None) -> Scaling:
        state = {"DynamicScalingInSuspended": False, "DynamicScalingOutSuspended": False,
                 "ScheduledScalingSuspended": scheduled, **(suspended or {})}
        target = {**self.ids, "MinCapacity": lo, "MaxCapacity": hi, "RoleARN": SCALING_ROLE, "CreationTime": WHEN,
                  "SuspendedState": state}
        self.s.add_response("describe_scalable_targets", {"ScalableTargets": [target] if registered else []},
                            {"ServiceNamespace": "sagemaker", "ResourceIds": [self.rid], "ScalableDimension": self.dim})
        return self

    def activities(self, *items: dict[str, Any]) -> Scaling:
        self.s.add_response("describe_scaling_activities", {"ScalingActivities": list(items)}, self.ids)
        return self

    def register(self, *, scale_in: bool, scale_out: bool, scheduled: bool, error: str | None = None) -> Scaling:
        params = {**self.ids, "SuspendedState": {"DynamicScalingInSuspended": scale_in,
                                                 "DynamicScalingOutSuspended": scale_out,
                                                 "ScheduledScalingSuspended": scheduled}}
        if error:
            self.s.add_client_error("register_scalable_target", "ValidationException", error, expected_params=params)
        else:
            self.s.add_response("register_scalable_target", {"ScalableTargetARN": f"arn:aws:application-autoscaling:"
                                f"{REGION}:{ACCOUNT}:scalable-target/0123abcd"}, params)
        return self

    def suspend(self, *, scheduled: bool = False, lo: int = 1, history: tuple[dict[str, Any], ...] = ()) -> Scaling:
        """The guard before the measurement: target, no activity running, dynamic scaling suspended."""
        return (self.target(scheduled=scheduled, lo=lo).activities(*history)
                .register(scale_in=True, scale_out=True, scheduled=scheduled))

    def restore(self, *, scheduled: bool = False, lo: int = 1, history: tuple[dict[str, Any], ...] = ()) -> Scaling:
        """The reads of the restore (what auto scaling asked for meanwhile, the minimum now)."""
        return self.activities(*history).target(scheduled=scheduled, lo=lo)

    def resume(self, *, scheduled: bool = False, error: str | None = None) -> Scaling:
        return self.register(scale_in=False, scale_out=False, scheduled=scheduled, error=error)
