"""`plan` classifies a live stack's changes, `deploy` refuses downtime without --allow-downtime and follows
rollouts: against the real terraform binary, on terraform_data stacks whose real plans are given their
SageMaker types (tests/rollout_support.py says what is real); the rollout's SageMaker and CloudWatch
answers are stubbed (moto has neither inference components nor deployment states)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from botocore.stub import ANY

import fastscale.cli.plan_view as plan_view
from fastscale.infra.terraform.rollout import ChangeKind
from tests.aws.factories import deploy_single_model, stubbed
from tests.aws.rollout_stubs import endpoint_answer
from tests.cli.support import STATE_FILE, FixtureSynth, json_lines, needs_binary, run
from tests.cli.test_output_width import assert_fits
from tests.rollout_support import ENDPOINT_ALARMS, as_sagemaker, replaced_endpoint_stack, rolling_endpoint_stack

pytestmark = needs_binary


@pytest.fixture
def sagemaker_plan(runtime, monkeypatch):
    """The saved plan Terraform really made, with the fixture's resources typed as their SageMaker twins."""
    real = runtime.runtime.plan_document
    runtime.use(plan_document=lambda runner, plan_file: as_sagemaker(real(runner, plan_file)))


def live(project, runtime, stack) -> None:
    """Version 1 of ``stack`` deployed; the synthesized stack is version 2 from now on."""
    runtime.use(synthesize=FixtureSynth(stack(1)))
    first = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert first.exit_code == 0, first.output
    runtime.use(synthesize=FixtureSynth(stack(2)))


def state_inputs(project) -> dict[str, dict]:
    doc = json.loads((project / STATE_FILE).read_text())
    return {r["name"]: r["instances"][0]["attributes"]["input"]["value"] for r in doc["resources"]}


# --------------------------------------------------------------------------------------------- downtime


