"""`fastscale destroy` / `verify-cleanup` / `sweep`: output and exit codes.

Terraform is real (fixture stacks of ``terraform_data``); AWS is moto, and botocore's Stubber for the
SageMaker calls about inference components, which moto does not implement.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml

from fastscale.infra.config import parse_config
from fastscale.infra.model.naming import all_endpoint_names
from tests.aws.factories import (
    component_config,
    create_role,
    deploy_single_model,
    endpoint_config_desc,
    queue_in_use,
    queue_sagemaker_discovery,
    role_tags,
    single_config,
    single_model_config,
    stack_tags,
    stubbed,
)
from tests.cli.support import FixtureSynth, fixture_addresses, json_lines, needs_binary, run, state_addresses


def endpoint_exists(aws, name: str = "demo-chat") -> bool:
    try:
        aws["sagemaker"].describe_endpoint(EndpointName=name)
    except aws["sagemaker"].exceptions.ClientError:
        return False
    return True


@pytest.fixture
def deployed(project, synth, aws, _moto):
    """A stack Terraform applied, with its live resources in moto. Returns a function that empties moto
    the way a finished destroy leaves the account."""
    deploy_single_model(aws)
    assert run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait").exit_code == 0
    assert state_addresses(project) == fixture_addresses("basic")
    return _moto[0].reset


# --------------------------------------------------------------------------------------------- destroy


@needs_binary
def test_destroy_then_a_clean_account_exits_0_and_states_the_caches_are_gone(project, deployed, aws):
    deployed()  # what Terraform's destroy does to the account
    result = run("destroy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 0, result.output
    assert state_addresses(project) == set()
    assert "terraform_data.endpoint: Destruction complete" in result.stderr
    # --auto-approve asks nothing, but still lists what its plan deletes, before deleting it.
    assert "Plan: 0 to add, 0 to change, 3 to destroy." in result.stdout
    for address in fixture_addresses("basic"):
        assert re.search(rf"^\s*- delete {re.escape(address)}$", result.stdout, re.MULTILINE)
    assert "Nothing of demo is left in us-east-1" in result.stdout
    # The proof about the caches names the endpoint that owned them.
    assert "caches are gone" in result.stdout and "endpoint demo-chat" in result.stdout
    # One set of clients per run: deploy's (name check, live counts, verification), destroy's (claiming the logs,
    # then the proof).
    assert aws["calls"] == ["demo"] * 2

    again = run("destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert again.exit_code == 0
    summary = json.loads(again.stdout)
    assert summary["command"] == "destroy" and summary["ok"] is True
    assert summary["changes"] == []  # the state already held nothing
    assert summary["terraform"]["ok"] is True and summary["terraform"]["destroy"] == 0
    cleanup = summary["cleanup"]
    assert cleanup["ok"] is True and cleanup["leftovers"] == []
    assert "endpoint demo-chat" in cleanup["caches"] and cleanup["checked"]


@needs_binary
def test_destroy_with_a_leftover_exits_1_listing_it_and_pointing_at_sweep(project, deployed, aws):
    # Terraform forgets the endpoint, but it is still in the account (a lost state, or still deleting).
    result = run("destroy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 1
    assert state_addresses(project) == set()
    assert "leftover(s) of demo in us-east-1" in result.stdout
    assert "endpoint" in result.stdout and "demo-chat" in result.stdout and "status InService" in result.stdout
    assert "caches may still exist" in result.stdout
    assert "fastscale sweep fastscale.yaml" in result.stdout

    summary = json.loads(run("verify-cleanup", "fastscale.yaml", "--json").stdout)
    kinds = {x["kind"] for x in summary["cleanup"]["leftovers"]}
    assert {"endpoint", "model", "endpoint-config", "scalable-target", "alarm", "iam-role"} <= kinds


@needs_binary
def test_a_failed_terraform_destroy_still_checks_what_is_left(runtime, project, monkeypatch, aws):
    stuck = {
        "resource": {
            "terraform_data": {
                "stuck": {
                    "input": "x",
                    "provisioner": [{"local-exec": {"when": "destroy", "command": "echo destroy-boom >&2; exit 1"}}],
                }
            }
        }
    }
    runtime.use(synthesize=FixtureSynth(stuck))
    run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")  # the apply succeeds; AWS is empty
    assert state_addresses(project) == {"terraform_data.stuck"}

    result = run("destroy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 1
    assert "destroy-boom" in result.stderr and "terraform destroy failed" in result.stderr
    assert "checking what is left anyway" in result.stderr
    assert "Nothing of demo is left" in result.stdout  # the account check ran and was clean
    assert state_addresses(project) == {"terraform_data.stuck"}


@needs_binary
def test_interactive_destroy_asks_and_a_no_destroys_nothing(runtime, project, deployed, aws, monkeypatch):
    runtime.use(is_interactive=lambda: True)
    declined = run("destroy", "fastscale.yaml", input="n\n")
    assert declined.exit_code == 1
    assert "Plan: 0 to add, 0 to change, 3 to destroy." in declined.stdout
    for address in fixture_addresses("basic"):
        assert re.search(rf"^\s*- delete {re.escape(address)}$", declined.stdout, re.MULTILINE)
    assert "Destroy these resources?" in declined.output and "cancelled" in declined.stderr
    assert state_addresses(project) == fixture_addresses("basic")

    deployed()
    accepted = run("destroy", "fastscale.yaml", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert state_addresses(project) == set()
    assert not list(project.glob("cdktf.out/stacks/demo/*.tfplan"))

    nothing = run("destroy", "fastscale.yaml")
    assert nothing.exit_code == 0 and "Destroy these resources?" not in nothing.output
    assert "holds nothing to destroy" in nothing.stdout


@needs_binary
def test_a_failed_terraform_init_still_ends_with_the_proof_and_names_the_step(runtime, project, monkeypatch, aws):
    deploy_single_model(aws)  # what a half-finished earlier destroy left behind
    runtime.use(synthesize=FixtureSynth({"not-a-block": {"a": 1}, "resource": {}}))
    result = run("destroy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 1
    assert "terraform init failed" in result.stderr and "(step: init)" in result.stderr
    assert "checking what is left anyway" in result.stderr
    assert "leftover(s) of demo in us-east-1" in result.stdout and "demo-chat" in result.stdout

    summary = json.loads(run("destroy", "fastscale.yaml", "--auto-approve", "--json").stdout)
    assert summary["failed_step"] == "init" and summary["exit_code"] == 1
    assert summary["cleanup"]["ok"] is False and any(x["kind"] == "endpoint" for x in summary["cleanup"]["leftovers"])


def test_another_projects_resources_are_shown_as_not_touched_and_do_not_fail_the_proof(project, aws):
    # Project `chat-prod` with endpoint `qwen3` has the names of project `chat` with endpoint `prod-qwen3`.
    other = single_config("chat-prod", "qwen3")
    deploy_single_model(aws, config=other)
    data = yaml.safe_load((project / "fastscale.yaml").read_text())
    data["project"], data["endpoints"][0]["name"] = "chat", "prod-qwen3"
    (project / "chat.yaml").write_text(yaml.safe_dump(data))

    result = run("verify-cleanup", "chat.yaml")
    assert result.exit_code == 0, result.output
    assert "Nothing of chat is left" in result.stdout
    assert "not touched" in result.stdout and "belongs to stack chat-prod" in result.stdout
    swept = run("sweep", "chat.yaml", "--auto-approve", "--json")
    assert swept.exit_code == 0
    summary = json.loads(swept.stdout)
    assert summary["sweep"]["actions"] == [] and summary["sweep"]["not_touched"]
    assert endpoint_exists(aws, "chat-prod-qwen3")


def test_plan_and_deploy_stop_with_exit_2_when_a_name_is_taken(project, synth, aws):
    other = single_config("demo", "chat")
    deploy_single_model(aws, config=other, tags=stack_tags(single_config("someone-else", "chat")))
    for command in (["plan"], ["deploy", "--auto-approve"]):
        result = run(*command[:1], "fastscale.yaml", *command[1:])
        assert result.exit_code == 2, result.output
        assert "endpoint demo-chat (from endpoints[0].name): belongs to stack someone-else" in result.stderr
        assert "Nothing was planned or applied" in result.stderr
    assert not list(project.glob("**/.terraform"))  # stopped before Terraform ran (not even init)
    summary = json.loads(run("plan", "fastscale.yaml", "--json").stdout)
    assert summary["exit_code"] == 2
    assert {"kind": "endpoint", "name": "demo-chat", "config_path": "endpoints[0].name"}.items() <= summary["name_clashes"][0].items()


def test_plan_accepts_names_the_stack_already_owns(project, synth, aws):
    deploy_single_model(aws)  # this stack's own resources, tagged as it tags them
    result = run("plan", "fastscale.yaml")
    assert result.exit_code == 0, result.output
    assert synth.calls


@needs_binary
def test_logs_kept_by_destroy_stay_provable_for_sweep_delete_logs(project, deployed, aws):
    logs = aws["logs"]
    logs.create_log_group(logGroupName="/aws/sagemaker/Endpoints/demo-chat")  # SageMaker writes these, untagged
    summary = json.loads(run("destroy", "fastscale.yaml", "--auto-approve", "--json").stdout)
    # Claimed while the endpoint still proved them the stack's, before Terraform ran.
    assert summary["claimed_log_groups"] == ["/aws/sagemaker/Endpoints/demo-chat"]
    arn = logs.describe_log_groups()["logGroups"][0]["logGroupArn"]
    assert logs.list_tags_for_resource(resourceArn=arn)["tags"]["fastscale:stack"] == "demo"

    aws["sagemaker"].delete_endpoint(EndpointName="demo-chat")  # gone now: only the tag proves the logs
    aws["application-autoscaling"].deregister_scalable_target(  # (moto cannot read a target's own tags)
        ServiceNamespace="sagemaker", ResourceId="endpoint/demo-chat/variant/AllTraffic", ScalableDimension="sagemaker:variant:DesiredInstanceCount"
    )
    swept = json.loads(run("sweep", "fastscale.yaml", "--auto-approve", "--delete-logs", "--json").stdout)
    assert ("log-group", "deleted") in {(a["kind"], a["status"]) for a in swept["sweep"]["actions"]}
    assert logs.describe_log_groups()["logGroups"] == []


def log_group_tags(aws, name: str) -> dict:
    arn = next(g["logGroupArn"] for g in aws["logs"].describe_log_groups()["logGroups"] if g["logGroupName"] == name)
    return aws["logs"].list_tags_for_resource(resourceArn=arn)["tags"]


def test_sweep_keeps_logs_unless_asked(project, aws):
    logs = "/aws/sagemaker/Endpoints/demo-chat"
    deploy_single_model(aws)
    aws["logs"].create_log_group(logGroupName=logs)  # SageMaker writes these, untagged

    dry = run("sweep", "fastscale.yaml", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    summary = json.loads(dry.stdout)["sweep"]
    assert "log-group" not in {a["kind"] for a in summary["actions"]}
    assert [(k["kind"], k["name"]) for k in summary["kept"]] == [("log-group", logs)]
    assert log_group_tags(aws, logs) == {}  # a dry run writes nothing, not even the claim

    kept = run("sweep", "fastscale.yaml", "--auto-approve", "--json")
    assert kept.exit_code == 0, kept.output
    summary = json.loads(kept.stdout)["sweep"]
    assert "log-group" not in {a["kind"] for a in summary["actions"]}
    assert {a["status"] for a in summary["actions"]} == {"deleted"} and not endpoint_exists(aws)
    (found,) = summary["kept"]
    assert (found["kind"], found["name"]) == ("log-group", logs)
    assert found["reason"].endswith("logs are data, kept (--delete-logs deletes them)")
    assert [g["logGroupName"] for g in aws["logs"].describe_log_groups()["logGroups"]] == [logs]
    # Claimed with the stack's tag while the endpoint still proved them the stack's: a later --delete-logs finds them.
    assert log_group_tags(aws, logs)["fastscale:stack"] == "demo"

    shown = run("sweep", "fastscale.yaml", "--auto-approve")
    assert shown.exit_code == 0, shown.output
    assert "Logs of this stack, kept (1): logs are data; `fastscale sweep --delete-logs` deletes them" in shown.stdout
    assert logs in shown.stdout and "Nothing to sweep" in shown.stdout

    deleted = run("sweep", "fastscale.yaml", "--auto-approve", "--delete-logs", "--json")
    assert deleted.exit_code == 0, deleted.output
    summary = json.loads(deleted.stdout)["sweep"]
    assert [(a["kind"], a["name"], a["status"]) for a in summary["actions"]] == [("log-group", logs, "deleted")]
    assert summary["kept"] == []
    assert aws["logs"].describe_log_groups()["logGroups"] == []


# --------------------------------------------------------------------------------------------- verify-cleanup


def test_verify_cleanup_needs_no_terraform_and_reports_a_clean_account(project, aws, monkeypatch):
    monkeypatch.setenv("PATH", str(project / "no-terraform-needed"))
    result = run("verify-cleanup", "fastscale.yaml")
    assert result.exit_code == 0, result.output
    assert "Nothing of demo is left" in result.stdout and "caches are gone" in result.stdout
    assert not (project / "cdktf.out").exists()

    deploy_single_model(aws)
    left = run("verify-cleanup", "fastscale.yaml", "--json")
    assert left.exit_code == 1
    summary = json.loads(left.stdout)
    assert summary["command"] == "verify-cleanup" and summary["ok"] is False and summary["exit_code"] == 1
    endpoint = next(x for x in summary["cleanup"]["leftovers"] if x["kind"] == "endpoint")
    assert endpoint["name"] == "demo-chat" and endpoint["arn"].endswith(":endpoint/demo-chat")
    assert "demo-chat" in summary["cleanup"]["caches"] and "may still exist" in summary["cleanup"]["caches"]


def test_verify_cleanup_lists_components_of_an_endpoint_still_deleting(runtime, project, aws, monkeypatch):
    data = component_config().model_dump(mode="json", exclude_defaults=True)
    data["endpoints"][0]["instances"]["min"] = 1  # keep the file valid: no scale to zero here
    data["endpoints"][0]["inference_components"][0]["copies"]["min"] = 1
    (project / "components.yaml").write_text(yaml.safe_dump(data))
    names = all_endpoint_names(parse_config(data))[0]
    endpoint = names.endpoint
    components = [c.name for c in names.components]

    # moto has no inference-component calls: SageMaker answers come from a Stubber, the rest from moto.
    sm, stubber = stubbed("sagemaker")
    tags = stack_tags(parse_config(data))
    queue_sagemaker_discovery(
        stubber,
        stack=parse_config(data),
        endpoints=[(endpoint, "Deleting", tags)],
        components=[(c, endpoint, "Deleting", tags, None) for c in components],
    )
    runtime.use(aws_clients=lambda config: {**aws, "sagemaker": sm})

    result = run("verify-cleanup", "components.yaml", "--json")
    stubber.assert_no_pending_responses()
    assert result.exit_code == 1
    cleanup = json.loads(result.stdout)["cleanup"]
    assert {(x["kind"], x["name"]) for x in cleanup["leftovers"]} == {("endpoint", endpoint)} | {
        ("inference-component", c) for c in components
    }
    assert "still Deleting" in next(x["detail"] for x in cleanup["leftovers"] if x["kind"] == "endpoint")
    for owner in [endpoint, *components]:
        assert owner in cleanup["caches"]
    assert "may still exist" in cleanup["caches"]


def test_aws_unusable_during_verify_cleanup_is_exit_1_with_a_message(runtime, project):
    # The inventory's first call, the tagging index, is refused: nothing can be proven, so nothing is reported gone.
    tagging, stubber = stubbed("resourcegroupstaggingapi")
    stubber.add_client_error("get_resources", "AccessDeniedException", "not authorized to perform: tag:GetResources")
    runtime.use(aws_clients=lambda config: {"resourcegroupstaggingapi": tagging})
    result = run("verify-cleanup", "fastscale.yaml")
    stubber.assert_no_pending_responses()
    assert result.exit_code == 1
    assert "cannot check what is left:" in result.stderr and "GetResources" in result.stderr
    assert "AccessDeniedException" in result.stderr and "Nothing of" not in result.stdout
    assert "Traceback" not in result.output


# --------------------------------------------------------------------------------------------- sweep


def test_sweep_dry_run_lists_in_order_and_deletes_nothing(project, aws):
    deploy_single_model(aws)
    result = run("sweep", "fastscale.yaml", "--dry-run")  # no --auto-approve needed: nothing is deleted
    assert result.exit_code == 0, result.output
    assert "dry run: nothing was deleted" in result.stdout
    assert "would-delete" in result.stdout and "demo-chat" in result.stdout
    assert endpoint_exists(aws)

    as_json = run("sweep", "fastscale.yaml", "--dry-run", "--json")
    summary = json.loads(as_json.stdout)
    assert summary["command"] == "sweep" and summary["dry_run"] is True and summary["ok"] is True
    actions = summary["sweep"]["actions"]
    assert {a["status"] for a in actions} == {"would-delete"}
    kinds = [a["kind"] for a in actions]
    # The safe order: alarms and scaling first, the endpoint before its configuration and model, the role last.
    assert kinds.index("alarm") < kinds.index("scaling-policy") < kinds.index("endpoint")
    assert kinds.index("endpoint") < kinds.index("endpoint-config") < kinds.index("model") < kinds.index("iam-role")
    assert kinds[-1] == "iam-role"
    assert "cleanup" not in summary
    assert endpoint_exists(aws)


def test_sweep_deletes_everything_then_proves_the_account_clean(project, aws):
    deploy_single_model(aws)
    result = run("sweep", "fastscale.yaml", "--auto-approve", "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["ok"] is True and summary["sweep"]["dry_run"] is False
    assert {a["status"] for a in summary["sweep"]["actions"]} == {"deleted"}
    assert summary["cleanup"]["ok"] is True
    assert not endpoint_exists(aws)
    # Each deletion was reported as it happened, as a JSON line on stderr.
    swept = [e for e in json_lines(result.stderr) if e["event"] == "sweep"]
    assert [(e["kind"], e["name"]) for e in swept] == [(a["kind"], a["name"]) for a in summary["sweep"]["actions"]]

    again = run("sweep", "fastscale.yaml", "--auto-approve")
    assert again.exit_code == 0 and "Nothing to sweep" in again.stdout


def test_sweep_with_delete_endpoint_denied_keeps_what_the_endpoint_uses_and_exits_1_naming_it(runtime, project, aws, monkeypatch):
    names = all_endpoint_names(single_model_config())[0]
    create_role(aws["iam"], names.execution_role, role_tags())
    role_arn = aws["iam"].get_role(RoleName=names.execution_role)["Role"]["Arn"]
    config = names.endpoint_config_prefix + "20260101000000000000000001"
    tags = stack_tags()
    sm, stubber = stubbed("sagemaker")
    account = dict(endpoints=[(names.endpoint, "InService", tags)], configs=[(config, tags)], models=[(names.model, tags)], list_components=False)
    queue_sagemaker_discovery(stubber, stack=single_model_config(), **account)
    stubber.add_client_error(
        "delete_endpoint", "AccessDeniedException", "not authorized to perform sagemaker:DeleteEndpoint", 400, {"EndpointName": names.endpoint}
    )
    queue_in_use(stubber, endpoints=[(names.endpoint, config)], configs={config: endpoint_config_desc(config, [names.model])},
                 models={names.model: role_arn})
    queue_sagemaker_discovery(stubber, stack=single_model_config(), **account)  # the proof afterwards
    runtime.use(aws_clients=lambda config: {**aws, "sagemaker": sm})

    result = run("sweep", "fastscale.yaml", "--auto-approve")
    stubber.assert_no_pending_responses()  # no delete of the configuration, the model or the role was asked
    assert result.exit_code == 1, result.output
    out = " ".join(result.stdout.split())
    assert "AccessDeniedException" in out and f"in use by endpoint {names.endpoint}, which is still there" in out
    assert "4 leftover(s) of demo in us-east-1" in out
    for name in (names.endpoint, config, names.model, names.execution_role):
        assert name in out
    assert f"endpoint {names.endpoint} still exists (InService): its caches may remain" in out
    assert aws["iam"].get_role(RoleName=names.execution_role)["Role"]


def test_interactive_sweep_shows_the_list_first_and_a_no_deletes_nothing(runtime, project, aws, monkeypatch):
    runtime.use(is_interactive=lambda: True)
    empty = run("sweep", "fastscale.yaml")
    assert empty.exit_code == 0 and "Nothing to sweep" in empty.stdout
    assert "Delete these resources?" not in empty.output

    deploy_single_model(aws)
    declined = run("sweep", "fastscale.yaml", input="n\n")
    assert declined.exit_code == 1
    assert "would-delete" in declined.stdout and "Delete these resources?" in declined.output
    assert endpoint_exists(aws)

    accepted = run("sweep", "fastscale.yaml", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert not endpoint_exists(aws) and "Nothing of demo is left" in accepted.stdout
    # Each deletion is shown as it happens; the result is the counts (nothing failed, so no table).
    assert "deleted: endpoint demo-chat" in accepted.stderr
    assert re.search(r"^Sweep: \d+ deleted\.$", accepted.stdout, re.MULTILINE)
    assert "Not deleted" not in accepted.stdout
