"""DescribeEndpoint / DescribeInferenceComponent answers during a rollout (moto has no deployment states and
no inference components); Stubber checks each against the botocore service model."""

from __future__ import annotations

import datetime as dt

from tests.aws.factories import ACCOUNT, NOW, REGION


def endpoint_answer(status: str, config: str = "demo-chat-new", *, pending: str | None = None, variant_status: str | None = None,
                    reason: str | None = None, modified: dt.datetime = NOW + dt.timedelta(minutes=5),
                    alarms: tuple[str, ...] = ()) -> dict:
    answer = {
        "EndpointName": "demo-chat",
        "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/demo-chat",
        "EndpointConfigName": config,
        "EndpointStatus": status,
        "CreationTime": NOW - dt.timedelta(days=30),
        "LastModifiedTime": modified,
    }
    if pending:
        variant = {"VariantName": "AllTraffic", "CurrentInstanceCount": 1, "DesiredInstanceCount": 2}
        if variant_status:
            variant["VariantStatus"] = [{"Status": variant_status, "StartTime": NOW}]
        answer["PendingDeploymentSummary"] = {"EndpointConfigName": pending, "ProductionVariants": [variant]}
    if reason:
        answer["FailureReason"] = reason
    if alarms:
        answer["LastDeploymentConfig"] = {"AutoRollbackConfiguration": {"Alarms": [{"AlarmName": a} for a in alarms]}}
    return answer


def component_answer(status: str, model: str = "demo-qwen-bbbb", *, reason: str | None = None, current: int = 2) -> dict:
    answer = {
        "InferenceComponentName": "demo-qwen",
        "InferenceComponentArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/demo-qwen",
        "EndpointName": "demo-chat",
        "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/demo-chat",
        "VariantName": "AllTraffic",
        "InferenceComponentStatus": status,
        "Specification": {"ModelName": model, "ComputeResourceRequirements": {"MinMemoryRequiredInMb": 1024}},
        "RuntimeConfig": {"DesiredCopyCount": 2, "CurrentCopyCount": current},
        "CreationTime": NOW - dt.timedelta(days=3),
        "LastModifiedTime": NOW + dt.timedelta(minutes=3),
    }
    if reason:
        answer["FailureReason"] = reason
    return answer
