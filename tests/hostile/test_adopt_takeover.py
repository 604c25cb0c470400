"""Hostile takeovers: a config (or a pull request changing it) that would take another team's resources, run
through the real CLI (`adopt`, `validate`, `plan`, `deploy`, `destroy`, `sweep`) against moto, with the real
terraform binary where a command gets that far. Each case ends in a refusal that names the resource, or in the
other stack's resources kept, and in every case nothing of the other stack is changed or deleted:

- another stack's endpoint (tagged `fastscale:stack=team-a`): adopt refuses, a config that adopts it anyway
  is refused by plan and deploy, and destroy and sweep of the adopting stack leave it alone;
- a model another endpoint also runs, and an endpoint configuration another endpoint also runs: adopt does
  not adopt them, a config that adopts them anyway is refused, and a destroy whose state holds such a model
  keeps it;
- overrides that move or re-own: `region`, a shadow variant's model (refused, nothing synthesized), and data
  capture to a bucket and key outside the config (a warning that says what it does).
"""

from __future__ import annotations

import json

import pytest
import yaml

from tests.aws.factories import REGION
from tests.aws.test_adopt import MODEL, NAME, ROLE, sdk_endpoint
from tests.cli.support import needs_binary, run, state_addresses
from tests.cli.test_ownership_cli import NAMES, deployed, stack, team_a_endpoint_on

TEAM_A = [{"Key": "fastscale:stack", "Value": "team-a"}, {"Key": "managed-by", "Value": "fastscale"}]


def snapshot(aws) -> dict:
    """Everything of the other team's that a takeover could change: names, configurations, tags."""
    sm = aws["sagemaker"]
    out = {}
    for ep in sm.list_endpoints()["Endpoints"]:
        desc = sm.describe_endpoint(EndpointName=ep["EndpointName"])
        out[ep["EndpointName"]] = (desc["EndpointConfigName"], desc["EndpointStatus"], sm.list_tags(ResourceArn=ep["EndpointArn"])["Tags"])
    for cfg in sm.list_endpoint_configs()["EndpointConfigs"]:
        out[cfg["EndpointConfigName"] + "/config"] = sm.list_tags(ResourceArn=cfg["EndpointConfigArn"])["Tags"]
    for model in sm.list_models()["Models"]:
        out[model["ModelName"] + "/model"] = sm.list_tags(ResourceArn=model["ModelArn"])["Tags"]
    return out


def team_a_owns_the_sdk_endpoint(aws) -> None:
    sm = aws["sagemaker"]
    sdk_endpoint(aws)
    for arn in (sm.describe_endpoint(EndpointName=NAME)["EndpointArn"],
                sm.describe_endpoint_config(EndpointConfigName=NAME)["EndpointConfigArn"],
                sm.describe_model(ModelName=MODEL)["ModelArn"]):
        sm.add_tags(ResourceArn=arn, Tags=TEAM_A)


