"""A live, auto-scaled single-model endpoint from its first deploy to its destroy, through `fastscale` in its own
process, the real terraform binary and hashicorp/aws against fastscale's emulator, which keeps AWS's rule where
moto has none: UpdateEndpoint fails on an instance-type change while the variant is registered for auto scaling, as
AWS's does (its calls recorded by tests/e2e/update_calls.py).

- the first deploy is interactive (its standard input a pseudo-terminal) and held at its prompt, having shown its
  plan; a destroy started only then must refuse, naming the first run (command and pid), and change nothing; the
  deploy, answered "y", applies its own plan, once. This is the case that once deleted a live endpoint: a deploy
  waiting at "Apply these changes?" applied the plan of a destroy started beside it;
- a new image keeps auto scaling registered through the update, and the new configuration starts at the
  live instance count (the endpoint was scaled out to 3), not at instances.initial (1);
- a tags-only change plans no endpoint update and no new configuration;
- an instance-type change deregisters the scalable target and its policy before the update and registers
  them again after it: the update passes the AWS rule;
- the other way round at the end: a destroy waits at its prompt, a deploy started meanwhile is refused.

Skips where the emulator lifecycle test skips (no terraform binary, no provider mirror).
"""

from __future__ import annotations

import json

import boto3
import pytest
import yaml
from botocore.exceptions import ClientError

from tests.e2e import update_calls
from tests.e2e.moto_project import (  # noqa: F401  (fixtures)
    IMAGE,
    REGION,
    AtThePrompt,
    emulator,
    fastscale,
    plan_files,
    project,
    pytestmark,
    sagemaker,
    summary,
)

ACCOUNT = "123456789012"  # moto's default account
TARGET = "endpoint/emu-chat/variant/AllTraffic"


