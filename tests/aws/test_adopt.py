"""`infra.aws.adopt`: a live endpoint read (moto for single-model endpoints, Stubber for inference
components, which moto lacks) and turned into a config that keeps the live names and imports them."""

from __future__ import annotations

import datetime as dt

import pytest

from fastscale.infra.aws.adopt import AdoptRefused, build_config, read_live
from fastscale.infra.config import parse_config
from fastscale.infra.model.naming import endpoint_names
from fastscale.infra.rules import has_errors, run_rules
from tests.aws.factories import ACCOUNT, REGION, endpoint_arn, endpoint_config_desc, queue_in_use, stubbed

NAME = "huggingface-pytorch-tgi-inference-2024-01-01-12-00-00-000"
MODEL = "huggingface-pytorch-tgi-inference-2024-01-01-12-00-00-001"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/sagemaker-sdk"
IMAGE = f"763104351884.dkr.ecr.{REGION}.amazonaws.com/huggingface-pytorch-tgi-inference:2.1"
RID = f"endpoint/{NAME}/variant/AllTraffic"


def sdk_endpoint(aws, **variant):
    """What the SageMaker Python SDK's `Model.deploy()` makes: model (Image + ModelDataUrl + Environment),
    one-variant configuration (weight 1), endpoint."""
    sm = aws["sagemaker"]
    sm.create_model(ModelName=MODEL, ExecutionRoleArn=ROLE, PrimaryContainer={
        "Image": IMAGE, "ModelDataUrl": "s3://sdk-bucket/model.tar.gz", "Environment": {"HF_MODEL_ID": "/opt/ml/model"}})
    variants = [{"VariantName": "AllTraffic", "ModelName": MODEL, "InitialInstanceCount": 2,
                 "InstanceType": "ml.g4dn.xlarge", "InitialVariantWeight": 1, **variant}]
    sm.create_endpoint_config(EndpointConfigName=NAME, ProductionVariants=variants)
    sm.create_endpoint(EndpointName=NAME, EndpointConfigName=NAME)


def scaling(aws, metric="SageMakerVariantInvocationsPerInstance"):
    aas = aws["application-autoscaling"]
    aas.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=RID,
                                 ScalableDimension="sagemaker:variant:DesiredInstanceCount", MinCapacity=2, MaxCapacity=6)
    aas.put_scaling_policy(
        PolicyName="sdk-policy", ServiceNamespace="sagemaker", ResourceId=RID,
        ScalableDimension="sagemaker:variant:DesiredInstanceCount", PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={"TargetValue": 70.0,
                                                  "PredefinedMetricSpecification": {"PredefinedMetricType": metric}})


def test_an_sdk_endpoint_becomes_a_valid_config_that_keeps_every_live_name(aws):
    sdk_endpoint(aws)
    scaling(aws)
    adoption = build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk")
    config = parse_config(adoption.data)
    assert not has_errors(run_rules(config))
    names = endpoint_names(config, config.endpoints[0])
    assert (names.endpoint, names.endpoint_config, names.model) == (NAME, NAME, MODEL)
    assert names.resource_id == RID and names.target_tracking_policy == "sdk-policy"
    ep = config.endpoints[0]
    assert ep.routing is None and ep.execution_role_arn == ROLE and ep.deployment.auto_rollback is False
    assert ep.routing_in_effect == "random"  # what simulate and recommend model: AWS's default
    assert (ep.instances.initial, ep.instances.min, ep.instances.max) == (2, 2, 6)
    assert ep.model is not None and ep.model.model_data == "s3://sdk-bucket/model.tar.gz"
    assert ep.model.environment == {"HF_MODEL_ID": "/opt/ml/model"}
    # An invocations policy keeps its target in its own unit (requests per minute), not as a concurrency.
    assert ep.model.autoscaling.metric == "invocations" and ep.model.autoscaling.target_invocations == 70.0
    assert ep.model.autoscaling.target_concurrency != 70.0 and ep.model.autoscaling.tracking_target == 70.0
    # AAS's own cooldown (300 s) when the live policy sets none: the config writes what AWS applies.
    assert ep.model.autoscaling.scale_in_cooldown == 300 and ep.model.autoscaling.scale_out_cooldown == 300
    assert ep.adopted is not None and ep.adopted.model_data_url and ep.adopted.scalable_target
    assert {n.effect for n in adoption.notes if n.path == "endpoints[0].routing"} == {"kept"}


