"""`fastscale adopt` of every shape of endpoint the SageMaker Python SDK and the console leave, end to end on
fastscale's emulator, each step a `fastscale` process with the real terraform binary and hashicorp/aws provider:

create (boto3 calls shaped as each client sends them) → `adopt` → `plan` (nothing destroyed or replaced, the
adopted resources counted as imports, no live tag removed) → `deploy` (the same endpoint; every live tag still
on every resource, fastscale's added) → scale (the scaling change applied in place) → `destroy` → `verify-cleanup`.

The shapes, as read in the SDK's source (aws/sagemaker-python-sdk):

- **SDK 2.x** (`Model.deploy()`, v2.257): `Session.create_model` sends `PrimaryContainer` as `container_def()`
  builds it (`Image`, `Environment` always, `ModelDataUrl` for an S3 URI); `production_variant()` sends
  `InitialVariantWeight: 1` with the model's name, `InitialInstanceCount`, `InstanceType`, no `RoutingConfig`;
  `endpoint_from_production_variants` gives the deploy's `tags` to the configuration and the endpoint
  (`CreateEndpoint` always carries a `Tags` list, empty or not), `create_model` to the model.
- **SDK 3.x** (`ModelBuilder.deploy()`, sagemaker-serve 1.x with sagemaker-core 2.x): the same calls through
  `session_helper`, an `Environment` that is `{}` when the model sets none, and the
  `sagemaker.amazonaws.com/model-source` tag the SDK's resource reuse looks endpoints up by.
- **Console style**: a variant created without `InitialVariantWeight` (AWS fills 1.0), a model without
  `Environment`, tags added afterwards (`AddTags`, Application Auto Scaling `TagResource`) rather than at
  creation.

Auto scaling is what AWS's guide (endpoint-auto-scaling-add-code) and the console set up: a scalable target,
tagged, and a target-tracking policy on `SageMakerVariantInvocationsPerInstance` with target 70 (with or without
cooldowns). The SDK has no call for it.

Each case runs on an emulator of its own (moto keeps one account per process; a case starts from it empty).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import yaml

from fastscale.infra.base.provider_versions import EMULATOR_AWS
from tests.e2e.emulator_support import MARKS, aws, fastscale, fresh_emulator, project_env, summary
from tests.e2e.test_adopt_emulator import ADOPTED_TYPES, DIMENSION, IMAGE, ROLE, _plan_changes

pytestmark = MARKS

NAME = "hf-llm-2026-11-30-09-41-07-512"
RESOURCE_ID = f"endpoint/{NAME}/variant/AllTraffic"
COST = {"Key": "cost-center", "Value": "cc-4711"}
SOURCE = {"Key": "sagemaker.amazonaws.com/model-source", "Value": "s3://sdk-bucket/llm/model.tar.gz"}
MODEL_DATA = "s3://sdk-bucket/llm/model.tar.gz"
ENV = {"HF_MODEL_ID": "/opt/ml/model", "SM_NUM_GPUS": "1"}


@dataclass(frozen=True)
class Shape:
    model_container: dict
    variant: dict
    tags_at_create: list[dict[str, str]] = field(default_factory=list)
    tags_added_after: list[dict[str, str]] = field(default_factory=list)
    target_tags: dict[str, str] = field(default_factory=dict)
    target_tags_after: dict[str, str] = field(default_factory=dict)
    cooldowns: dict[str, int] = field(default_factory=dict)


_VARIANT = {"VariantName": "AllTraffic", "ModelName": NAME, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}

SHAPES = {
    "sdk2": Shape(model_container={"Image": IMAGE, "Environment": ENV, "ModelDataUrl": MODEL_DATA},
                  variant={**_VARIANT, "InitialVariantWeight": 1}, tags_at_create=[COST],
                  target_tags={"cost-center": "cc-4711"}, cooldowns={"ScaleInCooldown": 600, "ScaleOutCooldown": 300}),
    "sdk3": Shape(model_container={"Image": IMAGE, "Environment": {}, "ModelDataUrl": MODEL_DATA},
                  variant={**_VARIANT, "InitialVariantWeight": 1}, tags_at_create=[SOURCE, COST],
                  target_tags={"cost-center": "cc-4711", "team": "search"}),
    "console": Shape(model_container={"Image": IMAGE, "ModelDataUrl": MODEL_DATA}, variant=dict(_VARIANT),
                     tags_added_after=[COST, {"Key": "owner", "Value": "ana@example.com"}],
                     target_tags_after={"cost-center": "cc-4711"},
                     cooldowns={"ScaleInCooldown": 300, "ScaleOutCooldown": 300}),
}


def create(url: str, shape: Shape) -> None:
    """The endpoint and its auto scaling, each call shaped as its client sends it."""
    sm, aas = aws(url, "sagemaker"), aws(url, "application-autoscaling")
    tags = {"Tags": shape.tags_at_create} if shape.tags_at_create else {}
    sm.create_model(ModelName=NAME, ExecutionRoleArn=ROLE, PrimaryContainer=shape.model_container, **tags)
    sm.create_endpoint_config(EndpointConfigName=NAME, ProductionVariants=[shape.variant], **tags)
    sm.create_endpoint(EndpointName=NAME, EndpointConfigName=NAME, Tags=list(shape.tags_at_create))
    if shape.tags_added_after:
        for arn in _sagemaker_arns(sm):
            sm.add_tags(ResourceArn=arn, Tags=shape.tags_added_after)
    registered = aas.register_scalable_target(
        ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID, ScalableDimension=DIMENSION, MinCapacity=1, MaxCapacity=2,
        **({"Tags": shape.target_tags} if shape.target_tags else {}))
    if shape.target_tags_after:
        aas.tag_resource(ResourceARN=registered["ScalableTargetARN"], Tags=shape.target_tags_after)
    aas.put_scaling_policy(
        PolicyName="SageMakerEndpointInvocationScalingPolicy", ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID,
        ScalableDimension=DIMENSION, PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 70.0, **shape.cooldowns,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}})


def _sagemaker_arns(sm) -> list[str]:
    return [sm.describe_endpoint(EndpointName=NAME)["EndpointArn"],
            sm.describe_endpoint_config(EndpointConfigName=NAME)["EndpointConfigArn"],
            sm.describe_model(ModelName=NAME)["ModelArn"]]


def live_tags(url: str) -> dict[str, dict[str, str]]:
    """Every tag of the endpoint, its configuration, its model and its scalable target."""
    sm, aas = aws(url, "sagemaker"), aws(url, "application-autoscaling")
    out = {arn.split(":")[5].split("/")[0]: {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}
           for arn in _sagemaker_arns(sm)}
    [target] = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    out["scalable-target"] = aas.list_tags_for_resource(ResourceARN=target["ScalableTargetARN"])["Tags"]
    return out


def lost(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> list[str]:
    """The tags of ``before`` that ``after`` no longer has (or has with another value)."""
    return [f"{kind} lost {key}={value}" for kind, tags in before.items() for key, value in tags.items()
            if after[kind].get(key) != value]


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
def test_each_shape_is_adopted_deployed_without_replacement_or_lost_tag_scaled_and_destroyed(tmp_path, shape):
    with fresh_emulator() as url:
        create(url, SHAPES[shape])
        adopt_deploy_scale_destroy(tmp_path, url)


def adopt_deploy_scale_destroy(tmp_path, url: str, after_deploy: Callable[[], None] | None = None) -> None:
    """The whole take-over of the endpoint NAME (with its tagged scalable target and invocations policy) made
    on the emulator at ``url``; ``after_deploy`` runs once the first deploy is done."""
    env = project_env(tmp_path)
    sm, aas = aws(url, "sagemaker"), aws(url, "application-autoscaling")
    made = sm.describe_endpoint(EndpointName=NAME)
    before = live_tags(url)
    assert before["scalable-target"], "every shape tags its scalable target"

    # adopt: every live tag is written into the config, per resource; the invocations policy in its unit.
    adopted = fastscale(tmp_path, env, "adopt", NAME, "--region", "us-east-1", "--endpoint-url", url, "--json")
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    config = yaml.safe_load((tmp_path / "fastscale.yaml").read_text())
    [ep] = config["endpoints"]
    assert ep["adopted"]["tags"] == {
        kind: tags for kind, tags in (("endpoint", before["endpoint"]), ("endpoint_config", before["endpoint-config"]),
                                      ("model", before["model"]), ("scalable_target", before["scalable-target"])) if tags}
    scaling = ep["model"]["autoscaling"]
    assert (scaling["metric"], scaling["target_invocations"]) == ("invocations", 70.0)
    assert "target_concurrency" not in scaling
    # the emulator's provider range, as `init --emulator` writes it: the offline mirror's release is in it
    assert config["providers"] == {"aws": EMULATOR_AWS}

    # plan: imports counted as imports, nothing destroyed or replaced, every tag change listed and none a removal.
    planned = fastscale(tmp_path, env, "plan", "fastscale.yaml", "--json")
    shown = _plan_changes(planned)
    assert shown["destroy"] == [] and shown["replace"] == [], shown
    assert summary(planned)["imported"] == len(ADOPTED_TYPES)
    assert ADOPTED_TYPES.isdisjoint({a.split(".")[0] for a in shown["create"]}), shown["create"]
    changed_tags = summary(planned)["classification"]["summary"]["tags"]
    assert [t for t in changed_tags if t["to"] is None] == [], "the first deploy removes no live tag"
    assert {(t["address"].split(".")[0], t["tag"]) for t in changed_tags} >= {
        (kind, "fastscale:stack") for kind in ADOPTED_TYPES - {"aws_appautoscaling_policy"}}
    text = fastscale(tmp_path, env, "plan", "fastscale.yaml")
    assert text.returncode == 0, text.stdout + text.stderr
    assert "Tag changes on resources that exist:" in text.stdout and "-> (none)" not in text.stdout

    # deploy: the same endpoint, nothing replaced, every live tag still there beside fastscale's.
    deployed = fastscale(tmp_path, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    live = sm.describe_endpoint(EndpointName=NAME)
    assert (live["EndpointArn"], live["CreationTime"], live["EndpointConfigName"]) == (
        made["EndpointArn"], made["CreationTime"], NAME)
    assert [m["ModelName"] for m in sm.list_models()["Models"]] == [NAME]
    after = live_tags(url)
    assert lost(before, after) == []
    assert {tags["fastscale:stack"] for tags in after.values()} == {config["project"]}
    if after_deploy is not None:
        after_deploy()

    # scale: a higher ceiling and another target, applied in place to the same target and policy.
    config["endpoints"][0]["instances"]["max"] = 3
    config["endpoints"][0]["model"]["autoscaling"]["target_invocations"] = 120.0
    (tmp_path / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    scaled = fastscale(tmp_path, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert scaled.returncode == 0, scaled.stdout + scaled.stderr
    [target] = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    assert (target["ResourceId"], target["MinCapacity"], target["MaxCapacity"]) == (RESOURCE_ID, 1, 3)
    [policy] = aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]
    tracking = policy["TargetTrackingScalingPolicyConfiguration"]
    assert policy["PolicyName"] == "SageMakerEndpointInvocationScalingPolicy"
    assert (tracking["TargetValue"], tracking["PredefinedMetricSpecification"]["PredefinedMetricType"]) == (
        120.0, "SageMakerVariantInvocationsPerInstance")
    assert sm.describe_endpoint(EndpointName=NAME)["CreationTime"] == made["CreationTime"]
    assert lost(before, live_tags(url)) == []

    # destroy, and the proof that nothing of it is left.
    destroyed = fastscale(tmp_path, env, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert sm.list_endpoints()["Endpoints"] == [] and sm.list_models()["Models"] == []
    assert sm.list_endpoint_configs()["EndpointConfigs"] == []
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"] == []
    verified = fastscale(tmp_path, env, "verify-cleanup", "fastscale.yaml", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert summary(verified)["ok"] is True
