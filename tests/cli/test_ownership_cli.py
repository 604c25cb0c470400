"""Ownership through the CLI, with the real terraform binary on terraform_data stacks whose real plans are given
their SageMaker types (tests/rollout_support.py says what is real), and moto for AWS:

- `plan` shows every change of an ownership tag (`ownership: fastscale:stack a -> b on <address>`, and in
  --json); `plan` and `deploy` refuse a re-tag of another stack's resource (exit 2) unless --take-over-from
  names that stack;
- `destroy` keeps out of Terraform's destroy what another stack's tag claims, and the configurations, models
  and roles a live endpoint outside the destroy uses, with what they need; a later destroy deletes them once
  nothing uses them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from fastscale.infra.model.naming import all_endpoint_names
from tests.aws.factories import MOTO_INSTANCE_TYPE, deploy_single_model, single_model_config
from tests.cli.support import STATE_FILE, FixtureSynth, needs_binary, run, state_addresses
from tests.rollout_support import as_sagemaker

pytestmark = needs_binary

#: terraform_data resource name -> the type it stands for.
TYPES = {"role": "aws_iam_role", "policy": "aws_iam_role_policy", "model": "aws_sagemaker_model",
         "config": "aws_sagemaker_endpoint_configuration", "endpoint": "aws_sagemaker_endpoint",
         "alarm": "aws_cloudwatch_metric_alarm"}
NAMES = all_endpoint_names(single_model_config())[0]
CONFIG_NAME = NAMES.endpoint_config_prefix + "20260101000000000000000001"  # as deploy_single_model names it
OURS = {"fastscale:stack": "demo", "managed-by": "fastscale"}


def stack(endpoint_tags: dict[str, str] | None = None) -> dict[str, Any]:
    """The single-model stack of single_model_config() as terraform_data: role (with its inline policy), model,
    configuration, endpoint, an alarm; each depends on what it runs on, as in the real stack."""
    def data(value: dict[str, Any], *after: str) -> dict[str, Any]:
        return {"input": value, **({"depends_on": [f"terraform_data.{a}" for a in after]} if after else {})}

    return {"resource": {"terraform_data": {
        "role": data({"name": NAMES.execution_role, "tags": {**OURS, "fastscale:region": "us-east-1"}}),
        "policy": data({"name": "inline", "role": NAMES.execution_role}, "role"),
        "model": data({"name": NAMES.model, "tags": OURS}, "role"),
        "config": data({"name": CONFIG_NAME, "tags": OURS}, "model", "role"),
        "endpoint": data({"name": NAMES.endpoint, "tags": endpoint_tags or OURS}, "config"),
        "alarm": data({"alarm_name": NAMES.alarms["5xx-errors"], "tags": OURS}),
    }}}


@pytest.fixture
def sagemaker_plan(runtime):
    real = runtime.runtime.plan_document
    runtime.use(plan_document=lambda runner, plan_file: as_sagemaker(real(runner, plan_file), TYPES))


def deployed(runtime, aws, stack_doc: dict[str, Any]) -> None:
    """``stack_doc`` applied by Terraform, and the stack's resources live in moto."""
    deploy_single_model(aws)
    runtime.use(synthesize=FixtureSynth(stack_doc))
    first = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert first.exit_code == 0, first.output


def state_tags(project, name: str) -> dict[str, str]:
    doc = json.loads((project / STATE_FILE).read_text())
    [found] = [r for r in doc["resources"] if r["name"] == name]
    return found["instances"][0]["attributes"]["input"]["value"]["tags"]


def team_a_endpoint_on(aws, model: str) -> None:
    """Another team's endpoint, on a configuration of its own that runs ``model``."""
    sm = aws["sagemaker"]
    sm.create_endpoint_config(EndpointConfigName="team-a-config", ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": model, "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}],
        Tags=[{"Key": "fastscale:stack", "Value": "team-a"}])
    sm.create_endpoint(EndpointName="team-a-endpoint", EndpointConfigName="team-a-config",
                       Tags=[{"Key": "fastscale:stack", "Value": "team-a"}])


# --------------------------------------------------------------------------------------------- plan and deploy


def test_a_re_tag_of_another_stacks_endpoint_is_shown_and_refused_unless_handed_over(project, runtime, aws, sagemaker_plan):
    deployed(runtime, aws, stack({"fastscale:stack": "team-a", "managed-by": "fastscale"}))
    runtime.use(synthesize=FixtureSynth(stack()))  # the config now tags it for this stack
    line = "ownership: fastscale:stack team-a -> demo on terraform_data.endpoint"

    plan = run("plan", "fastscale.yaml")
    assert plan.exit_code == 2, plan.output
    assert line in plan.stdout
    assert "belong to stack team-a" in plan.stderr and "--take-over-from team-a" in plan.stderr

    as_json = json.loads(run("plan", "fastscale.yaml", "--json").stdout)
    assert as_json["exit_code"] == 2
    assert as_json["classification"]["summary"]["ownership"] == [
        {"address": "terraform_data.endpoint", "tag": "fastscale:stack", "from": "team-a", "to": "demo"}]
    assert as_json["owned_by_another_stack"] == [{"address": "terraform_data.endpoint", "name": "demo-chat", "stack": "team-a"}]

    handed = run("plan", "fastscale.yaml", "--take-over-from", "team-a")
    assert handed.exit_code == 0, handed.output
    assert line in handed.stdout
    assert run("plan", "fastscale.yaml", "--take-over-from", "team-c").exit_code == 2  # only the stack named

    refused = run("deploy", "fastscale.yaml", "--auto-approve")
    assert refused.exit_code == 2 and "Nothing was applied" in refused.stderr
    assert state_tags(project, "endpoint")["fastscale:stack"] == "team-a", "nothing may be applied"

    applied = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait", "--take-over-from", "team-a")
    assert applied.exit_code == 0, applied.output
    assert state_tags(project, "endpoint")["fastscale:stack"] == "demo"


