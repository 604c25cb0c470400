"""`fastscale adopt` end to end on fastscale's emulator (as `fastscale emulator` runs it), each step a
`fastscale` process with the real terraform binary and hashicorp/aws provider:

an endpoint made the way the SageMaker Python SDK makes it (CreateModel with Image + ModelDataUrl +
Environment, CreateEndpointConfig with one variant and no RoutingConfig, CreateEndpoint, then
RegisterScalableTarget + PutScalingPolicy as its auto scaling examples do) → `adopt` → `plan` (nothing
destroyed or replaced, the adopted resources imported) → `deploy` (the same endpoint: ARN, creation time
and configuration unchanged; fastscale's tags added in place) → a scaling change deployed in place →
`status` → `destroy` → `verify-cleanup`.

One emulator and one project for the module: the steps are one user's session, in order.
"""

from __future__ import annotations

import json

import pytest
import yaml

from tests.e2e.emulator_support import FOUND, MARKS, aws, fastscale, fresh_emulator, project_env, summary

pytestmark = MARKS

NAME = "huggingface-pytorch-tgi-inference-2024-01-01-12-00-00-000"
ROLE = "arn:aws:iam::123456789012:role/sagemaker-sdk"
IMAGE = ("763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:"
         "2.1.1-tgi1.4.0-gpu-py310-cu121-ubuntu20.04")
POLICY = "SageMakerEndpointInvocationScalingPolicy"
RESOURCE_ID = f"endpoint/{NAME}/variant/AllTraffic"
DIMENSION = "sagemaker:variant:DesiredInstanceCount"
ADOPTED_TYPES = {"aws_sagemaker_model", "aws_sagemaker_endpoint_configuration", "aws_sagemaker_endpoint",
                 "aws_appautoscaling_target", "aws_appautoscaling_policy"}


@pytest.fixture(scope="module")
def emulator():
    with fresh_emulator() as url:
        yield url


@pytest.fixture(scope="module")
def sdk_endpoint(emulator):
    """The endpoint as `HuggingFaceModel(...).deploy(...)` leaves it, plus the SDK docs' auto scaling."""
    sm, aas = aws(emulator, "sagemaker"), aws(emulator, "application-autoscaling")
    sm.create_model(ModelName=NAME, ExecutionRoleArn=ROLE, PrimaryContainer={
        "Image": IMAGE, "ModelDataUrl": "s3://sdk-bucket/model.tar.gz",
        "Environment": {"HF_MODEL_ID": "/opt/ml/model", "SM_NUM_GPUS": "1", "MAX_INPUT_LENGTH": "2048"}})
    sm.create_endpoint_config(EndpointConfigName=NAME, ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": NAME, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge",
        "InitialVariantWeight": 1}])  # as the SDK's production_variant() sends it: no RoutingConfig
    sm.create_endpoint(EndpointName=NAME, EndpointConfigName=NAME)
    aas.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID, ScalableDimension=DIMENSION,
                                 MinCapacity=1, MaxCapacity=3)
    aas.put_scaling_policy(
        PolicyName=POLICY, ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID, ScalableDimension=DIMENSION,
        PolicyType="TargetTrackingScaling", TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 70.0, "ScaleInCooldown": 600, "ScaleOutCooldown": 300,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}})
    return sm.describe_endpoint(EndpointName=NAME)