def write(root, url: str, provider: str, *, tag: str = "1.0", instance_type: str = "ml.g4dn.xlarge",
          tags: dict[str, str] | None = None) -> None:
    config = {
        "project": "emu",
        "region": REGION,
        "endpoint_url": url,
        "providers": {"aws": f"= {provider}"},
        "tags": tags or {"team": "ml"},
        "endpoints": [{
            "name": "chat",
            "instance_type": instance_type,
            "instances": {"initial": 1, "min": 1, "max": 4},
            "model": {"image": IMAGE.format(tag=tag), "model_data": "s3://emu-models/small/", "model_size_gb": 2,
                      "autoscaling": {"target_concurrency": 4}},
        }],
    }
    (root / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def scaled_out_to(count: int) -> None:
    """What auto scaling does to the live endpoint: its variant now runs ``count`` instances."""
    from moto.sagemaker.models import sagemaker_backends

    [variant] = sagemaker_backends[ACCOUNT][REGION].endpoints["emu-chat"].production_variants
    variant["CurrentInstanceCount"] = variant["DesiredInstanceCount"] = count


def registered(url: str) -> list[str]:
    api = boto3.client("application-autoscaling", region_name=REGION, endpoint_url=url,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    return [t["ResourceId"] for t in api.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]]


def by_address(plan: dict, type_: str) -> list[dict]:
    return [c for c in plan["classification"]["resources"] if c["type"] == type_]


def test_a_live_endpoint_is_created_changed_and_destroyed_while_a_second_run_is_refused(project, emulator):  # noqa: F811
    root, _, provider = project
    sm = sagemaker(emulator)
    write(root, emulator, provider)

    # A deploy shows its plan and waits; a destroy started meanwhile must not run, nor touch its plan.
    deploy = AtThePrompt(project, "deploy", "fastscale.yaml")
    deploy.wait_for("Apply these changes?")
    [deploy_plan] = plan_files(root)
    destroy = fastscale(project, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert destroy.returncode == 1, destroy.stdout + destroy.stderr
    refusal = json.loads(destroy.stdout)
    assert f"in use by fastscale deploy (pid {deploy.proc.pid} on " in refusal["error"]
    assert refusal["locked_by"]["command"] == "deploy" and "cleanup" not in refusal
    assert plan_files(root) == [deploy_plan]
    assert sm.list_endpoints()["Endpoints"] == []
    assert deploy.answer("y\n") == 0, deploy.output()
    assert "Plan: " in deploy.output() and "checks match the config" in deploy.output()
    assert sm.describe_endpoint(EndpointName="emu-chat")["EndpointStatus"] == "InService"
    assert len(sm.list_endpoint_configs()["EndpointConfigs"]) == 1 and len(sm.list_models()["Models"]) == 1
    assert plan_files(root) == []
    assert registered(emulator) == [TARGET]

    # The emulator refuses what AWS refuses: another instance type while the variant is registered.
    config = sm.describe_endpoint_config(EndpointConfigName=sm.describe_endpoint(EndpointName="emu-chat")["EndpointConfigName"])
    variant = {**config["ProductionVariants"][0], "InstanceType": "ml.g4dn.2xlarge"}
    sm.create_endpoint_config(EndpointConfigName="probe", ProductionVariants=[
        {k: variant[k] for k in ("VariantName", "ModelName", "InitialInstanceCount", "InstanceType")}])
    with pytest.raises(ClientError, match="target for auto scaling"):
        sm.update_endpoint(EndpointName="emu-chat", EndpointConfigName="probe")
    sm.delete_endpoint_config(EndpointConfigName="probe")
    update_calls.CALLS.clear()

    # A new image, with the endpoint scaled out to 3: auto scaling stays registered, the cut-over starts at 3.
    # (Each deploy's --json summary holds the classification `fastscale plan` shows.)
    scaled_out_to(3)
    write(root, emulator, provider, tag="2.0")
    updated = fastscale(project, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert updated.returncode == 0, updated.stderr
    plan = summary(updated)
    [endpoint] = by_address(plan, "aws_sagemaker_endpoint")
    assert endpoint["class"] == "blue_green"
    assert endpoint["notes"] == ["cut-over starts at 3 instance(s) (live; instances.initial is 1)"]
    assert by_address(plan, "aws_appautoscaling_target") == []  # not touched by an image change
    assert plan["cutover"]["emu-chat"] == {"live": 3, "initial": 1, "max": 4, "starts_at": 3}
    [call] = update_calls.CALLS
    assert call["ok"] and call["registered"] == [TARGET]
    live = sm.describe_endpoint_config(EndpointConfigName=sm.describe_endpoint(EndpointName="emu-chat")["EndpointConfigName"])
    assert live["ProductionVariants"][0]["InitialInstanceCount"] == 3

    # Tags only: in place, no new configuration, no endpoint update.
    write(root, emulator, provider, tag="2.0", tags={"team": "ml", "cost-center": "42"})
    tagged = fastscale(project, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert tagged.returncode == 0, tagged.stderr
    plan = summary(tagged)
    assert plan["classification"]["summary"]["rollouts"] == []
    kinds = {c["type"]: c["class"] for c in plan["classification"]["resources"]}
    assert kinds["aws_sagemaker_endpoint_configuration"] == "in_place" and kinds["aws_sagemaker_endpoint"] == "in_place"
    assert len(update_calls.CALLS) == 1  # no UpdateEndpoint since the image change

    # Another instance type: deregistered before the update, registered again after it.
    update_calls.CALLS.clear()
    write(root, emulator, provider, tag="2.0", tags={"team": "ml", "cost-center": "42"}, instance_type="ml.g4dn.2xlarge")
    moved = fastscale(project, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert moved.returncode == 0, moved.stderr
    plan = summary(moved)
    [target] = by_address(plan, "aws_appautoscaling_target")
    assert target["class"] == "replace" and "deregistered before the endpoint's update" in target["reason"]
    [endpoint] = by_address(plan, "aws_sagemaker_endpoint")
    assert any(n.startswith("auto scaling paused") for n in endpoint["notes"])
    [call] = update_calls.CALLS
    assert call["ok"] and call["registered"] == [] and call["new"] == {"AllTraffic": "ml.g4dn.2xlarge"}
    assert registered(emulator) == [TARGET]
    policies = boto3.client("application-autoscaling", region_name=REGION, endpoint_url=emulator,
                            aws_access_key_id="testing", aws_secret_access_key="testing").describe_scaling_policies(
        ServiceNamespace="sagemaker")["ScalingPolicies"]
    assert [p["PolicyName"] for p in policies] == ["emu-chat-target-tracking"]
    assert plan["verification"]["ok"] is True

    # The other way round: a destroy waits at its prompt, a deploy started meanwhile is refused.
    destroy = AtThePrompt(project, "destroy", "fastscale.yaml")
    destroy.wait_for("Destroy these resources?")
    deploy = fastscale(project, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert deploy.returncode == 1, deploy.stdout + deploy.stderr
    assert f"in use by fastscale destroy (pid {destroy.proc.pid} on " in json.loads(deploy.stdout)["error"]
    assert sm.describe_endpoint(EndpointName="emu-chat")["EndpointStatus"] == "InService"
    assert destroy.answer("y\n") == 0, destroy.output()
    assert sm.list_endpoints()["Endpoints"] == [] and sm.list_models()["Models"] == []
    assert plan_files(root) == []
    assert (root / "cdktf.out" / "stacks" / "emu" / "fastscale.lock").read_text() == ""
