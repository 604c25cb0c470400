"""`fastscale adopt` of every shape of endpoint the SageMaker Python SDK and the console leave, end to end on
fastscale's emulator, each step a `fastscale` process with the real terraform binary and hashicorp/aws provider.

One account holds an endpoint of each shape (boto3 calls shaped as each client sends them); a team adopts them
into one stack: `adopt` per endpoint (its own file), the files joined into one config of one project, then for
all of them at once `plan` (nothing destroyed or replaced, the adopted resources counted as imports, no live tag
removed) → `deploy` (the same endpoints; every live tag still on every resource, fastscale's added) → scale (the
scaling change applied in place, and nothing else planned for what was adopted) → `status` → `destroy` →
`verify-cleanup`. Every check is made for each endpoint.

The shapes, as read in the SDK's source (aws/sagemaker-python-sdk):

- **SDK 2.x** (`Model.deploy()`, v2.257): `Session.create_model` sends `PrimaryContainer` as `container_def()`
  builds it (`Image`, `Environment` always, `ModelDataUrl` for an S3 URI); `production_variant()` sends
  `InitialVariantWeight: 1` with the model's name, `InitialInstanceCount`, `InstanceType`, no `RoutingConfig`;
  `endpoint_from_production_variants` gives the deploy's `tags` to the configuration and the endpoint
  (`CreateEndpoint` always carries a `Tags` list, empty or not), `create_model` to the model. Deployed once with
  tags, once without any (nor on its scalable target).
- **SDK 3.x** (`ModelBuilder.deploy()`, sagemaker-serve 1.x with sagemaker-core 2.x): the same calls through
  `session_helper`, an `Environment` that is `{}` when the model sets none, and the
  `sagemaker.amazonaws.com/model-source` tag the SDK's resource reuse looks endpoints up by.
- **Console style**: a variant created without `InitialVariantWeight` (AWS fills 1.0), a model without
  `Environment`, tags added afterwards (`AddTags`, Application Auto Scaling `TagResource`) rather than at
  creation.

Auto scaling is what AWS's guide (endpoint-auto-scaling-add-code) and the console set up: a scalable target and
a target-tracking policy on `SageMakerVariantInvocationsPerInstance` with target 70 (with or without
cooldowns). The SDK has no call for it.

One emulator for the module, starting from an empty account: the endpoints live side by side as in one account,
and the joined stack's `destroy` must leave none of them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from fastscale.infra.base.provider_versions import EMULATOR_AWS
from tests.e2e.emulator_support import MARKS, aws, fastscale, fresh_emulator, project_env, state_resources, summary

pytestmark = MARKS

ROLE = "arn:aws:iam::123456789012:role/sagemaker-sdk"
IMAGE = ("763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:"
         "2.1.1-tgi1.4.0-gpu-py310-cu121-ubuntu20.04")
POLICY = "SageMakerEndpointInvocationScalingPolicy"
DIMENSION = "sagemaker:variant:DesiredInstanceCount"
ADOPTED_TYPES = {"aws_sagemaker_model", "aws_sagemaker_endpoint_configuration", "aws_sagemaker_endpoint",
                 "aws_appautoscaling_target", "aws_appautoscaling_policy"}
COST = {"Key": "cost-center", "Value": "cc-4711"}
MODEL_DATA = "s3://sdk-bucket/llm/model.tar.gz"
SOURCE = {"Key": "sagemaker.amazonaws.com/model-source", "Value": MODEL_DATA}
ENV = {"HF_MODEL_ID": "/opt/ml/model", "SM_NUM_GPUS": "1"}


def resource_id(name: str) -> str:
    return f"endpoint/{name}/variant/AllTraffic"


@dataclass(frozen=True)
class Shape:
    """An endpoint as one client leaves it: what it sends, and so what `adopt` must find."""

    name: str
    model_container: dict
    variant: dict
    tags_at_create: list[dict[str, str]] = field(default_factory=list)
    tags_added_after: list[dict[str, str]] = field(default_factory=list)
    target_tags: dict[str, str] = field(default_factory=dict)
    target_tags_after: dict[str, str] = field(default_factory=dict)
    cooldowns: dict[str, int] = field(default_factory=dict)
    max_capacity: int = 2

    @property
    def resource_id(self) -> str:
        return resource_id(self.name)


def _variant(name: str, **weight: int) -> dict:
    return {"VariantName": "AllTraffic", "ModelName": name, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge",
            **weight}


def _names(shape: str) -> str:
    return f"hf-llm-{shape}-2026-11-30-09-41-07-512"


SHAPES = {  # the key is the endpoint's name in the joined config
    "untagged": Shape(
        "huggingface-pytorch-tgi-inference-2024-01-01-12-00-00-000",
        {"Image": IMAGE, "ModelDataUrl": "s3://sdk-bucket/model.tar.gz",
         "Environment": {**ENV, "MAX_INPUT_LENGTH": "2048"}},
        _variant("huggingface-pytorch-tgi-inference-2024-01-01-12-00-00-000", InitialVariantWeight=1),
        cooldowns={"ScaleInCooldown": 600, "ScaleOutCooldown": 300}, max_capacity=3),
    "sdk2": Shape(_names("sdk2"), {"Image": IMAGE, "Environment": ENV, "ModelDataUrl": MODEL_DATA},
                  _variant(_names("sdk2"), InitialVariantWeight=1), tags_at_create=[COST],
                  target_tags={"cost-center": "cc-4711"}, cooldowns={"ScaleInCooldown": 600, "ScaleOutCooldown": 300}),
    "sdk3": Shape(_names("sdk3"), {"Image": IMAGE, "Environment": {}, "ModelDataUrl": MODEL_DATA},
                  _variant(_names("sdk3"), InitialVariantWeight=1), tags_at_create=[SOURCE, COST],
                  target_tags={"cost-center": "cc-4711", "team": "search"}),
    "console": Shape(_names("console"), {"Image": IMAGE, "ModelDataUrl": MODEL_DATA}, _variant(_names("console")),
                     tags_added_after=[COST, {"Key": "owner", "Value": "ana@example.com"}],
                     target_tags_after={"cost-center": "cc-4711"},
                     cooldowns={"ScaleInCooldown": 300, "ScaleOutCooldown": 300}),
}


def create(url: str, shape: Shape) -> None:
    """The endpoint and its auto scaling, each call shaped as its client sends it."""
    sm, aas = aws(url, "sagemaker"), aws(url, "application-autoscaling")
    tags = {"Tags": shape.tags_at_create} if shape.tags_at_create else {}
    sm.create_model(ModelName=shape.name, ExecutionRoleArn=ROLE, PrimaryContainer=shape.model_container, **tags)
    sm.create_endpoint_config(EndpointConfigName=shape.name, ProductionVariants=[shape.variant], **tags)
    sm.create_endpoint(EndpointName=shape.name, EndpointConfigName=shape.name, Tags=list(shape.tags_at_create))
    if shape.tags_added_after:
        for arn in _sagemaker_arns(sm, shape.name):
            sm.add_tags(ResourceArn=arn, Tags=shape.tags_added_after)
    registered = aas.register_scalable_target(
        ServiceNamespace="sagemaker", ResourceId=shape.resource_id, ScalableDimension=DIMENSION, MinCapacity=1,
        MaxCapacity=shape.max_capacity, **({"Tags": shape.target_tags} if shape.target_tags else {}))
    if shape.target_tags_after:
        aas.tag_resource(ResourceARN=registered["ScalableTargetARN"], Tags=shape.target_tags_after)
    aas.put_scaling_policy(
        PolicyName=POLICY, ServiceNamespace="sagemaker", ResourceId=shape.resource_id,
        ScalableDimension=DIMENSION, PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 70.0, **shape.cooldowns,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}})


def _sagemaker_arns(sm, name: str) -> list[str]:
    return [sm.describe_endpoint(EndpointName=name)["EndpointArn"],
            sm.describe_endpoint_config(EndpointConfigName=name)["EndpointConfigArn"],
            sm.describe_model(ModelName=name)["ModelArn"]]


def _target(aas, shape: Shape) -> dict:
    [target] = aas.describe_scalable_targets(ServiceNamespace="sagemaker", ResourceIds=[shape.resource_id])[
        "ScalableTargets"]
    return target


def live_tags(url: str, shape: Shape) -> dict[str, dict[str, str]]:
    """Every tag of the endpoint, its configuration, its model and its scalable target."""
    sm, aas = aws(url, "sagemaker"), aws(url, "application-autoscaling")
    out = {arn.split(":")[5].split("/")[0]: {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}
           for arn in _sagemaker_arns(sm, shape.name)}
    out["scalable-target"] = aas.list_tags_for_resource(ResourceARN=_target(aas, shape)["ScalableTargetARN"])["Tags"]
    return out


def lost(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]]) -> list[str]:
    """The tags of ``before`` that ``after`` no longer has (or has with another value)."""
    return [f"{kind} lost {key}={value}" for kind, tags in before.items() for key, value in tags.items()
            if after[kind].get(key) != value]


def _tags(pairs: list[dict[str, str]]) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in pairs}


def test_each_shape_is_adopted_into_one_stack_deployed_without_replacement_or_lost_tag_scaled_and_destroyed(tmp_path):
    with fresh_emulator() as url:
        for shape in SHAPES.values():
            create(url, shape)
        # what each client left, read back: the tags each shape is known by
        for shape in SHAPES.values():
            tags = live_tags(url, shape)
            expected = _tags(shape.tags_at_create) | _tags(shape.tags_added_after)
            assert [tags[kind] for kind in ("endpoint", "endpoint-config", "model")] == [expected] * 3, shape.name
            assert tags["scalable-target"] == shape.target_tags | shape.target_tags_after, shape.name
        adopt_deploy_scale_destroy(tmp_path, url, SHAPES)


def adopt_deploy_scale_destroy(tmp_path: Path, url: str, shapes: dict[str, Shape],
                               after_deploy: Callable[[], None] | None = None) -> None:
    """The whole take-over of the endpoints of ``shapes`` (each with its scalable target and invocations policy,
    made on the emulator at ``url``) into one stack; ``after_deploy`` runs once the first deploy is done."""
    env = project_env(tmp_path)
    sm, aas = aws(url, "sagemaker"), aws(url, "application-autoscaling")
    made = {key: sm.describe_endpoint(EndpointName=shape.name) for key, shape in shapes.items()}
    models_made = {key: sm.describe_model(ModelName=shape.name)["CreationTime"] for key, shape in shapes.items()}
    before = {key: live_tags(url, shape) for key, shape in shapes.items()}

    # adopt, one endpoint at a time: the config that reproduces it, AWS's defaults and every live tag kept (per
    # resource), the invocations policy in its unit, and the import blocks. The first with adopt's defaults (the
    # file fastscale.yaml, a project named after the endpoint), the others into that project, each its own file.
    endpoints = []
    top: dict | None = None
    for key, shape in shapes.items():
        out = "fastscale.yaml" if top is None else f"{key}.yaml"
        into = [] if top is None else ["--project", top["project"], "--out", out]
        adopted = fastscale(tmp_path, env, "adopt", shape.name, "--region", "us-east-1", "--endpoint-url", url,
                            *into, "--json")
        assert adopted.returncode == 0, adopted.stdout + adopted.stderr
        report = summary(adopted)
        assert report["written"] == out
        config = yaml.safe_load((tmp_path / out).read_text())
        [ep] = config.pop("endpoints")
        tags = ep["adopted"].pop("tags", {})
        assert ep["adopted"] == {"endpoint": shape.name, "endpoint_config": shape.name, "model": shape.name,
                                 "model_data_url": True, "scalable_target": True, "scaling_policy": POLICY}, key
        kept = before[key]
        assert tags == {kind: kept[live] for kind, live in (
            ("endpoint", "endpoint"), ("endpoint_config", "endpoint-config"), ("model", "model"),
            ("scalable_target", "scalable-target")) if kept[live]}, key
        ep["adopted"] |= {"tags": tags} if tags else {}
        assert ep["routing"] is None, key  # AWS's default (RANDOM, no RoutingConfig), not fastscale's
        assert ep["instance_type"] == "ml.g4dn.xlarge", key
        assert ep["instances"] == {"initial": 1, "min": 1, "max": shape.max_capacity}, key
        assert (ep["model"]["image"], ep["model"]["model_data"]) == (IMAGE, shape.model_container["ModelDataUrl"]), key
        assert ep["model"]["autoscaling"] == {  # a cooldown the policy leaves unset: Application Auto Scaling's 300 s
            "enabled": True, "metric": "invocations", "target_invocations": 70.0,
            **{f"scale_{way}_cooldown": shape.cooldowns.get(f"Scale{way.capitalize()}Cooldown", 300)
               for way in ("in", "out")}}, key
        imports = {block["to"].split(".")[0]: block["id"] for block in report["imports"]}
        assert imports == {
            "aws_sagemaker_model": shape.name, "aws_sagemaker_endpoint_configuration": shape.name,
            "aws_sagemaker_endpoint": shape.name,
            "aws_appautoscaling_target": f"sagemaker/{shape.resource_id}/{DIMENSION}",
            "aws_appautoscaling_policy": f"sagemaker/{shape.resource_id}/{DIMENSION}/{POLICY}",
        }, key
        # the emulator's provider range, as `init --emulator` writes it: the offline mirror's release is in it
        assert config["providers"] == {"aws": EMULATOR_AWS}
        assert top is None or config == top, "every adopted file has the same project, region and emulator"
        top = config
        endpoints.append({**ep, "name": key})
    # A second adopt never overwrites the config.
    again = fastscale(tmp_path, env, "adopt", next(iter(shapes.values())).name, "--region", "us-east-1",
                      "--endpoint-url", url)
    assert again.returncode == 2 and "never overwrites" in again.stderr
    # One stack for all of them, as a team joins what it adopted.
    assert top is not None
    project = top["project"]
    config = {**top, "endpoints": endpoints}
    path = tmp_path / "stack.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))

    # plan: imports counted as imports, nothing destroyed or replaced, every tag change listed and none a removal.
    planned = fastscale(tmp_path, env, "plan", "stack.yaml", "--json")
    stack = json.loads((tmp_path / "cdktf.out" / "stacks" / project / "cdk.tf.json").read_text())
    owner = {block["to"]: _owner(block["id"], shapes) for block in stack["import"]}
    assert sorted((key, to.split(".")[0]) for to, key in owner.items()) == sorted(
        (key, kind) for key in shapes for kind in ADOPTED_TYPES)
    shown = _plan_changes(planned)
    assert shown["destroy"] == [] and shown["replace"] == [], shown
    assert summary(planned)["imported"] == len(ADOPTED_TYPES) * len(shapes)  # imports, not resources to add
    assert ADOPTED_TYPES.isdisjoint({a.split(".")[0] for a in shown["create"]}), shown["create"]
    changed_tags = summary(planned)["classification"]["summary"]["tags"]
    assert [t for t in changed_tags if t["to"] is None] == [], "the first deploy removes no live tag"
    stack_tags = {(owner.get(t["address"]), t["address"].split(".")[0]) for t in changed_tags if t["tag"] == "fastscale:stack"}
    assert stack_tags >= {(key, kind) for key in shapes for kind in ADOPTED_TYPES - {"aws_appautoscaling_policy"}}

    # deploy, as a person runs it (the plan shown as `plan` shows it, then applied and verified: exit 0): the same
    # endpoints, nothing replaced, every live tag still there beside fastscale's.
    deployed = fastscale(tmp_path, env, "deploy", "stack.yaml", "--auto-approve")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    assert "Tag changes on resources that exist:" in deployed.stdout and "-> (none)" not in deployed.stdout
    names = sorted(shape.name for shape in shapes.values())
    assert sorted(m["ModelName"] for m in sm.list_models()["Models"]) == names
    assert sorted(c["EndpointConfigName"] for c in sm.list_endpoint_configs()["EndpointConfigs"]) == names
    for key, shape in shapes.items():
        live = sm.describe_endpoint(EndpointName=shape.name)
        assert (live["EndpointArn"], live["CreationTime"], live["EndpointConfigName"]) == (
            made[key]["EndpointArn"], made[key]["CreationTime"], shape.name), key
        assert sm.describe_model(ModelName=shape.name)["CreationTime"] == models_made[key], key
        assert "RoutingConfig" not in sm.describe_endpoint_config(EndpointConfigName=shape.name)["ProductionVariants"][0]
        after = live_tags(url, shape)
        assert lost(before[key], after) == [], key
        assert {tags["fastscale:stack"] for tags in after.values()} == {project}, key
        assert after["endpoint"]["fastscale:endpoint"] == shape.name, key
        [policy] = aas.describe_scaling_policies(ServiceNamespace="sagemaker", ResourceId=shape.resource_id)[
            "ScalingPolicies"]
        assert policy["PolicyName"] == POLICY, key
    assert {r["type"] for r in state_resources(tmp_path, project)} >= ADOPTED_TYPES
    if after_deploy is not None:
        after_deploy()

    # scale: a higher ceiling and another target, applied in place to the same target and policy. Once imported,
    # the adopted resources plan nothing else: the only changes are those two, one update of each target and policy.
    for ep in config["endpoints"]:
        ep["instances"]["max"] += 1
        ep["model"]["autoscaling"]["target_invocations"] = 120.0
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    scaled = fastscale(tmp_path, env, "deploy", "stack.yaml", "--auto-approve", "--json")
    assert scaled.returncode == 0, scaled.stdout + scaled.stderr
    changed = _plan_changes(scaled)
    assert changed["create"] == changed["replace"] == changed["destroy"] == [], changed
    assert sorted(a.split(".")[0] for a in changed["update"]) == sorted(
        ["aws_appautoscaling_policy", "aws_appautoscaling_target"] * len(shapes)), changed["update"]
    for key, shape in shapes.items():
        target = _target(aas, shape)
        assert (target["MinCapacity"], target["MaxCapacity"]) == (1, shape.max_capacity + 1), key
        [policy] = aas.describe_scaling_policies(ServiceNamespace="sagemaker", ResourceId=shape.resource_id)[
            "ScalingPolicies"]
        tracking = policy["TargetTrackingScalingPolicyConfiguration"]
        assert policy["PolicyName"] == POLICY, key
        assert (tracking["TargetValue"], tracking["PredefinedMetricSpecification"]["PredefinedMetricType"]) == (
            120.0, "SageMakerVariantInvocationsPerInstance"), key
        assert sm.describe_endpoint(EndpointName=shape.name)["CreationTime"] == made[key]["CreationTime"], key
        assert lost(before[key], live_tags(url, shape)) == [], key
    status = fastscale(tmp_path, env, "status", "stack.yaml", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    assert summary(status)["ok"] is True

    # destroy, and the proof that nothing of them is left.
    destroyed = fastscale(tmp_path, env, "destroy", "stack.yaml", "--auto-approve", "--json")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert sm.list_endpoints()["Endpoints"] == [] and sm.list_models()["Models"] == []
    assert sm.list_endpoint_configs()["EndpointConfigs"] == []
    assert aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"] == []
    assert aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"] == []
    verified = fastscale(tmp_path, env, "verify-cleanup", "stack.yaml", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert summary(verified)["ok"] is True


def _owner(import_id: str, shapes: dict[str, Shape]) -> str:
    """The key of the shape whose endpoint an import ID names (an endpoint's name, or its scalable target's)."""
    [key] = [key for key, shape in shapes.items() if import_id == shape.name or f"/{shape.resource_id}/" in import_id]
    return key


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