def test_a_take_over_flag_is_a_stack_name(project, synth):
    bad = run("plan", "fastscale.yaml", "--take-over-from", "a b")
    assert bad.exit_code == 2 and "is not a stack name" in bad.output


# --------------------------------------------------------------------------------------------- destroy


def test_destroy_keeps_a_model_another_stacks_endpoint_runs_and_what_it_needs(project, runtime, aws, sagemaker_plan):
    deployed(runtime, aws, stack())
    team_a_endpoint_on(aws, NAMES.model)

    result = run("destroy", "fastscale.yaml", "--auto-approve", "--json")
    summary = json.loads(result.stdout)
    kept = {k["address"]: k["reason"] for k in summary["kept"]}
    assert kept == {
        "terraform_data.model": "in use by endpoint team-a-endpoint",
        "terraform_data.role": "in use by endpoint team-a-endpoint",  # the model runs as it
        "terraform_data.policy": "needed by terraform_data.role, which is kept",
    }
    assert state_addresses(project) == {"terraform_data.model", "terraform_data.role", "terraform_data.policy"}
    assert result.exit_code == 1  # what is kept is still the stack's: the proof lists it as left

    # What the destroy deleted is gone from AWS too (terraform_data stands in for it); once nothing else uses
    # them, the next destroy deletes the rest.
    aws["sagemaker"].delete_endpoint(EndpointName=NAMES.endpoint)
    aws["application-autoscaling"].deregister_scalable_target(
        ServiceNamespace="sagemaker", ResourceId=NAMES.resource_id, ScalableDimension="sagemaker:variant:DesiredInstanceCount")
    aws["sagemaker"].delete_endpoint(EndpointName="team-a-endpoint")
    again = run("destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert "kept" not in json.loads(again.stdout)
    assert state_addresses(project) == set()


def test_destroy_shows_what_it_keeps_before_asking(project, runtime, aws, sagemaker_plan):
    deployed(runtime, aws, stack())
    team_a_endpoint_on(aws, NAMES.model)
    runtime.use(is_interactive=lambda: True, confirm=lambda question: False)
    declined = run("destroy", "fastscale.yaml")
    assert declined.exit_code == 1
    assert "Kept out of the destroy (3)" in declined.stdout
    assert "terraform_data.model (demo-chat-" in declined.stdout and "in use by endpoint team-a-endpoint" in declined.stdout
    planned = [line.split()[-1] for line in declined.stdout.splitlines() if line.strip().startswith("- delete")]
    assert sorted(planned) == ["terraform_data.alarm", "terraform_data.config", "terraform_data.endpoint"]
    assert len(state_addresses(project)) == 6, "a declined destroy destroys nothing"


def test_destroy_keeps_an_endpoint_another_stack_took_over_with_everything_it_runs_on(project, runtime, aws, sagemaker_plan):
    deployed(runtime, aws, stack({"fastscale:stack": "team-b", "managed-by": "fastscale"}))
    summary = json.loads(run("destroy", "fastscale.yaml", "--auto-approve", "--json").stdout)
    kept = {k["address"]: k["reason"] for k in summary["kept"]}
    assert kept["terraform_data.endpoint"].startswith("tagged fastscale:stack=team-b: it belongs to stack team-b now")
    assert set(kept) == {f"terraform_data.{n}" for n in ("endpoint", "config", "model", "role", "policy")}
    assert state_addresses(project) == set(kept)  # only the alarm was destroyed


def test_destroy_keeps_every_configuration_model_and_role_when_their_users_cannot_be_read(project, runtime, aws, sagemaker_plan):
    deployed(runtime, aws, stack())
    sm = aws["sagemaker"]

    def refuse(**_kwargs):
        from botocore.exceptions import ClientError

        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "no sagemaker:ListEndpoints"}}, "ListEndpoints")

    sm.meta.events.register("before-call.sagemaker.ListEndpoints", refuse)
    try:
        summary = json.loads(run("destroy", "fastscale.yaml", "--auto-approve", "--json").stdout)
    finally:
        sm.meta.events.unregister("before-call.sagemaker.ListEndpoints", refuse)
    kept = {k["address"]: k["reason"] for k in summary["kept"]}
    assert set(kept) == {"terraform_data.model", "terraform_data.config", "terraform_data.role", "terraform_data.policy"}
    assert kept["terraform_data.model"].startswith("cannot tell whether a live endpoint or component uses it")
    assert state_addresses(project) == set(kept)
