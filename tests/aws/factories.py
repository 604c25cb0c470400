"""Configs, fake clock and AWS response builders shared by the infra.aws tests.

The response builders produce what SageMaker / Application Auto Scaling answer (Stubber validates
every one of them against the botocore service model), filled with the values a correct fastscale
deployment must have (fastscale.infra.aws_facts). The ``deploy_*`` helpers create a correct deployment in moto.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import boto3
from botocore.stub import Stubber

from fastscale.infra.config import FastscaleConfig, parse_config
from fastscale.infra.naming import all_endpoint_names, dashboard_marker, tags

#: Sentinel: tag what a helper creates with the tags the stack of the config in question writes.
STACK_TAGS = object()

REGION = "us-east-1"
ACCOUNT = "123456789012"
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
IMAGE = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/djl-inference:0.33.0"
# moto only accepts older GPU types; the instance type is irrelevant to what is verified here.
MOTO_INSTANCE_TYPE = "ml.g4dn.xlarge"

HIGH_RES_VARIANT = "SageMakerVariantConcurrentRequestsPerModelHighResolution"
HIGH_RES_COMPONENT = "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"
VARIANT_DIM = "sagemaker:variant:DesiredInstanceCount"
COMPONENT_DIM = "sagemaker:inference-component:DesiredCopyCount"


# --------------------------------------------------------------------------------------------- configs


def single_model_config(**model_overrides: Any) -> FastscaleConfig:
    model = {"image": IMAGE, "model_data": "s3://demo-models/qwen3/", "autoscaling": {"target_concurrency": 4}}
    model.update(model_overrides)
    return parse_config(
        {
            "project": "demo",
            "region": REGION,
            "endpoints": [
                {"name": "chat", "instance_type": "ml.g6.2xlarge", "instances": {"initial": 1, "min": 1, "max": 4}, "model": model}
            ],
        }
    )


def component_config(*, qwen_min: int = 0, data_cache: bool = True, metric: str = "high_resolution") -> FastscaleConfig:
    """Two components on one endpoint: qwen scales to zero (when qwen_min is 0), llama keeps one copy."""
    return parse_config(
        {
            "project": "demo",
            "region": REGION,
            "dashboard": {"enabled": False},
            "endpoints": [
                {
                    "name": "shared",
                    "instance_type": "ml.g6.12xlarge",
                    "instances": {"initial": 1, "min": 0, "max": 3},
                    "inference_components": [
                        {
                            "name": "qwen",
                            "image": IMAGE,
                            "model_data": "s3://demo-models/qwen3/",
                            "resources": {"accelerators": 1, "memory_mb": 32768},
                            "copies": {"initial": 1, "min": qwen_min, "max": 4},
                            "data_cache": data_cache,
                            "autoscaling": {"metric": metric, "target_concurrency": 4},
                        },
                        {
                            "name": "llama",
                            "image": IMAGE,
                            "model_data": "s3://demo-models/llama/",
                            "resources": {"accelerators": 1, "memory_mb": 32768},
                            "copies": {"initial": 1, "min": 1, "max": 2},
                            "autoscaling": {"metric": metric, "target_concurrency": 6},
                        },
                    ],
                }
            ],
        }
    )


# --------------------------------------------------------------------------------------------- clock


class FakeClock:
    """Time only moves when code sleeps, so waits of an hour finish instantly."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.t += seconds


_SESSION = boto3.session.Session(region_name=REGION)  # shared: its loader caches the service models


def stubbed(service: str) -> tuple[Any, Stubber]:
    """A client whose every call must have been queued on the returned Stubber."""
    client = _SESSION.client(service)
    stubber = Stubber(client)
    stubber.activate()
    return client, stubber


def not_found(stubber: Stubber, method: str, what: str, name: str, **expected: Any) -> None:
    stubber.add_client_error(
        method,
        "ValidationException",
        f"Could not find {what} \"arn:aws:sagemaker:{REGION}:{ACCOUNT}:{what.replace(' ', '-')}/{name}\".",
        400,
        expected_params=expected or None,
    )


# --------------------------------------------------------------------------------------------- SageMaker answers


