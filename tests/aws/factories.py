"""Configs, fake clock and AWS response builders shared by the infra.aws tests.

The response builders produce what SageMaker / Application Auto Scaling answer (Stubber validates
every one of them against the botocore service model), filled with the values a correct fastscale
deployment must have (fastscale.infra.base.aws_facts). The ``deploy_*`` helpers create a correct deployment in moto.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import boto3
from botocore.stub import Stubber

from fastscale.infra.config import FastscaleConfig, parse_config
from fastscale.infra.model.naming import all_endpoint_names, dashboard_marker, dashboard_name, tags

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
    """The tags the stack of ``config`` (default: single_model_config()) puts on its regional resources."""
    config = config or single_model_config()
    return tags(config, config.endpoints[0])


def role_tags(config: FastscaleConfig | None = None) -> dict[str, str]:
    """The tags the stack puts on its IAM role: global, so the region too."""
    config = config or single_model_config()
    return tags(config, config.endpoints[0], global_resource=True)


def dashboard_body(config: FastscaleConfig | None = None) -> str:
    """A dashboard body carrying the stack's marker, as the stack writes it."""
    config = config or single_model_config()
    return json.dumps({"widgets": [{"type": "text", "x": 0, "y": 0, "width": 24, "height": 1, "properties": {"markdown": dashboard_marker(config)}}]})


def single_config(project: str, endpoint: str, **model_overrides: Any) -> FastscaleConfig:
    """single_model_config() with another project and endpoint name."""
    data = single_model_config(**model_overrides).model_dump(mode="json", exclude_defaults=True)
    data["project"] = project
    data["endpoints"][0]["name"] = endpoint
    return parse_config(data)


def deploy_single_model(
    aws: dict[str, Any],
    *,
    metric: str = HIGH_RES_VARIANT,
    min_capacity: int = 1,
    max_capacity: int = 4,
    tags: Any = STACK_TAGS,
    config: FastscaleConfig | None = None,
    data_capture: dict[str, Any] | None = None,
) -> None:
    """A correct deployment of ``config`` (default single_model_config()) in moto, tagged as its stack tags
    it (the knobs make it wrong on purpose; ``tags=None`` leaves everything untagged). ``data_capture``: the
    endpoint configuration's ``DataCaptureConfig``, as an `overrides:` entry of the config would set it."""
    config = config or single_model_config()
    names = all_endpoint_names(config)[0]
    sm, aas, cw, iam = aws["sagemaker"], aws["application-autoscaling"], aws["cloudwatch"], aws["iam"]
    if tags is STACK_TAGS:
        tags = stack_tags(config)
    tagged = {"Tags": [{"Key": k, "Value": v} for k, v in tags.items()]} if tags else {}
    role = create_role(iam, names.execution_role, role_tags(config) if tags == stack_tags(config) else tags)
    sm.create_model(
        ModelName=names.model,
        ExecutionRoleArn=role,
        PrimaryContainer={"Image": IMAGE, "ModelDataUrl": "s3://demo-models/qwen3/"},
        **tagged,
    )
    endpoint_config = names.endpoint_config_prefix + "20260101000000000000000001"
    sm.create_endpoint_config(
        EndpointConfigName=endpoint_config,
        ProductionVariants=[
            {"VariantName": "AllTraffic", "ModelName": names.model, "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}
        ],
        **tagged,
        **({"DataCaptureConfig": data_capture} if data_capture else {}),
    )
    sm.create_endpoint(EndpointName=names.endpoint, EndpointConfigName=endpoint_config, **tagged)
    aas.register_scalable_target(
        ServiceNamespace="sagemaker",
        ResourceId=names.resource_id,
        ScalableDimension=VARIANT_DIM,
        MinCapacity=min_capacity,
        MaxCapacity=max_capacity,
        **({"Tags": tags} if tags else {}),
    )
    aas.put_scaling_policy(
        PolicyName=names.target_tracking_policy,
        ServiceNamespace="sagemaker",
        ResourceId=names.resource_id,
        ScalableDimension=VARIANT_DIM,
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 4.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": metric},
            "ScaleInCooldown": 300,
            "ScaleOutCooldown": 0,
        },
    )
    for alarm in names.alarms.values():
        put_alarm(cw, alarm, tags)
    body = dashboard_body(config) if tags else json.dumps({"widgets": []})
    cw.put_dashboard(DashboardName=dashboard_name(config), DashboardBody=body)


# --------------------------------------------------------------------------------------------- stubbed SageMaker account


def _tag_list(tags: dict[str, str] | None) -> dict[str, Any]:
    return {"Tags": [{"Key": k, "Value": v} for k, v in (tags or {}).items()]}


