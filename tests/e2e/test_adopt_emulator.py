"""`fastscale adopt` end to end: an endpoint made the way the SageMaker Python SDK makes it (CreateModel with
Image + ModelDataUrl + Environment, CreateEndpointConfig with one variant, CreateEndpoint, then
RegisterScalableTarget + PutScalingPolicy), adopted through the `fastscale` command in its own process,
then planned by the real terraform binary and hashicorp/aws provider against the emulator (moto's
threaded server): every adopted resource is imported and at most updated in place, nothing is created in
its stead, replaced or destroyed.

Emulator gaps shimmed here, each where moto answers unlike AWS (and would make the provider plan a
replacement that a real account does not get):
- moto lacks Application Auto Scaling's ListTagsForResource, which the provider calls to read an imported
  scalable target: answered with no tags.
- moto's DescribeModel has no `PrimaryContainer.Mode`; AWS answers `SingleModel`, the provider's default
  for the attribute (a missing mode would plan `+ mode = "SingleModel"`, which forces a new model).
- moto answers an unset `VpcConfig` (DescribeModel) and `DataCaptureConfig` (DescribeEndpointConfig) with
  empty objects, which the provider reads as present blocks; AWS leaves unset members out.
The `emulator` fixture of test_emulator_lifecycle adds UpdateEndpoint.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from tests.e2e.test_emulator_lifecycle import BINARY, FOUND, REGION, emulator, fastscale, project  # noqa: F401
from tests.e2e.test_emulator_lifecycle import pytestmark as lifecycle_marks

pytestmark = lifecycle_marks

NAME = "huggingface-pytorch-tgi-inference-2024-01-01-12-00-00-000"
ROLE = "arn:aws:iam::123456789012:role/sagemaker-sdk"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.1.1-tgi1.4.0-gpu-py310-cu121-ubuntu20.04"
POLICY = "SageMakerEndpointInvocationScalingPolicy"
RESOURCE_ID = f"endpoint/{NAME}/variant/AllTraffic"


def _no_tags(self):
    return json.dumps({"Tags": {}})


def _without_empty(response: dict) -> dict:
    return {k: v for k, v in response.items() if v != {}}


def _describe_model_as_aws(self):
    from moto.sagemaker.responses import ActionResult

    response = _without_empty(dict(self.sagemaker_backend.describe_model(self._get_param("ModelName")).response_object))
    response["PrimaryContainer"] = {"Mode": "SingleModel", **response["PrimaryContainer"]}
    return ActionResult(response)


def _describe_endpoint_config_as_aws(self):
    from moto.sagemaker.responses import ActionResult

    return ActionResult(_without_empty(dict(
        self.sagemaker_backend.describe_endpoint_config(self._get_param("EndpointConfigName")))))


@pytest.fixture
def sdk_endpoint(emulator, monkeypatch):  # noqa: F811
    import boto3
    from moto.applicationautoscaling.responses import ApplicationAutoScalingResponse
    from moto.sagemaker.responses import SageMakerResponse

    monkeypatch.setattr(ApplicationAutoScalingResponse, "list_tags_for_resource", _no_tags, raising=False)
    monkeypatch.setattr(SageMakerResponse, "describe_model", _describe_model_as_aws)
    monkeypatch.setattr(SageMakerResponse, "describe_endpoint_config", _describe_endpoint_config_as_aws)
    kw = dict(region_name=REGION, endpoint_url=emulator, aws_access_key_id="testing", aws_secret_access_key="testing")
    sm, aas = boto3.client("sagemaker", **kw), boto3.client("application-autoscaling", **kw)
    sm.create_model(ModelName=NAME, ExecutionRoleArn=ROLE, PrimaryContainer={
        "Image": IMAGE, "ModelDataUrl": "s3://sdk-bucket/model.tar.gz",
        "Environment": {"HF_MODEL_ID": "/opt/ml/model", "SM_NUM_GPUS": "1", "MAX_INPUT_LENGTH": "2048"}})
    sm.create_endpoint_config(EndpointConfigName=NAME, ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": NAME, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge",
        "InitialVariantWeight": 1}])  # as the SDK's production_variant() sends it
    sm.create_endpoint(EndpointName=NAME, EndpointConfigName=NAME)
    aas.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID,
                                 ScalableDimension="sagemaker:variant:DesiredInstanceCount", MinCapacity=1, MaxCapacity=3)
    aas.put_scaling_policy(
        PolicyName=POLICY, ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID,
        ScalableDimension="sagemaker:variant:DesiredInstanceCount", PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 70.0, "ScaleInCooldown": 600, "ScaleOutCooldown": 300,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}})
    yield sm
    for model in sm.list_models()["Models"]:  # the module's emulator is shared with the lifecycle test
        sm.delete_model(ModelName=model["ModelName"])
    for ep in sm.list_endpoints()["Endpoints"]:
        sm.delete_endpoint(EndpointName=ep["EndpointName"])
    for cfg in sm.list_endpoint_configs()["EndpointConfigs"]:
        sm.delete_endpoint_config(EndpointConfigName=cfg["EndpointConfigName"])
    aas.deregister_scalable_target(ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID,
                                   ScalableDimension="sagemaker:variant:DesiredInstanceCount")


def terraform(project, *args: str) -> subprocess.CompletedProcess[str]:  # noqa: F811
    root, env, _ = project
    return subprocess.run([BINARY, f"-chdir={root / 'cdktf.out' / 'stacks' / 'huggingface-pytorch'}", *args],
                          env=env, capture_output=True, text=True, timeout=600)


def test_an_sdk_endpoint_is_adopted_and_planned_as_imports_and_in_place_updates_only(project, emulator, sdk_endpoint):  # noqa: F811
    root, _, provider = project
    adopted = fastscale(project, "adopt", NAME, "--region", REGION, "--endpoint-url", emulator, "--json")
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    report = json.loads(adopted.stdout)
    assert report["written"] == "fastscale.yaml"
    config = yaml.safe_load((root / "fastscale.yaml").read_text())
    [ep] = config["endpoints"]
    assert ep["adopted"] == {"endpoint": NAME, "endpoint_config": NAME, "model": NAME, "model_data_url": True,
                             "scalable_target": True, "scaling_policy": POLICY}
    assert ep["routing"] is None and ep["instance_type"] == "ml.g4dn.xlarge"
    assert ep["instances"] == {"initial": 1, "min": 1, "max": 3}
    assert ep["model"]["autoscaling"] == {"enabled": True, "metric": "invocations", "target_concurrency": 70.0,
                                          "scale_in_cooldown": 600, "scale_out_cooldown": 300}
    imports = {block["to"].split(".")[0]: block["id"] for block in report["imports"]}
    assert imports == {
        "aws_sagemaker_model": NAME, "aws_sagemaker_endpoint_configuration": NAME, "aws_sagemaker_endpoint": NAME,
        "aws_appautoscaling_target": f"sagemaker/{RESOURCE_ID}/sagemaker:variant:DesiredInstanceCount",
        "aws_appautoscaling_policy": f"sagemaker/{RESOURCE_ID}/sagemaker:variant:DesiredInstanceCount/{POLICY}",
    }

    # The provider the offline mirror holds (as the lifecycle test pins it), then Terraform's own plan.
    config["providers"] = {"aws": f"= {provider}"}
    (root / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    synth = fastscale(project, "synth", "fastscale.yaml")
    assert synth.returncode == 0, synth.stdout + synth.stderr
    assert terraform(project, "init", "-input=false").returncode == 0
    planned = terraform(project, "plan", "-input=false", "-out=adopt.plan")
    assert planned.returncode == 0, planned.stdout + planned.stderr
    shown = json.loads(terraform(project, "show", "-json", "adopt.plan").stdout)
    changes = {c["address"]: c for c in shown["resource_changes"]}
    imported = {c["address"]: c for c in changes.values() if c["change"].get("importing")}
    assert {a.split(".")[0] for a in imported} == set(imports)
    for address, change in imported.items():
        assert change["change"]["actions"] in (["no-op"], ["update"]), (address, change["change"]["actions"])
    # Whatever is not imported is new (fastscale's alarms and dashboard), never one of the adopted types.
    created = {a.split(".")[0] for a, c in changes.items() if a not in imported and c["change"]["actions"] != ["no-op"]}
    assert created <= {"aws_cloudwatch_metric_alarm", "aws_cloudwatch_dashboard"}, created
    assert not [a for a, c in changes.items() if "delete" in c["change"]["actions"]]
    # The ownership tags are what the first deploy adds in place.
    endpoint = next(c for c in imported.values() if c["type"] == "aws_sagemaker_endpoint")
    assert endpoint["change"]["after"]["tags"]["fastscale:stack"] == "huggingface-pytorch"