def test_an_sdk_endpoint_is_adopted_deployed_without_replacement_scaled_and_destroyed(tmp_path, emulator, sdk_endpoint):
    env = project_env(tmp_path)
    sm, aas = aws(emulator, "sagemaker"), aws(emulator, "application-autoscaling")
    model_created = sm.describe_model(ModelName=NAME)["CreationTime"]

    # adopt: the config that reproduces it, AWS's defaults kept, and the import blocks.
    adopted = fastscale(tmp_path, env, "adopt", NAME, "--region", "us-east-1", "--endpoint-url", emulator, "--json")
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    report = summary(adopted)
    assert report["written"] == "fastscale.yaml"
    config = yaml.safe_load((tmp_path / "fastscale.yaml").read_text())
    [ep] = config["endpoints"]
    assert ep["adopted"] == {"endpoint": NAME, "endpoint_config": NAME, "model": NAME, "model_data_url": True,
                             "scalable_target": True, "scaling_policy": POLICY}
    assert ep["routing"] is None  # AWS's default (RANDOM, no RoutingConfig), not fastscale's
    assert ep["instance_type"] == "ml.g4dn.xlarge" and ep["instances"] == {"initial": 1, "min": 1, "max": 3}
    assert ep["model"]["image"] == IMAGE and ep["model"]["model_data"] == "s3://sdk-bucket/model.tar.gz"
    assert ep["model"]["autoscaling"] == {"enabled": True, "metric": "invocations", "target_invocations": 70.0,
                                         "scale_in_cooldown": 600, "scale_out_cooldown": 300}
    imports = {block["to"].split(".")[0]: block["id"] for block in report["imports"]}
    assert imports == {
        "aws_sagemaker_model": NAME, "aws_sagemaker_endpoint_configuration": NAME, "aws_sagemaker_endpoint": NAME,
        "aws_appautoscaling_target": f"sagemaker/{RESOURCE_ID}/{DIMENSION}",
        "aws_appautoscaling_policy": f"sagemaker/{RESOURCE_ID}/{DIMENSION}/{POLICY}",
    }
    # A second adopt never overwrites the config.
    again = fastscale(tmp_path, env, "adopt", NAME, "--region", "us-east-1", "--endpoint-url", emulator)
    assert again.returncode == 2 and "never overwrites" in again.stderr

    # The provider release the offline mirror holds (a real project keeps fastscale's default constraint).
    assert FOUND is not None
    config["providers"] = {"aws": f"= {FOUND[1]}"}
    (tmp_path / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))

    # plan: the live names are not taken for another stack's; imports and in-place updates only.
    planned = fastscale(tmp_path, env, "plan", "fastscale.yaml", "--json")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    stack_dir = tmp_path / "cdktf.out" / "stacks" / config["project"]
    stack = json.loads((stack_dir / "cdk.tf.json").read_text())
    assert {block["to"].split(".")[0] for block in stack["import"]} == ADOPTED_TYPES
    shown = _plan_changes(planned)
    assert shown["destroy"] == [] and shown["replace"] == [], shown
    assert summary(planned)["imported"] == len(ADOPTED_TYPES)  # counted as imports, not as resources to add
    assert ADOPTED_TYPES.isdisjoint({a.split(".")[0] for a in shown["create"]}), shown["create"]

    # deploy: imports, tags in place, nothing replaced; the endpoint is the very one the SDK made.
    deployed = fastscale(tmp_path, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    assert summary(deployed)["ok"] is True
    live = sm.describe_endpoint(EndpointName=NAME)
    assert (live["EndpointArn"], live["CreationTime"]) == (sdk_endpoint["EndpointArn"], sdk_endpoint["CreationTime"])
    assert live["EndpointConfigName"] == NAME
    assert sm.describe_model(ModelName=NAME)["CreationTime"] == model_created
    assert [m["ModelName"] for m in sm.list_models()["Models"]] == [NAME]
    assert [c["EndpointConfigName"] for c in sm.list_endpoint_configs()["EndpointConfigs"]] == [NAME]
    assert "RoutingConfig" not in sm.describe_endpoint_config(EndpointConfigName=NAME)["ProductionVariants"][0]
    tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=live["EndpointArn"])["Tags"]}
    assert tags["fastscale:stack"] == config["project"] and tags["fastscale:endpoint"] == NAME
    for arn in (sm.describe_model(ModelName=NAME)["ModelArn"],
                sm.describe_endpoint_config(EndpointConfigName=NAME)["EndpointConfigArn"]):
        assert {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}["fastscale:stack"] == config["project"]
    [target] = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    assert aas.list_tags_for_resource(ResourceARN=target["ScalableTargetARN"])["Tags"]["fastscale:stack"] == config["project"]
    [policy] = aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]
    assert policy["PolicyName"] == POLICY
    state = json.loads((tmp_path / f"terraform.{config['project']}.us-east-1.tfstate").read_text())
    assert {r["type"] for r in state["resources"]} >= ADOPTED_TYPES
    # Once imported, the same config plans nothing for the adopted resources.
    replanned = _plan_changes(fastscale(tmp_path, env, "plan", "fastscale.yaml", "--json"))
    assert not [a for kind in ("create", "update", "replace", "destroy") for a in replanned[kind]
                if a.split(".")[0] in ADOPTED_TYPES], replanned

    # scale: one more instance allowed, updated in place on the same endpoint.
    config = yaml.safe_load((tmp_path / "fastscale.yaml").read_text())
    config["endpoints"][0]["instances"]["max"] = 4
    (tmp_path / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    scaled = fastscale(tmp_path, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert scaled.returncode == 0, scaled.stdout + scaled.stderr
    [target] = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    assert (target["ResourceId"], target["MinCapacity"], target["MaxCapacity"]) == (RESOURCE_ID, 1, 4)
    assert sm.describe_endpoint(EndpointName=NAME)["CreationTime"] == sdk_endpoint["CreationTime"]
    status = fastscale(tmp_path, env, "status", "fastscale.yaml", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    assert summary(status)["ok"] is True

    # destroy, and the proof that nothing of it is left.
    destroyed = fastscale(tmp_path, env, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert sm.list_endpoints()["Endpoints"] == [] and sm.list_models()["Models"] == []
    assert sm.list_endpoint_configs()["EndpointConfigs"] == []
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"] == []
    assert aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"] == []
    verified = fastscale(tmp_path, env, "verify-cleanup", "fastscale.yaml", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert summary(verified)["ok"] is True


def _plan_changes(proc) -> dict[str, list[str]]:
    """Addresses per kind of change in `fastscale plan --json`'s classified plan."""
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out: dict[str, list[str]] = {"create": [], "update": [], "replace": [], "destroy": []}
    for change in summary(proc)["classification"]["resources"]:
        actions = set(change["actions"])
        kind = ("replace" if {"create", "delete"} <= actions else "destroy" if "delete" in actions
                else "create" if "create" in actions else "update" if "update" in actions else None)
        if kind:
            out[kind].append(change["address"])
    return out
