"""Another team's resources on fastscale's emulator, each step a `fastscale` process with the real terraform
binary and hashicorp/aws provider: team A's endpoint (tagged by its stack) is not taken by `adopt` nor by a
`deploy` of a config that adopts it anyway, and the adopting stack's `destroy` leaves it as it was; and when
team A runs a model of stack B, B's `destroy` deletes B's endpoint but keeps that model and the role it runs
as (a targeted destroy of the real provider's plan), and A's endpoint keeps serving.

One emulator for the module: two teams sharing one account.
"""

from __future__ import annotations

import json

import pytest
import yaml

from tests.e2e.emulator_support import FOUND, MARKS, aws, fastscale, fresh_emulator, project_env, summary

pytestmark = MARKS

TEAM_A = [{"Key": "fastscale:stack", "Value": "team-a"}, {"Key": "managed-by", "Value": "fastscale"}]
ROLE = "arn:aws:iam::123456789012:role/team-a"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/team-a:1.0"


@pytest.fixture(scope="module")
def emulator():
    with fresh_emulator() as url:
        yield url


def tags(sm, arn: str) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=arn)["Tags"]}


def team_a_endpoint(sm) -> dict:
    """Team A's endpoint, as its fastscale stack tagged it."""
    sm.create_model(ModelName="team-a-model", ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE}, Tags=TEAM_A)
    sm.create_endpoint_config(EndpointConfigName="team-a-config", Tags=TEAM_A, ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": "team-a-model", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}])
    return sm.create_endpoint(EndpointName="team-a-endpoint", EndpointConfigName="team-a-config", Tags=TEAM_A)


def test_another_teams_endpoint_is_not_adopted_nor_deployed_over_and_the_adopters_destroy_leaves_it(tmp_path, emulator):
    env = project_env(tmp_path)
    sm = aws(emulator, "sagemaker")
    endpoint = team_a_endpoint(sm)
    target = ["adopt", "team-a-endpoint", "--region", "us-east-1", "--endpoint-url", emulator, "--project", "demo",
              "--out", "b.yaml"]

    # adopt refuses it, naming its stack; nothing is written.
    refused = fastscale(tmp_path, env, *target)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "tagged fastscale:stack=team-a" in " ".join(refused.stderr.split())
    assert not (tmp_path / "b.yaml").exists()

    # A config that adopts it anyway (here written with a hand-over flag) is refused by deploy without it.
    assert fastscale(tmp_path, env, *target, "--take-over-from", "team-a").returncode == 0
    config = yaml.safe_load((tmp_path / "b.yaml").read_text())
    assert FOUND is not None
    config["providers"] = {"aws": f"= {FOUND[1]}"}  # the release the offline mirror holds
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    deploy = fastscale(tmp_path, env, "deploy", "b.yaml", "--auto-approve", "--json")
    assert deploy.returncode == 2, deploy.stdout + deploy.stderr
    assert {o["name"] for o in summary(deploy)["owned_by_another_stack"]} >= {"team-a-endpoint", "team-a-model"}

    # The adopting stack's destroy: Terraform runs, and nothing of team A's is deleted or re-tagged.
    destroyed = fastscale(tmp_path, env, "destroy", "b.yaml", "--auto-approve", "--json")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert summary(destroyed)["terraform"]["operation"] == "plan"  # planned, nothing to destroy
    live = sm.describe_endpoint(EndpointName="team-a-endpoint")
    assert (live["EndpointArn"], live["EndpointConfigName"], live["EndpointStatus"]) == (
        endpoint["EndpointArn"], "team-a-config", "InService")
    assert tags(sm, endpoint["EndpointArn"])["fastscale:stack"] == "team-a"
    assert sm.describe_model(ModelName="team-a-model")["ModelName"] == "team-a-model"


def test_a_model_another_team_runs_survives_the_destroy_of_the_stack_that_made_it(tmp_path, emulator):
    env = project_env(tmp_path)
    sm = aws(emulator, "sagemaker")
    assert fastscale(tmp_path, env, "init", "demo", "--emulator", emulator).returncode == 0
    demo = tmp_path / "demo"
    deployed = fastscale(demo, env, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    [b_model] = [m["ModelName"] for m in sm.list_models()["Models"] if m["ModelName"].startswith("demo-")]
    sm.create_endpoint_config(EndpointConfigName="team-a-config-2", Tags=TEAM_A, ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": b_model, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}])
    sm.create_endpoint(EndpointName="team-a-endpoint-2", EndpointConfigName="team-a-config-2", Tags=TEAM_A)

    destroyed = fastscale(demo, env, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    report = summary(destroyed)
    kept = {k["address"].split(".")[0]: k["reason"] for k in report["kept"]}
    assert kept["aws_sagemaker_model"] == "in use by endpoint team-a-endpoint-2"
    assert "aws_iam_role" in kept and "aws_iam_role_policy" in kept  # the role it runs as, with its permissions
    assert destroyed.returncode == 1  # what is kept is still stack B's, and the proof says it is left
    assert "demo-llm" not in {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    assert sm.describe_endpoint(EndpointName="team-a-endpoint-2")["EndpointStatus"] == "InService"
    assert sm.describe_model(ModelName=b_model)["ModelName"] == b_model
    state = json.loads((demo / "terraform.demo.us-east-1.tfstate").read_text())
    assert {r["type"] for r in state["resources"] if r["mode"] == "managed"} == {
        "aws_sagemaker_model", "aws_iam_role", "aws_iam_role_policy"}