def queue_sagemaker_discovery(
    stub: Stubber,
    *,
    stack: FastscaleConfig,
    endpoints: list[tuple[str, str, dict[str, str] | None]] = (),  # type: ignore[assignment]
    components: list[tuple[str, str, str, dict[str, str] | None, str | None]] = (),  # type: ignore[assignment]
    configs: list[tuple[str, dict[str, str] | None]] = (),  # type: ignore[assignment]
    models: list[tuple[str, dict[str, str] | None]] = (),  # type: ignore[assignment]
    list_components: bool = True,
    indexed: tuple[str, ...] = (),
) -> None:
    """Queue on a SageMaker Stubber what the inventory asks while taking stock of ``stack``'s account: every
    list call (one page each), the tags of every candidate, and the description of every component the
    stack owns (for its base). Endpoints are (name, status, tags), components (name, endpoint, status,
    tags, base), configurations and models (name, tags); all of them must be candidates of the stack.
    ``indexed``: names whose tags the tagging index already gave (no ListTags call for them)."""
    from fastscale.infra.aws.inventory import tag_ownership

    def ours(tags: dict[str, str] | None) -> bool:
        return tag_ownership(tags, stack.project, stack.region).ours

    stub.add_response(
        "list_endpoints",
        {
            "Endpoints": [
                {"EndpointName": n, "EndpointArn": endpoint_arn(n), "CreationTime": NOW, "LastModifiedTime": NOW, "EndpointStatus": st}
                for n, st, _ in endpoints
            ]
        },
        {},
    )
    for n, _, t in endpoints:
        if n not in indexed:
            stub.add_response("list_tags", _tag_list(t), {"ResourceArn": endpoint_arn(n)})
    if list_components:
        stub.add_response("list_inference_components", ic_list(*(ic_summary(n, ep, st) for n, ep, st, _, _ in components)), {})
        for n, ep, st, t, base in components:
            if n not in indexed:
                stub.add_response("list_tags", _tag_list(t), {"ResourceArn": ic_arn(n)})
            if ours(t):
                stub.add_response("describe_inference_component", ic_desc(n, ep, st, base=base), {"InferenceComponentName": n})
    stub.add_response("list_endpoint_configs", config_list(*(n for n, _ in configs)), {})
    for n, t in configs:
        stub.add_response("list_tags", _tag_list(t), {"ResourceArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/{n}"})
    stub.add_response(
        "list_models",
        {"Models": [{"ModelName": n, "ModelArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model/{n}", "CreationTime": NOW} for n, _ in models]},
        {},
    )
    for n, t in models:
        stub.add_response("list_tags", _tag_list(t), {"ResourceArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model/{n}"})


def endpoint_config_desc(name: str, models: list[str] | None = None, role: str | None = None) -> dict[str, Any]:
    """DescribeEndpointConfig of a configuration: one variant per model, or (``models`` None) one variant
    without a model, as an inference-component endpoint has."""
    variants = [{"VariantName": "AllTraffic", "InstanceType": "ml.g6.12xlarge", "InitialInstanceCount": 1, **({"ModelName": m} if m else {})}
                for m in (models or [None])]
    out: dict[str, Any] = {
        "EndpointConfigName": name,
        "EndpointConfigArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/{name}",
        "ProductionVariants": variants,
        "CreationTime": NOW,
    }
    if role:
        out["ExecutionRoleArn"] = role
    return out


def queue_in_use(
    stub: Stubber,
    *,
    endpoints: list[tuple[str, str]] = (),  # type: ignore[assignment]
    gone: tuple[str, ...] = (),
    configs: dict[str, dict[str, Any]] | None = None,
    components: list[tuple[str, str, str | None]] = (),  # type: ignore[assignment]
    models: dict[str, str] | None = None,
    configurations: list[str] | None = None,
    described: dict[str, dict[str, Any]] | None = None,
) -> None:
    """Queue on a SageMaker Stubber what infra.aws.references asks (the sweep before it deletes configurations,
    models and roles, adopt before it adopts them): every endpoint still listed, ``endpoints`` as (name,
    configuration name) (those in ``gone``, deleted by this sweep or adopted, are listed but not described);
    each configuration's description (``configs``: name -> endpoint_config_desc); with ``configurations``, the
    region's configuration list (``configs`` and those names) and the description of each not described yet
    (``described``: name -> endpoint_config_desc); when one hosts components, every component (name, endpoint,
    model; those of the ``gone`` endpoints listed but not described); and, when ``models`` (name -> role ARN) is
    given, each model's description."""
    stub.add_response(
        "list_endpoints",
        {"Endpoints": [{"EndpointName": n, "EndpointArn": endpoint_arn(n), "CreationTime": NOW, "LastModifiedTime": NOW, "EndpointStatus": "InService"}
                       for n, _ in endpoints]},
        {},
    )
    for n, config in endpoints:
        if n not in gone:
            stub.add_response("describe_endpoint", endpoint_desc(n, config_name=config), {"EndpointName": n})
    hosts = False
    for name, desc in (configs or {}).items():
        stub.add_response("describe_endpoint_config", desc, {"EndpointConfigName": name})
        hosts = hosts or any("ModelName" not in v for v in desc["ProductionVariants"])
    if configurations is not None:
        stub.add_response("list_endpoint_configs", config_list(*(configs or {}), *configurations), {})
        for name in configurations:
            stub.add_response("describe_endpoint_config", (described or {})[name], {"EndpointConfigName": name})
    if hosts:
        stub.add_response("list_inference_components", ic_list(*(ic_summary(n, ep) for n, ep, _ in components)), {})
        for n, ep, model in components:
            if ep not in gone:
                stub.add_response("describe_inference_component", ic_desc(n, ep, model=model), {"InferenceComponentName": n})
    for name, role in (models or {}).items():
        stub.add_response("describe_model", {**model_desc(name), "ExecutionRoleArn": role}, {"ModelName": name})