def endpoint_arn(name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{name}"


def endpoint_desc(
    name: str,
    status: str = "InService",
    *,
    config_name: str | None = None,
    failure: str | None = None,
    managed: tuple[int, int] | None = (0, 3),
    instances: int = 1,
) -> dict[str, Any]:
    variant: dict[str, Any] = {
        "VariantName": "AllTraffic",
        "CurrentInstanceCount": instances,
        "DesiredInstanceCount": instances,
    }
    if managed is not None:
        variant["ManagedInstanceScaling"] = {"Status": "ENABLED", "MinInstanceCount": managed[0], "MaxInstanceCount": managed[1]}
    out = {
        "EndpointName": name,
        "EndpointArn": endpoint_arn(name),
        "EndpointConfigName": config_name or f"{name}-20260101000000000000000001",
        "ProductionVariants": [variant],
        "EndpointStatus": status,
        "CreationTime": NOW,
        "LastModifiedTime": NOW,
    }
    if failure:
        out["FailureReason"] = failure
    return out


def ic_arn(name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/{name}"


def ic_desc(
    name: str,
    endpoint: str,
    status: str = "InService",
    *,
    model: str | None = None,
    caching: bool | None = True,
    image: str = IMAGE,
    artifact: str | None = None,
    desired: int = 1,
    current: int = 1,
    base: str | None = None,
    failure: str | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 1, "MinMemoryRequiredInMb": 32768},
    }
    if model:
        spec["ModelName"] = model
    else:  # the container given inline on the component
        spec["Container"] = {"DeployedImage": {"SpecifiedImage": image, "ResolvedImage": image + "@sha256:" + "0" * 64}}
        if artifact:
            spec["Container"]["ArtifactUrl"] = artifact
    if caching is not None:
        spec["DataCacheConfig"] = {"EnableCaching": caching}
    if base:
        spec["BaseInferenceComponentName"] = base
    out = {
        "InferenceComponentName": name,
        "InferenceComponentArn": ic_arn(name),
        "EndpointName": endpoint,
        "EndpointArn": endpoint_arn(endpoint),
        "VariantName": "AllTraffic",
        "Specification": spec,
        "RuntimeConfig": {"DesiredCopyCount": desired, "CurrentCopyCount": current},
        "CreationTime": NOW,
        "LastModifiedTime": NOW,
        "InferenceComponentStatus": status,
    }
    if failure:
        out["FailureReason"] = failure
    return out


def model_desc(name: str, image: str = IMAGE, model_data: str | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"Image": image}
    if model_data:
        container["ModelDataUrl"] = model_data
    return {
        "ModelName": name,
        "ModelArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model/{name}",
        "CreationTime": NOW,
        "PrimaryContainer": container,
    }


def ic_summary(name: str, endpoint: str, status: str = "InService") -> dict[str, Any]:
    return {
        "CreationTime": NOW,
        "InferenceComponentArn": ic_arn(name),
        "InferenceComponentName": name,
        "EndpointArn": endpoint_arn(endpoint),
        "EndpointName": endpoint,
        "VariantName": "AllTraffic",
        "InferenceComponentStatus": status,
        "LastModifiedTime": NOW,
    }


def ic_list(*summaries: dict[str, Any]) -> dict[str, Any]:
    return {"InferenceComponents": list(summaries)}


def config_list(*names: str) -> dict[str, Any]:
    return {
        "EndpointConfigs": [
            {"EndpointConfigName": n, "EndpointConfigArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/{n}", "CreationTime": NOW}
            for n in names
        ]
    }


# --------------------------------------------------------------------------------------------- scaling answers


def target(rid: str, dim: str, lo: int, hi: int) -> dict[str, Any]:
    return {
        "ServiceNamespace": "sagemaker",
        "ResourceId": rid,
        "ScalableDimension": dim,
        "MinCapacity": lo,
        "MaxCapacity": hi,
        "RoleARN": f"arn:aws:iam::{ACCOUNT}:role/aws-service-role/sagemaker.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_SageMakerEndpoint",
        "CreationTime": NOW,
    }


def policy_arn(name: str, rid: str) -> str:
    return f"arn:aws:autoscaling:{REGION}:{ACCOUNT}:scalingPolicy:0000:resource/sagemaker/{rid}:policyName/{name}"


def tt_policy(
    name: str, rid: str, dim: str, metric: str, value: float, scale_in: int = 300, scale_out: int = 0
) -> dict[str, Any]:
    return {
        "PolicyARN": policy_arn(name, rid),
        "PolicyName": name,
        "ServiceNamespace": "sagemaker",
        "ResourceId": rid,
        "ScalableDimension": dim,
        "PolicyType": "TargetTrackingScaling",
        "TargetTrackingScalingPolicyConfiguration": {
            "TargetValue": value,
            "PredefinedMetricSpecification": {"PredefinedMetricType": metric},
            "ScaleInCooldown": scale_in,
            "ScaleOutCooldown": scale_out,
        },
        "CreationTime": NOW,
    }


def step_policy(name: str, rid: str, cooldown: int = 60) -> dict[str, Any]:
    return {
        "PolicyARN": policy_arn(name, rid),
        "PolicyName": name,
        "ServiceNamespace": "sagemaker",
        "ResourceId": rid,
        "ScalableDimension": COMPONENT_DIM,
        "PolicyType": "StepScaling",
        "StepScalingPolicyConfiguration": {
            "AdjustmentType": "ChangeInCapacity",
            "StepAdjustments": [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}],
            "Cooldown": cooldown,
            "MetricAggregationType": "Maximum",
        },
        "CreationTime": NOW,
    }


