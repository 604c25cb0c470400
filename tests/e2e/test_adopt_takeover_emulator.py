"""Another team's resources on fastscale's emulator, each step a `fastscale` process with the real terraform
binary and hashicorp/aws provider: team A's endpoint (tagged by its stack) is not taken by `adopt` nor by a
`deploy` of a config that adopts it anyway, and the adopting stack's `destroy` leaves it as it was. (When team A
runs a model of another stack, that stack's `destroy` keeps the model: tests/e2e/test_cdktf_emulator.py.)
"""

from __future__ import annotations

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