def adopting(project_dir, **adopted) -> str:
    """fastscale.yaml (project demo) turned into a config adopting the SDK endpoint with ``adopted``."""
    data = yaml.safe_load((project_dir / "fastscale.yaml").read_text())
    data["endpoints"][0]["adopted"] = {"endpoint": NAME, **adopted}
    data["endpoints"][0]["execution_role_arn"] = ROLE  # as the SDK's endpoint runs
    (project_dir / "b.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return "b.yaml"


# --------------------------------------------------------------------------------------------- another stack's endpoint


def test_adopt_refuses_another_stacks_endpoint_naming_it_its_stack_and_the_hand_over(project, aws):
    team_a_owns_the_sdk_endpoint(aws)
    before = snapshot(aws)
    refused = run("adopt", NAME, "--region", REGION, "--project", "team-b", "--out", "b.yaml")
    assert refused.exit_code == 2
    assert f"endpoint {NAME} is tagged fastscale:stack=team-a: it belongs to stack team-a" in " ".join(refused.stderr.split())
    assert "--take-over-from team-a" in refused.stderr and "Traceback" not in refused.output
    assert not (project / "b.yaml").exists()
    as_json = json.loads(run("adopt", NAME, "--region", REGION, "--project", "team-b", "--out", "b.yaml", "--json").stdout)
    assert as_json["exit_code"] == 2 and as_json["written"] is None
    assert {(o["kind"], o["stack"]) for o in as_json["owned_by_another_stack"]} == {
        ("endpoint", "team-a"), ("endpoint configuration", "team-a"), ("model", "team-a")}
    assert snapshot(aws) == before


@needs_binary
def test_a_config_adopting_another_stacks_endpoint_is_refused_by_plan_and_deploy_and_left_by_destroy_and_sweep(
        project, aws, synth):
    team_a_owns_the_sdk_endpoint(aws)
    before = snapshot(aws)
    written = run("adopt", NAME, "--region", REGION, "--project", "demo", "--out", "b.yaml", "--take-over-from", "team-a")
    assert written.exit_code == 0, written.output
    assert "--take-over-from team-a" in (project / "b.yaml").read_text()  # the header says how to deploy it

    for command in (["plan", "b.yaml"], ["deploy", "b.yaml", "--auto-approve"]):
        result = run(*command)
        assert result.exit_code == 2, result.output
        flat = " ".join(result.stderr.split())
        assert f"endpoint {NAME} (endpoints[0].name) is tagged fastscale:stack=team-a" in flat
        assert "run with --take-over-from team-a" in flat and "Nothing was planned or applied" in flat
    assert not (project / "terraform.demo.us-east-1.tfstate").exists(), "Terraform never ran"
    # The flag hands over exactly what the named stack's tags claim: plan goes on to Terraform.
    handed = run("plan", "b.yaml", "--take-over-from", "team-a", "--json")
    assert handed.exit_code == 0, handed.output
    assert {(t["kind"], t["name"], t["from"]) for t in json.loads(handed.stdout)["take_over"]} >= {
        ("endpoint", NAME, "team-a"), ("model", MODEL, "team-a"), ("endpoint-config", NAME, "team-a")}
    assert run("plan", "b.yaml", "--take-over-from", "team-c").exit_code == 2

    # The adopting stack's teardown: nothing of team-a's is its own, so nothing of it is touched.
    destroyed = run("destroy", "b.yaml", "--auto-approve", "--json")
    summary = json.loads(destroyed.stdout)
    assert summary["exit_code"] == 0, destroyed.output
    assert {(x["kind"], x["name"]) for x in summary["cleanup"]["not_touched"]} >= {("endpoint", NAME), ("model", MODEL)}
    swept = run("sweep", "b.yaml", "--auto-approve")
    assert swept.exit_code == 0, swept.output
    assert snapshot(aws) == before


# --------------------------------------------------------------------------------------------- shared model and configuration


@needs_binary
def test_a_model_another_endpoint_runs_is_not_adopted_and_a_config_adopting_it_is_refused(project, aws, synth):
    sdk_endpoint(aws)
    sm = aws["sagemaker"]
    sm.create_endpoint_config(EndpointConfigName="team-a-config", ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": MODEL, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}])
    sm.create_endpoint(EndpointName="team-a-endpoint", EndpointConfigName="team-a-config")
    before = snapshot(aws)

    written = run("adopt", NAME, "--region", REGION, "--project", "demo", "--out", "adopted.yaml", "--json")
    assert written.exit_code == 0, written.output
    doc = json.loads(written.stdout)
    assert doc["config"]["endpoints"][0]["adopted"] == {"endpoint": NAME}
    assert any(f"model {MODEL} is also used by endpoint team-a-endpoint" in n["message"] for n in doc["notes"])

    refused = run("plan", adopting(project, endpoint_config=NAME, model=MODEL))
    assert refused.exit_code == 2, refused.output
    flat = " ".join(refused.stderr.split())
    assert f"adopted model {MODEL}" in flat and "is also used by endpoint team-a-endpoint" in flat
    assert "Remove `adopted.model` and `adopted.endpoint_config`" in flat
    assert snapshot(aws) == before


@needs_binary
def test_a_configuration_another_endpoint_runs_is_not_adopted_and_a_config_adopting_it_is_refused(project, aws, synth):
    sdk_endpoint(aws)
    aws["sagemaker"].create_endpoint(EndpointName="team-a-endpoint", EndpointConfigName=NAME)
    before = snapshot(aws)

    doc = json.loads(run("adopt", NAME, "--region", REGION, "--project", "demo", "--out", "adopted.yaml", "--json").stdout)
    assert doc["config"]["endpoints"][0]["adopted"] == {"endpoint": NAME}
    deploy = run("deploy", adopting(project, endpoint_config=NAME), "--auto-approve", "--json")
    assert deploy.exit_code == 2, deploy.output
    summary = json.loads(deploy.stdout)
    assert summary["shared"] == [{"kind": "endpoint-config", "name": NAME, "config_path": "endpoints[0].adopted.endpoint_config",
                                  "used_by": ["endpoint team-a-endpoint"]}]
    assert snapshot(aws) == before


@needs_binary
def test_a_destroy_whose_state_holds_a_model_another_stack_runs_keeps_it(project, runtime, aws, sagemaker_plan):
    deployed(runtime, aws, stack())
    team_a_endpoint_on(aws, NAMES.model)
    result = run("destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert {k["address"] for k in json.loads(result.stdout)["kept"]} == {
        "terraform_data.model", "terraform_data.role", "terraform_data.policy"}
    assert "terraform_data.model" in state_addresses(project)
    assert aws["sagemaker"].describe_endpoint(EndpointName="team-a-endpoint")["EndpointStatus"] == "InService"


# --------------------------------------------------------------------------------------------- overrides


@pytest.mark.parametrize(("type_", "overrides", "words"), [
    ("aws_sagemaker_endpoint", {"region": "eu-west-1"}, "the resource's region"),
    ("aws_sagemaker_endpoint_configuration", {"region": "eu-west-1"}, "the resource's region"),
    ("aws_sagemaker_model", {"region": "eu-west-1"}, "the resource's region"),
    ("aws_sagemaker_endpoint_configuration", {"shadow_production_variants": [
        {"variant_name": "shadow", "model_name": MODEL, "instance_type": "ml.g6.2xlarge", "initial_instance_count": 1}]},
     "shadow variant's model"),
])
def test_an_override_that_moves_or_re_owns_is_refused_before_anything_is_synthesized(project, synth, type_, overrides, words):
    data = yaml.safe_load((project / "fastscale.yaml").read_text())
    data["endpoints"][0]["overrides"] = {type_: overrides}
    (project / "moved.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    validated = run("validate", "moved.yaml", "--json")
    assert validated.exit_code == 2
    [finding] = [f for f in json.loads(validated.stdout)["files"][0]["findings"] if f["code"] == "FS103"]
    assert words in finding["message"]
    assert run("plan", "moved.yaml").exit_code == 2
    assert synth.calls == [], "nothing synthesized, planned or applied"


def test_data_capture_to_a_bucket_and_key_outside_the_config_is_a_warning_that_says_what_it_does(project):
    data = yaml.safe_load((project / "fastscale.yaml").read_text())
    ep = data["endpoints"][0]
    ep["execution_role_arn"] = "arn:aws:iam::123456789012:role/sagemaker"
    ep["overrides"] = {"aws_sagemaker_endpoint_configuration": {"data_capture_config": {
        "enable_capture": True, "initial_sampling_percentage": 100, "destination_s3_uri": "s3://collector/all",
        "kms_key_id": "arn:aws:kms:us-east-1:210987654321:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
        "capture_options": [{"capture_mode": "Input"}, {"capture_mode": "Output"}]}}}
    (project / "capture.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    result = run("validate", "capture.yaml", "--json")
    assert result.exit_code == 0, result.output
    found = {f["path"].rsplit(".", 1)[-1]: f for f in json.loads(result.stdout)["files"][0]["findings"] if f["code"] == "FS107"}
    assert set(found) == {"destination_s3_uri", "kms_key_id"}
    assert "copies the requests and responses sent to the endpoint" in found["destination_s3_uri"]["message"]
    assert "of account 210987654321 encrypts the captured requests and responses" in found["kms_key_id"]["message"]