def put_no_capacity_alarm(cw: Any, name: str, component: str, actions: list[str], **overrides: Any) -> None:
    params: dict[str, Any] = dict(
        AlarmName=name,
        Namespace="AWS/SageMaker",
        MetricName="NoCapacityInvocationFailures",
        Dimensions=[{"Name": "InferenceComponentName", "Value": component}],
        Statistic="Sum",
        Period=60,
        EvaluationPeriods=1,
        Threshold=1.0,
        ComparisonOperator="GreaterThanOrEqualToThreshold",
        AlarmActions=actions,
    )
    params.update(overrides)
    cw.put_metric_alarm(**params)


def put_alarm(cw: Any, name: str, tags: dict[str, str] | None = None) -> None:
    cw.put_metric_alarm(
        AlarmName=name,
        Namespace="AWS/SageMaker",
        MetricName="ModelLatency",
        Statistic="Average",
        Period=60,
        EvaluationPeriods=5,
        Threshold=1e7,
        ComparisonOperator="GreaterThanThreshold",
        Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()],
    )


# --------------------------------------------------------------------------------------------- moto deployments


def create_role(iam: Any, name: str, tags: dict[str, str] | None = None) -> str:
    trust = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"}, "Action": "sts:AssumeRole"}],
    }
    arn = iam.create_role(
        RoleName=name,
        AssumeRolePolicyDocument=json.dumps(trust),
        Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()],
    )["Role"]["Arn"]
    iam.put_role_policy(
        RoleName=name,
        PolicyName="sagemaker-access",
        PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
        ),
    )
    return arn


def stack_tags(config: FastscaleConfig | None = None) -> dict[str, str]:
    """The tags the stack of ``config`` (default: single_model_config()) puts on what it creates."""
    config = config or single_model_config()
    return tags(config, config.endpoints[0])


def dashboard_body(config: FastscaleConfig | None = None) -> str:
    """A dashboard body carrying the stack's marker, as the stack writes it."""
    config = config or single_model_config()
    return json.dumps({"widgets": [{"type": "text", "x": 0, "y": 0, "width": 24, "height": 1, "properties": {"markdown": dashboard_marker(config)}}]})


def deploy_single_model(
    aws: dict[str, Any],
    *,
    metric: str = HIGH_RES_VARIANT,
    min_capacity: int = 1,
    max_capacity: int = 4,
    tags: Any = STACK_TAGS,
) -> None:
    """A correct deployment of single_model_config() in moto, tagged as its stack tags it (the knobs make
    it wrong on purpose; ``tags=None`` leaves everything untagged)."""
    sm, aas, cw, iam = aws["sagemaker"], aws["application-autoscaling"], aws["cloudwatch"], aws["iam"]
    if tags is STACK_TAGS:
        tags = stack_tags()
    tag_list = [{"Key": k, "Value": v} for k, v in (tags or {}).items()]
    role = create_role(iam, "demo-chat-sagemaker", tags)
    model = all_endpoint_names(single_model_config())[0].model
    sm.create_model(
        ModelName=model,
        ExecutionRoleArn=role,
        PrimaryContainer={"Image": IMAGE, "ModelDataUrl": "s3://demo-models/qwen3/"},
        **({"Tags": tag_list} if tag_list else {}),
    )
    sm.create_endpoint_config(
        EndpointConfigName="demo-chat-20260101000000000000000001",
        ProductionVariants=[
            {"VariantName": "AllTraffic", "ModelName": model, "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}
        ],
        **({"Tags": tag_list} if tag_list else {}),
    )
    sm.create_endpoint(
        EndpointName="demo-chat", EndpointConfigName="demo-chat-20260101000000000000000001", **({"Tags": tag_list} if tag_list else {})
    )
    rid = "endpoint/demo-chat/variant/AllTraffic"
    aas.register_scalable_target(
        ServiceNamespace="sagemaker", ResourceId=rid, ScalableDimension=VARIANT_DIM, MinCapacity=min_capacity, MaxCapacity=max_capacity
    )
    aas.put_scaling_policy(
        PolicyName="demo-chat-target-tracking",
        ServiceNamespace="sagemaker",
        ResourceId=rid,
        ScalableDimension=VARIANT_DIM,
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 4.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": metric},
            "ScaleInCooldown": 300,
            "ScaleOutCooldown": 0,
        },
    )
    for kind in ("model-latency", "5xx-errors", "gpu-memory"):
        put_alarm(cw, f"demo-chat-{kind}", tags)
    cw.put_dashboard(DashboardName="demo-fastscale", DashboardBody=dashboard_body() if tags else json.dumps({"widgets": []}))