def test_plan_says_an_endpoint_is_replaced_and_deploy_refuses_it_without_allow_downtime(runtime, project, aws, monkeypatch, sagemaker_plan):
    deploy_single_model(aws)
    live(project, runtime, replaced_endpoint_stack)

    monkeypatch.setenv("COLUMNS", "80")
    plan = run("plan", "fastscale.yaml")
    assert plan.exit_code == 0, plan.output
    assert_fits(plan.stdout)
    assert "-/+ replace terraform_data.endpoint  (replace, downtime)" in plan.stdout
    flat = " ".join(plan.stdout.split())  # wrapped at 80 columns
    assert "endpoint demo-chat-v2 (terraform_data.endpoint): name cannot change in place: deleted, then created" in flat
    assert "to avoid it: an endpoint's name cannot change in place: keep the old name" in flat
    assert "applies this only with --allow-downtime" in plan.stdout

    monkeypatch.delenv("COLUMNS")
    summary = json.loads(run("plan", "fastscale.yaml", "--json").stdout)
    [resource] = summary["classification"]["resources"]
    assert (resource["class"], resource["replace_paths"], resource["actions"]) == (
        "replace_with_downtime", ["name"], ["delete", "create"])
    assert summary["classification"]["summary"]["downtime"] == ["terraform_data.endpoint"]

    refused = run("deploy", "fastscale.yaml", "--auto-approve")
    assert refused.exit_code == 2
    assert "terraform_data.endpoint (name)" in refused.stderr and "Nothing was applied" in refused.stderr
    assert "--allow-downtime" in refused.stderr and "Traceback" not in refused.output
    assert state_inputs(project)["endpoint"]["name"] == "demo-chat", "nothing may be applied"
    assert not list(project.glob("cdktf.out/stacks/demo/*.tfplan")), "the saved plan is removed"

    as_json = run("deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert as_json.exit_code == 2
    refusal = json.loads(as_json.stdout)
    assert refusal["exit_code"] == 2 and refusal["downtime_allowed"] is False and "terraform" in refusal
    assert refusal["terraform"]["operation"] == "plan"  # apply never ran
    assert refusal["classification"]["resources"][0]["avoid"].startswith("an endpoint's name cannot change")
    assert state_inputs(project)["endpoint"]["name"] == "demo-chat"

    allowed = run("deploy", "fastscale.yaml", "--auto-approve", "--allow-downtime")
    assert allowed.exit_code == 0, allowed.output
    assert "--allow-downtime: 1 live endpoint(s) or component(s) will be replaced" in allowed.stderr
    assert state_inputs(project)["endpoint"]["name"] == "demo-chat-v2"


def test_creating_a_new_endpoint_is_not_downtime(runtime, project, aws, monkeypatch, sagemaker_plan):
    deploy_single_model(aws)
    runtime.use(synthesize=FixtureSynth(replaced_endpoint_stack(1)))
    result = run("deploy", "fastscale.yaml", "--auto-approve", "--json", "--no-wait")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["classification"]["summary"]["counts"]["create"] == 1
    assert summary["classification"]["summary"]["downtime"] == [] and "rollout" not in summary


# --------------------------------------------------------------------------------------------- rollouts


def describe(status: str, config: str, *, reason: str | None = None, pending: str | None = None) -> dict:
    """The endpoint as SageMaker describes it now (times around the real clock: the deploy starts now)."""
    return endpoint_answer(status, config, pending=pending, variant_status="Baking" if pending else None, reason=reason,
                           modified=dt.datetime.now(dt.UTC) + dt.timedelta(minutes=1))


@pytest.fixture
def rollout_aws(runtime, monkeypatch):
    sagemaker, sm = stubbed("sagemaker")
    cloudwatch, cw = stubbed("cloudwatch")
    runtime.use(rollout_clients=lambda config: {"sagemaker": sagemaker, "cloudwatch": cloudwatch})
    yield sm, cw
    sm.assert_no_pending_responses()
    cw.assert_no_pending_responses()


def test_a_rolled_back_deploy_exits_1_naming_the_alarm_that_fired(runtime, project, aws, monkeypatch, sagemaker_plan, rollout_aws):
    sm, cw = rollout_aws
    deploy_single_model(aws)
    live(project, runtime, rolling_endpoint_stack)
    # While Terraform applies: the new fleet is baking. After: back on the old configuration.
    sm.add_response("describe_endpoint", describe("Updating", "demo-chat-1", pending="demo-chat-2"), {"EndpointName": "demo-chat"})
    sm.add_response("describe_endpoint", describe("InService", "demo-chat-1", reason="Deployment was rolled back."),
                    {"EndpointName": "demo-chat"})
    fired = dt.datetime.now(dt.UTC)
    cw.add_response("describe_alarm_history", {"AlarmHistoryItems": []},
                    {"AlarmName": ENDPOINT_ALARMS[0], "HistoryItemType": "StateUpdate", "StartDate": ANY})
    cw.add_response("describe_alarm_history", {"AlarmHistoryItems": [{
        "AlarmName": ENDPOINT_ALARMS[1], "Timestamp": fired, "HistoryItemType": "StateUpdate",
        "HistorySummary": "Alarm updated from OK to ALARM",
        "HistoryData": json.dumps({"newState": {"stateValue": "ALARM"}})}]},
        {"AlarmName": ENDPOINT_ALARMS[1], "HistoryItemType": "StateUpdate", "StartDate": ANY})
    verified = []
    runtime.use(verify_live=lambda config, **kw: verified.append(kw))

    result = run("deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout)
    [rollout] = summary["rollout"]
    assert (rollout["name"], rollout["outcome"], rollout["alarm"]) == ("demo-chat", "rolled_back", ENDPOINT_ALARMS[1])
    assert rollout["rollback_alarms"] == list(ENDPOINT_ALARMS)
    assert [o["status"] for o in rollout["observations"]] == ["Updating", "InService"]
    assert f"alarm {ENDPOINT_ALARMS[1]} fired" in summary["error"] and summary["terraform"]["operation"] == "apply"
    assert verified == [], "a rolled-back deployment is not verified against the config"
    waits = [e for e in json_lines(result.stderr) if e.get("event") == "wait"]
    assert waits[0]["what"] == "rollout of endpoint demo-chat" and "Baking" in waits[0]["state"]
    [endpoint] = summary["classification"]["resources"]
    assert endpoint["class"] == "blue_green" and endpoint["strategy"]["traffic"] == "CANARY"


def test_a_finished_rollout_is_shown_then_the_live_state_verified(runtime, project, aws, monkeypatch, sagemaker_plan, rollout_aws):
    sm, _ = rollout_aws
    deploy_single_model(aws)
    live(project, runtime, rolling_endpoint_stack)
    sm.add_response("describe_endpoint", describe("Updating", "demo-chat-1", pending="demo-chat-2"), {"EndpointName": "demo-chat"})
    sm.add_response("describe_endpoint", describe("InService", "demo-chat-2"), {"EndpointName": "demo-chat"})

    plan = run("plan", "fastscale.yaml")
    assert "~ update terraform_data.endpoint  (blue/green)" in plan.stdout
    assert "endpoint demo-chat: blue/green, canary 25%, 600s bake" in plan.stdout

    result = run("deploy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 0, result.output
    assert "✓ endpoint demo-chat: new version in service (InService)" in result.stdout
    assert "rollout of endpoint demo-chat: Updating: to demo-chat-2; AllTraffic Baking" in result.stderr
    assert "checks match the config" in result.stdout


def test_the_change_summary_prints_each_rollout_s_notes(capsys):
    from fastscale.infra.terraform.rollout import ClassifiedChange, PlanClassification, Strategy
    from fastscale.infra.terraform.runner import TerraformResult

    rollout = ClassifiedChange(
        "aws_sagemaker_endpoint.chat", "aws_sagemaker_endpoint", ("update",), ChangeKind.BLUE_GREEN, "a new endpoint configuration",
        name="demo-chat", strategy=Strategy(ChangeKind.BLUE_GREEN, configured=True, traffic="ALL_AT_ONCE"),
        duration_note="no estimate", notes=("cut-over starts at 3 instance(s) (live; instances.initial is 1)",
                                            "auto scaling paused: deregistered before, registered after"))
    plan_view.print_change_summary(
        TerraformResult("plan", 2, True, changed=1, has_changes=True),
        [{"address": "aws_sagemaker_endpoint.chat", "action": "update"}], PlanClassification((rollout,)))
    out = " ".join(capsys.readouterr().out.split())
    assert "endpoint demo-chat: blue/green, all at once" in out
    assert "cut-over starts at 3 instance(s) (live; instances.initial is 1)" in out
    assert "auto scaling paused: deregistered before, registered after" in out


def test_deploy_refuses_a_replacement_under_the_name_the_live_one_holds(runtime, project, aws, monkeypatch):
    # AWS refuses a second model of the same name: applying would stop half-way, after the plan was accepted.
    from tests.rollout_support import drifted_model_stack

    real = runtime.runtime.plan_document
    runtime.use(plan_document=lambda runner, plan_file: as_sagemaker(real(runner, plan_file), {"model": "aws_sagemaker_model"}))
    deploy_single_model(aws)
    live(project, runtime, drifted_model_stack)

    plan = run("plan", "fastscale.yaml")
    assert plan.exit_code == 0, plan.output
    flat = " ".join(plan.stdout.split())
    assert "Cannot apply: terraform_data.model would be created as demo-chat-aaaa1111 while the live one still holds" in flat

    refused = run("deploy", "fastscale.yaml", "--auto-approve", "--allow-downtime")
    assert refused.exit_code == 1, refused.output
    assert "terraform_data.model as demo-chat-aaaa1111 (vpc_config)" in refused.stderr
    assert "Nothing was applied" in refused.stderr and "Traceback" not in refused.output
    assert state_inputs(project)["model"]["vpc_config"] == "subnet-a", "nothing may be applied"
