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