def test_without_scaling_the_config_turns_none_on(aws):
    sdk_endpoint(aws)
    config = parse_config(build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk").data)
    ep = config.endpoints[0]
    assert ep.model is not None and ep.model.autoscaling.enabled is False
    assert ep.adopted is not None and not ep.adopted.scalable_target and ep.adopted.scaling_policy is None


def test_a_routing_strategy_set_live_is_kept(aws):
    sdk_endpoint(aws, RoutingConfig={"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"})
    config = parse_config(build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk").data)
    assert config.endpoints[0].routing == "least_outstanding_requests"


def test_what_the_config_cannot_reproduce_is_refused_with_every_reason(aws):
    sm = aws["sagemaker"]
    sm.create_model(ModelName=MODEL, ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE})
    variant = {"ModelName": MODEL, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}
    sm.create_endpoint_config(
        EndpointConfigName=NAME,
        ProductionVariants=[{"VariantName": "a", **variant}, {"VariantName": "b", **variant}],
        DataCaptureConfig={"EnableCapture": True, "InitialSamplingPercentage": 10, "DestinationS3Uri": "s3://b/c",
                           "CaptureOptions": [{"CaptureMode": "Input"}]},
    )
    sm.create_endpoint(EndpointName=NAME, EndpointConfigName=NAME)
    with pytest.raises(AdoptRefused) as refused:
        build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk")
    assert "2 production variants: a fastscale endpoint has exactly one" in refused.value.reasons
    assert "the endpoint configuration sets DataCaptureConfig, which fastscale does not model" in refused.value.reasons


def test_an_unknown_endpoint_is_one_aws_error_line(aws):
    from fastscale.infra.aws.clients import AwsError

    with pytest.raises(AwsError, match="Could not find endpoint"):
        read_live("nope", REGION, clients=aws)


# --------------------------------------------------------------------------------------------- components (Stubber)

IC = "llama-ic-2024-01-01"
IC_ARN = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:inference-component/{IC}"
IC_MODEL = "llama-model-2024"
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def stub_component_endpoint(data_cache: dict | None, *, tags: dict[str, dict[str, str]] | None = None,
                            model_also_on: str | None = None) -> dict:
    """An inference-component endpoint as SageMaker describes it, with its tags (ARN -> tags) and what else in
    the region uses its model (``model_also_on``: a component of another endpoint runs it too)."""
    sm, sm_stub = stubbed("sagemaker")
    aas, aas_stub = stubbed("application-autoscaling")
    cw, _ = stubbed("cloudwatch")
    sm_stub.add_response("describe_endpoint", {
        "EndpointName": NAME, "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{NAME}",
        "EndpointConfigName": NAME, "EndpointStatus": "InService", "CreationTime": NOW, "LastModifiedTime": NOW},
        {"EndpointName": NAME})
    sm_stub.add_response("describe_endpoint_config", {
        "EndpointConfigName": NAME, "EndpointConfigArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/{NAME}",
        "CreationTime": NOW, "ExecutionRoleArn": ROLE,
        "ProductionVariants": [{"VariantName": "AllTraffic", "InitialInstanceCount": 1, "InstanceType": "ml.g6.12xlarge",
                                "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 1,
                                                           "MaxInstanceCount": 4}}]}, {"EndpointConfigName": NAME})
    sm_stub.add_response("list_inference_components", {"InferenceComponents": [{
        "InferenceComponentName": IC, "InferenceComponentArn": IC_ARN, "EndpointName": NAME, "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{NAME}",
        "VariantName": "AllTraffic", "CreationTime": NOW, "LastModifiedTime": NOW}]}, {"EndpointNameEquals": NAME})
    spec = {"ModelName": IC_MODEL, "ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 1.0,
                                                                   "MinMemoryRequiredInMb": 1024}}
    if data_cache is not None:
        spec["DataCacheConfig"] = data_cache
    sm_stub.add_response("describe_inference_component", {
        "InferenceComponentName": IC, "InferenceComponentArn": IC_ARN, "EndpointName": NAME, "EndpointArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint/{NAME}",
        "VariantName": "AllTraffic", "CreationTime": NOW, "LastModifiedTime": NOW, "Specification": spec,
        "RuntimeConfig": {"DesiredCopyCount": 1, "CurrentCopyCount": 1}}, {"InferenceComponentName": IC})
    sm_stub.add_response("describe_model", {
        "ModelName": IC_MODEL, "ModelArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model/{IC_MODEL}", "CreationTime": NOW,
        "ExecutionRoleArn": ROLE, "PrimaryContainer": {
            "Image": IMAGE, "ModelDataSource": {"S3DataSource": {"S3Uri": "s3://m/llama/", "S3DataType": "S3Prefix",
                                                                 "CompressionType": "None"}}}}, {"ModelName": IC_MODEL})
    aas_stub.add_response("describe_scalable_targets", {"ScalableTargets": []}, {
        "ServiceNamespace": "sagemaker",
        "ResourceIds": [f"endpoint/{NAME}/variant/AllTraffic", f"inference-component/{IC}"]})
    config_arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/{NAME}"
    for arn in (endpoint_arn(NAME), config_arn, f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model/{IC_MODEL}", IC_ARN):
        sm_stub.add_response("list_tags", {"Tags": [{"Key": k, "Value": v} for k, v in (tags or {}).get(arn, {}).items()]},
                             {"ResourceArn": arn})
    # What else in the region uses the configuration and the model.
    others = [model_also_on] if model_also_on else []
    queue_in_use(sm_stub, endpoints=[(NAME, NAME), *((o, f"{o}-config") for o in others)], gone=(NAME,),
                 configs={f"{o}-config": endpoint_config_desc(f"{o}-config") for o in others},
                 components=[(IC, NAME, IC_MODEL), *((f"{o}-ic", o, IC_MODEL) for o in others)], configurations=[NAME],
                 described={NAME: endpoint_config_desc(NAME, role=ROLE)})
    return {"sagemaker": sm, "application-autoscaling": aas, "cloudwatch": cw}


def test_a_component_without_data_cache_config_keeps_it_unset_and_is_imported_by_arn():
    clients = stub_component_endpoint(None)
    adoption = build_config(read_live(NAME, REGION, clients=clients), REGION, "ic")
    config = parse_config(adoption.data)
    [c] = config.endpoints[0].inference_components
    assert c.data_cache is None  # not silently turned on
    assert c.adopted is not None and c.adopted.arn == IC_ARN and c.adopted.model == IC_MODEL
    assert not c.adopted.model_data_url and c.model_data == "s3://m/llama/"
    assert c.resources.accelerators == 1 and c.resources.memory_mb == 1024
    assert (config.endpoints[0].instances.min, config.endpoints[0].instances.max) == (1, 4)
    assert [n.effect for n in adoption.notes if n.path.endswith(".data_cache")] == ["kept"]
    names = endpoint_names(config, config.endpoints[0])
    assert names.components[0].name == IC and names.components[0].model == IC_MODEL


def test_a_component_with_data_cache_on_keeps_it_on():
    adoption = build_config(read_live(NAME, REGION, clients=stub_component_endpoint({"EnableCaching": True})), REGION, "ic")
    assert parse_config(adoption.data).endpoints[0].inference_components[0].data_cache is True
    assert not [n for n in adoption.notes if n.path.endswith(".data_cache")]


def test_adopted_names_are_no_clash_but_stay_untouched_until_tagged_and_other_taken_names_still_clash(aws, clock):
    from fastscale.infra.aws.inventory import take_inventory
    from fastscale.infra.aws.sweep import sweep

    sdk_endpoint(aws)
    scaling(aws)
    data = build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk").data
    # A second, fastscale-named endpoint whose name someone else already uses: still a clash.
    other = {**data["endpoints"][0], "name": "other", "adopted": None}
    other["model"] = {**other["model"], "autoscaling": {"enabled": False}}
    aws["sagemaker"].create_endpoint(EndpointName="sdk-other", EndpointConfigName=NAME)
    config = parse_config({**data, "endpoints": [data["endpoints"][0], other]})

    inventory = take_inventory(config, clients=aws)
    adopted = {(r.kind, r.name) for r in inventory.resources if r.data.get("adopted")}
    assert adopted == {("endpoint", NAME), ("endpoint-config", NAME), ("model", MODEL), ("scalable-target", RID),
                       ("scaling-policy", "sdk-policy")}
    assert [(r.kind, r.name) for r in inventory.name_clashes()] == [("endpoint", "sdk-other")]
    # Adopting is no proof of ownership: before the first deploy tags them, nothing of it is the stack's.
    assert not [r for r in inventory.resources if r.ownership.ours]
    report = sweep(config, clients=aws, clock=clock)
    assert report.actions == [] and ("endpoint", NAME) in {(f.kind, f.name) for f in report.not_touched}
    assert aws["sagemaker"].describe_endpoint(EndpointName=NAME)["EndpointStatus"] == "InService"


def test_a_model_variant_with_managed_instance_scaling_is_refused(aws):
    sdk_endpoint(aws)
    live = read_live(NAME, REGION, clients=aws)
    live.config["ProductionVariants"][0]["ManagedInstanceScaling"] = {
        "Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 4}
    with pytest.raises(AdoptRefused) as refused:
        build_config(live, REGION, "sdk")
    assert [r for r in refused.value.reasons if "managed instance scaling" in r] == [
        "variant AllTraffic has a model and managed instance scaling: fastscale scales a single-model endpoint "
        "with Application Auto Scaling only, which would need a new configuration"]


def test_prefix_aware_routing_and_the_ami_version_are_kept_with_their_settings(aws):
    sdk_endpoint(aws)
    live = read_live(NAME, REGION, clients=aws)
    variant = live.config["ProductionVariants"][0]
    variant["RoutingConfig"] = {"RoutingStrategy": "PREFIX_AWARE",
                                "PrefixAwareRoutingConfig": {"PrefixLength": 2048, "ConcurrencyThreshold": 8}}
    variant["InferenceAmiVersion"] = "al2-ami-sagemaker-inference-gpu-3-1"
    adoption = build_config(live, REGION, "sdk")
    config = parse_config(adoption.data)
    ep = config.endpoints[0]
    assert ep.routing == "prefix_aware" and ep.prefix_routing is not None
    assert (ep.prefix_routing.prefix_length, ep.prefix_routing.concurrency_threshold) == (2048, 8)
    assert ep.inference_ami_version == "al2-ami-sagemaker-inference-gpu-3-1"
    # Prefix-aware routing makes the configuration awscc's, which cannot import the live one by name (FS112):
    # the live configuration is not kept, and the notes say so.
    assert ep.adopted is not None and ep.adopted.endpoint_config is None
    assert [n.effect for n in adoption.notes if n.path == "endpoints[0].adopted"] == ["create"]
    assert not has_errors(run_rules(config))


def test_a_routing_strategy_fastscale_does_not_model_is_refused_not_a_traceback(aws):
    sdk_endpoint(aws)
    live = read_live(NAME, REGION, clients=aws)
    live.config["ProductionVariants"][0]["RoutingConfig"] = {"RoutingStrategy": "SESSION_AWARE", "Stickiness": {}}
    with pytest.raises(AdoptRefused) as refused:
        build_config(live, REGION, "sdk")
    assert [r for r in refused.value.reasons if "routes with" in r] == [
        "variant AllTraffic routes with SESSION_AWARE: fastscale routes with KV_AWARE or LEAST_OUTSTANDING_REQUESTS or "
        "PREFIX_AWARE or RANDOM (or SageMaker's default)"]


def test_a_policy_name_with_a_slash_is_refused_with_the_reason(aws):
    sdk_endpoint(aws)
    aas = aws["application-autoscaling"]
    aas.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=RID,
                                 ScalableDimension="sagemaker:variant:DesiredInstanceCount", MinCapacity=2, MaxCapacity=6)
    aas.put_scaling_policy(
        PolicyName="team/chat-policy", ServiceNamespace="sagemaker", ResourceId=RID,
        ScalableDimension="sagemaker:variant:DesiredInstanceCount", PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={"TargetValue": 4.0, "PredefinedMetricSpecification": {
            "PredefinedMetricType": "SageMakerVariantConcurrentRequestsPerModelHighResolution"}})
    with pytest.raises(AdoptRefused) as refused:
        build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk")
    assert any("team/chat-policy" in r and "splits on '/'" in r for r in refused.value.reasons)


def test_a_config_naming_a_policy_with_a_slash_is_refused(aws):
    sdk_endpoint(aws)
    scaling(aws, metric="SageMakerVariantConcurrentRequestsPerModelHighResolution")
    data = build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk").data
    data["endpoints"][0]["adopted"]["scaling_policy"] = "team/chat-policy"
    from fastscale.infra.config import ConfigError

    with pytest.raises(ConfigError, match=r"adopted\.scaling_policy: .*splits on '/'"):
        parse_config(data)


def _arn(kind: str, name: str) -> str:
    return f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:{kind}/{name}"


def test_live_tags_are_kept_per_resource_reserved_ones_left_out_with_a_note(aws):
    sdk_endpoint(aws)
    sm = aws["sagemaker"]
    sm.add_tags(ResourceArn=_arn("endpoint", NAME), Tags=[{"Key": "cost-center", "Value": "ml-42"},
                                                         {"Key": "aws:cloudformation:stack-name", "Value": "x"}])
    sm.add_tags(ResourceArn=_arn("endpoint-config", NAME), Tags=[{"Key": "cost-center", "Value": "ml-42"}])
    sm.add_tags(ResourceArn=_arn("model", MODEL), Tags=[{"Key": "sagemaker.amazonaws.com/model-source", "Value": "sdk"},
                                                       {"Key": "managed-by", "Value": "someone"}])
    adoption = build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk")
    config = parse_config(adoption.data)
    assert not has_errors(run_rules(config))
    ep = config.endpoints[0]
    assert ep.adopted is not None
    assert ep.adopted.tags.endpoint == {"cost-center": "ml-42"}
    assert ep.adopted.tags.endpoint_config == {"cost-center": "ml-42"}
    assert ep.adopted.tags.model == {"sagemaker.amazonaws.com/model-source": "sdk"}
    notes = {n.path: n for n in adoption.notes}
    assert "aws:cloudformation:stack-name" in notes["endpoints[0].adopted.tags.endpoint"].message
    assert "managed-by" in notes["endpoints[0].adopted.tags.model"].message


def test_an_adopted_tag_with_a_reserved_key_is_a_validate_error_at_its_path(aws):
    sdk_endpoint(aws)
    data = build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk").data
    data["endpoints"][0]["adopted"]["tags"] = {"endpoint": {"aws:owner": "x"}}
    hits = [f for f in run_rules(parse_config(data)) if f.code == "FS079"]
    assert [f.path for f in hits] == ['endpoints[0].adopted.tags.endpoint["aws:owner"]']


def test_a_components_live_tags_are_kept_on_the_component_and_its_model():
    model_arn = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:model/{IC_MODEL}"
    aws = stub_component_endpoint(None, tags={IC_ARN: {"owner": "ana"},
                                              model_arn: {"sagemaker.amazonaws.com/model-source": "sdk"}})
    config = parse_config(build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk").data)
    ep = config.endpoints[0]
    [component] = ep.inference_components
    assert component.adopted is not None
    assert component.adopted.tags.component == {"owner": "ana"}
    assert component.adopted.tags.model == {"sagemaker.amazonaws.com/model-source": "sdk"}
    assert ep.adopted is not None and ep.adopted.tags.endpoint == {} and ep.adopted.tags.model == {}
