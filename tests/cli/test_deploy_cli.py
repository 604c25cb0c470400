"""`fastscale plan` / `deploy` / `status`: output and exit codes, against the real terraform binary.

The synthesized stack is replaced by a fixture stack of Terraform's built-in ``terraform_data`` resources
(no provider, runs offline) written where the real one would be, with the same local-backend layout
(state next to the project, outside the output directory). AWS is moto: the "live" endpoint the
verification reads is created in moto the way a correct apply would have created it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import threading
from pathlib import Path

import pytest

from fastscale.cli.progress import Reporter
from fastscale.cli.runtime import Runtime
from fastscale.infra.model.resolved import ResolvedStack, resolve
from fastscale.infra.terraform.runner import TerraformRunner
from tests.aws.factories import HIGH_RES_VARIANT, deploy_single_model, single_model_config
from tests.cli.support import (
    REAL_BINARY,
    STATE_FILE,
    FixtureSynth,
    fixture_addresses,
    json_lines,
    needs_binary,
    run,
    state_addresses,
    state_resources,
    write_invalid,
)

# --------------------------------------------------------------------------------------------- plan


@needs_binary
def test_plan_shows_changes_then_none_with_terraform_style_detailed_exit_codes(project, synth, aws):
    created = fixture_addresses("basic")

    first = run("plan", "fastscale.yaml")
    assert first.exit_code == 0, first.output
    assert f"Plan: {len(created)} to add, 0 to change, 0 to destroy." in first.stdout
    # The plan is the result: on stdout, one line per resource, so `plan > plan.txt` keeps all of it.
    for address in created:
        assert re.search(rf"^\s*\+ create {re.escape(address)}$", first.stdout, re.MULTILINE), first.stdout
    assert "Plan to create" not in first.stderr
    assert synth.calls == ["cdktf.out"]
    assert (project / "cdktf.out" / "stacks" / "demo" / "cdk.tf.json").is_file()

    assert run("plan", "fastscale.yaml", "--detailed-exitcode").exit_code == 2

    as_json = run("plan", "fastscale.yaml", "--json")
    assert as_json.exit_code == 0
    summary = json.loads(as_json.stdout)
    assert summary["command"] == "plan" and summary["ok"] is True and summary["has_changes"] is True
    assert summary["add"] == len(created) and summary["change"] == summary["destroy"] == 0
    assert {c["address"] for c in summary["changes"]} == created
    assert {c["action"] for c in summary["changes"]} == {"create"}
    events = json_lines(as_json.stderr)  # progress is JSON lines, every one of them
    assert {"step", "terraform"} <= {e["event"] for e in events}
    assert {e["address"] for e in events if e.get("kind") == "planned_change"} == created
    assert state_addresses(project) == set(), "plan must not apply"

    deploy_single_model(aws)
    assert run("deploy", "fastscale.yaml", "--auto-approve").exit_code == 0

    unchanged = run("plan", "fastscale.yaml", "--detailed-exitcode")
    assert unchanged.exit_code == 0, unchanged.output
    assert "No changes" in unchanged.stdout
    assert "create" not in unchanged.stdout


# --------------------------------------------------------------------------------------------- deploy


@needs_binary
def test_deploy_applies_then_verifies_the_live_endpoint(project, synth, aws):
    deploy_single_model(aws)
    result = run("deploy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 0, result.output
    assert state_addresses(project) == fixture_addresses("basic")
    # Terraform's own progress lines, then the outputs (the sensitive one never shown), then the checks.
    assert "terraform_data.endpoint: Creation complete" in result.stderr
    assert "endpoint_name = config-v1" in result.stdout
    assert "token-that-must-not-be-printed" not in result.output
    assert "all " in result.stdout and "checks match the config" in result.stdout
    assert "endpoint/demo-chat" in result.stdout and HIGH_RES_VARIANT in result.stdout
    # one set of clients for the run, shared by the name check and the live instance counts before Terraform
    # and the verification after
    assert aws["calls"] == ["demo"]


@needs_binary
def test_deploy_hands_every_part_the_one_stack_it_resolved(runtime, project, synth, aws):
    """Synthesis, the AWS and quota clients and the live verification all get the same resolved stack: the
    command resolves the config once and nothing downstream resolves it again."""
    handed = []

    def recording(part):
        def call(stack, *args, **kwargs):
            handed.append(stack)
            return part(stack, *args, **kwargs)
        return call

    parts = ("synthesize", "aws_clients", "quota_clients", "verify_live")
    runtime.use(**{name: recording(getattr(runtime.runtime, name)) for name in parts})
    deploy_single_model(aws)
    result = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert result.exit_code == 0, result.output
    assert len(handed) == len(parts)  # each part once: the run's clients are built once and shared
    assert all(isinstance(s, ResolvedStack) for s in handed) and len({id(s) for s in handed}) == 1


@needs_binary
def test_deploy_json_is_one_summary_on_stdout(project, synth, aws):
    deploy_single_model(aws)
    result = run("deploy", "fastscale.yaml", "--auto-approve", "--json", "--no-wait")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["command"] == "deploy" and summary["ok"] is True and summary["exit_code"] == 0
    tf = summary["terraform"]
    assert (tf["operation"], tf["ok"], tf["add"]) == ("apply", True, len(fixture_addresses("basic")))
    assert tf["outputs"] == {"endpoint_name": "config-v1"}
    verification = summary["verification"]
    assert verification["ok"] is True and verification["waited"] is False
    assert {"resource", "check", "ok", "expected", "actual", "detail"} <= set(verification["checks"][0])
    assert any(c["resource"] == "endpoint/demo-chat" and c["check"] == "status" for c in verification["checks"])
    events = json_lines(result.stderr)
    assert {e["address"] for e in events if e.get("kind") == "apply_complete"} == fixture_addresses("basic")


@needs_binary
def test_deploy_that_fails_mid_apply_shows_terraforms_error_and_verifies_nothing(runtime, project, monkeypatch, aws):
    runtime.use(synthesize=FixtureSynth("failing"))
    verified = []
    runtime.use(verify_live=lambda stack, **kw: verified.append(kw))

    result = run("deploy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 1
    assert "local-exec provisioner error" in result.stderr and "provisioner-boom" in result.stderr
    assert "terraform apply failed" in result.stderr
    assert verified == [] and aws["calls"] == ["demo"]  # the clients of the name check and live counts, before Terraform
    assert "Traceback" not in result.output
    # What Terraform did manage to create is in the state, so a re-run continues from there.
    assert state_resources(project) == {
        "terraform_data.first": "ok",
        "terraform_data.third": "ok",
        "terraform_data.broken": "tainted",
    }

    as_json = run("deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert as_json.exit_code == 1
    summary = json.loads(as_json.stdout)
    assert summary["ok"] is False and "verification" not in summary
    [error] = [d for d in summary["terraform"]["diagnostics"] if d["severity"] == "error"]
    assert error["address"] == "terraform_data.broken" and "provisioner-boom" in error["detail"]


@needs_binary
def test_deploy_whose_live_state_differs_exits_1_naming_the_difference(project, synth, aws):
    deploy_single_model(aws, metric="SageMakerVariantInvocationsPerInstance")  # the 1-minute metric
    result = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert result.exit_code == 1
    assert "target-tracking metric" in result.stdout and "SageMakerVariantInvocationsPerInstance" in result.stdout
    assert "1 of " in result.stdout and "checks differ from the config" in result.stdout

    summary = json.loads(run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait", "--json").stdout)
    assert summary["ok"] is False and summary["terraform"]["ok"] is True
    [failure] = [c for c in summary["verification"]["checks"] if not c["ok"]]
    assert (failure["check"], failure["expected"]) == ("target-tracking metric", HIGH_RES_VARIANT)


@needs_binary
def test_interactive_deploy_applies_only_the_confirmed_plan(runtime, project, synth, aws, monkeypatch):
    runtime.use(is_interactive=lambda: True)
    deploy_single_model(aws)

    declined = run("deploy", "fastscale.yaml", input="n\n")
    assert declined.exit_code == 1
    assert "Plan: 3 to add" in declined.stdout and "Apply these changes?" in declined.output
    assert "cancelled: nothing was changed" in declined.stderr
    assert state_addresses(project) == set() and aws["calls"] == ["demo"]  # name check and live counts, one set of clients

    accepted = run("deploy", "fastscale.yaml", input="y\n")
    assert accepted.exit_code == 0, accepted.output
    assert state_addresses(project) == fixture_addresses("basic")
    assert not list(project.glob("cdktf.out/stacks/demo/*.tfplan")), "the saved plan is removed after use"

    # Nothing left to change: no question asked, the live state is still verified.
    again = run("deploy", "fastscale.yaml")
    assert again.exit_code == 0 and "Apply these changes?" not in again.output
    assert "No changes" in again.stdout and "checks match the config" in again.stdout


# --------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    "command",
    [
        ["plan"],
        ["plan", "--detailed-exitcode"],
        ["deploy", "--auto-approve"],
        ["status"],
        ["destroy", "--auto-approve"],
        ["verify-cleanup"],
        ["sweep", "--auto-approve"],
        ["sweep", "--dry-run"],
    ],
)
def test_invalid_config_exits_2_before_synth_terraform_or_aws(runtime, project, synth, command, monkeypatch):
    def no_aws(stack):
        raise AssertionError("AWS must not be called for an invalid config")

    runtime.use(aws_clients=no_aws)
    path = write_invalid(project)
    result = run(command[0], path, *command[1:])
    assert result.exit_code == 2
    assert "ml.g6.2xlarg" in result.output and "Nothing was done" in result.output
    assert synth.calls == []
    assert not (project / "cdktf.out").exists() and not (project / STATE_FILE).exists()

    as_json = run(command[0], path, *command[1:], "--json")
    assert as_json.exit_code == 2 and json.loads(as_json.stdout)["valid"] is False


@pytest.mark.parametrize("command", [["deploy"], ["destroy"], ["sweep"]])
def test_without_a_terminal_confirmation_is_refused_unless_auto_approved(runtime, project, synth, command, monkeypatch):
    runtime.use(aws_clients=lambda config: pytest.fail("no AWS call expected"))
    result = run(command[0], "fastscale.yaml", *command[1:])
    assert result.exit_code == 2
    assert "--auto-approve" in result.stderr and "no terminal" in result.stderr
    assert synth.calls == [] and not (project / "cdktf.out").exists()
    summary = json.loads(run(command[0], "fastscale.yaml", "--json").stdout)
    assert summary["ok"] is False and summary["exit_code"] == 2


def test_missing_terraform_binary_exits_1_naming_both_binaries_before_synthesizing(project, synth, monkeypatch, aws):
    empty = project / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    for command in (["plan"], ["deploy", "--auto-approve"], ["destroy", "--auto-approve"]):
        result = run(command[0], "fastscale.yaml", *command[1:])
        assert result.exit_code == 1, result.output
        for needle in ("`terraform`", "`tofu`", "--terraform-bin", "FASTSCALE_TERRAFORM"):
            assert needle in result.stderr
        assert "Traceback" not in result.output
        if command[0] == "destroy":  # destroy still proves what is left
            assert "checking what is left anyway" in result.stderr and "Nothing of demo is left" in result.stdout
    assert synth.calls == []

    named = run("plan", "fastscale.yaml", "--terraform-bin", str(project / "nope" / "terraform"), "--json")
    assert named.exit_code == 1
    summary = json.loads(named.stdout)
    assert summary["ok"] is False and "--terraform-bin" in summary["error"]

    monkeypatch.setenv("FASTSCALE_TERRAFORM", "no-such-tofu")
    from_env = run("plan", "fastscale.yaml")
    assert from_env.exit_code == 1 and "FASTSCALE_TERRAFORM='no-such-tofu'" in from_env.stderr


@needs_binary
def test_terraform_bin_and_env_var_choose_the_binary(project, synth, monkeypatch, aws):
    link = project / "my-terraform"
    link.symlink_to(REAL_BINARY)
    monkeypatch.setenv("PATH", str(project / "nothing-here"))
    summary = json.loads(run("plan", "fastscale.yaml", "--terraform-bin", str(link), "--json").stdout)
    assert summary["ok"] is True and summary["terraform_binary"] == str(link)
    monkeypatch.setenv("FASTSCALE_TERRAFORM", str(link))
    assert json.loads(run("plan", "fastscale.yaml", "--json").stdout)["terraform_binary"] == str(link)


# --------------------------------------------------------------------------------------------- Ctrl-C


@needs_binary
def test_ctrl_c_stops_terraform_cleanly_and_exits_130(runtime, project, aws, ctrl_c):
    timers: list[threading.Timer] = []

    def terraform(binary, stack_dir, *, env, on_event):  # the real runner; Ctrl-C once `slow` is under way
        def press_ctrl_c_once_slow_runs(event):
            on_event(event)
            if event.kind == "provision_start" and not timers:
                timers.append(threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)))
                timers[0].start()

        return TerraformRunner(binary, stack_dir, env=env, on_event=press_ctrl_c_once_slow_runs)

    runtime.use(synthesize=FixtureSynth("slow"), terraform=terraform)
    result = run("deploy", "fastscale.yaml", "--auto-approve")
    timers[0].join()
    assert result.exit_code == 130
    assert "Terraform was stopped cleanly" in result.stderr
    # Terraform wrote its state on the way out: what finished is recorded, and the lock is released.
    assert state_addresses(project) == {"terraform_data.fast"}
    assert state_resources(project).get("terraform_data.slow") in (None, "tainted")
    assert not list(project.rglob(".terraform.tfstate.lock.info"))


# --------------------------------------------------------------------------------------------- status


def test_status_compares_live_state_without_terraform(project, aws, monkeypatch):
    monkeypatch.setenv("PATH", str(project / "no-terraform-needed"))
    deploy_single_model(aws)
    live = run("status", "fastscale.yaml")
    assert live.exit_code == 0, live.output
    assert "checks match the config" in live.stdout and "endpoint/demo-chat" in live.stdout
    assert not (project / "cdktf.out").exists()

    aws["sagemaker"].delete_endpoint(EndpointName="demo-chat")
    gone = run("status", "fastscale.yaml", "--json")
    assert gone.exit_code == 1
    summary = json.loads(gone.stdout)
    assert summary["command"] == "status" and summary["ok"] is False
    assert summary["verification"]["waited"] is False
    [missing] = [c for c in summary["verification"]["checks"] if not c["ok"]]
    assert (missing["resource"], missing["actual"]) == ("endpoint/demo-chat", "does not exist")


def test_aws_unusable_is_exit_1_with_a_message(runtime, project, monkeypatch):
    from fastscale.infra.aws.clients import AwsError

    def unusable(config, **kwargs):
        raise AwsError("no usable AWS credentials (test)")

    runtime.use(verify_live=unusable)
    result = run("status", "fastscale.yaml")
    assert result.exit_code == 1
    assert "cannot verify the live state: no usable AWS credentials (test)" in result.stderr
    assert "Traceback" not in result.output


# --------------------------------------------------------------------------------------------- help and seams


@pytest.mark.parametrize("command", ["plan", "deploy", "status", "destroy", "verify-cleanup", "sweep"])
def test_help_explains_exit_codes_and_environment(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    assert "Exit codes:" in result.output and "Environment:" in result.output
    assert "AWS_PROFILE" in result.output
    if command in ("plan", "deploy", "destroy"):
        assert "FASTSCALE_TERRAFORM" in result.output and "--terraform-bin" in result.output


def test_plan_help_documents_the_detailed_exit_codes_like_terraform():
    text = run("plan", "--help").output
    assert "2  success, changes present" in text and "0  success, no changes" in text


def test_the_default_synthesize_writes_the_real_stack(tmp_path):
    result = Runtime.default().synthesize(resolve(single_model_config()), str(tmp_path / "out"))
    document = json.loads((Path(result.stack_dir) / "cdk.tf.json").read_text())
    assert Path(result.stack_dir) == tmp_path / "out" / "stacks" / "demo"
    assert "aws_sagemaker_endpoint" in document["resource"]


# --------------------------------------------------------------------------------------------- progress


def _reporter(terminal: bool):
    from io import StringIO

    from rich.console import Console

    buffer = StringIO()
    console = Console(file=buffer, force_terminal=terminal, width=200, highlight=False)
    return Reporter(console=console), buffer


def test_progress_names_resources_in_flight_and_prints_heartbeats_only_without_a_terminal():
    from fastscale.infra.aws.waiters import Progress
    from fastscale.infra.terraform.runner import TerraformEvent

    start = TerraformEvent("apply_start", "aws_sagemaker_endpoint.chat: Creating...", "aws_sagemaker_endpoint.chat", "create")
    still = TerraformEvent("apply_progress", "aws_sagemaker_endpoint.chat: Still creating... [10s elapsed]",
                           "aws_sagemaker_endpoint.chat", "create", 10.0)
    waits = [Progress("endpoint demo-chat to be InService", "Creating", t, 3600) for t in (0, 15, 30, 75)]

    for terminal in (False, True):
        reporter, buffer = _reporter(terminal)
        reporter.operation = "apply"
        with reporter:
            reporter.terraform_event(start)
            assert "aws_sagemaker_endpoint.chat (creating" in reporter._terraform_status()
            reporter.terraform_event(still)
            for w in waits:
                reporter.wait_progress(w)
        text = buffer.getvalue()
        assert "aws_sagemaker_endpoint.chat: Creating..." in text
        lines = [line for line in text.splitlines() if "endpoint demo-chat to be InService: Creating" in line]
        if terminal:
            # The spinner ("waiting for ...") shows the clock and Terraform's heartbeat; lines are printed
            # only for what changed.
            assert "Still creating" not in text
            assert len([line for line in lines if "waiting for" not in line]) == 1
        else:
            assert "Still creating... [10s elapsed]" in text
            # A line for the first observation and one a minute later, none for the polls in between.
            assert [line.strip() for line in lines] == [
                "endpoint demo-chat to be InService: Creating (0s of 3600s)",
                "endpoint demo-chat to be InService: Creating (75s of 3600s)",
            ]


def test_progress_json_lines_carry_terraform_events_and_waits(capsys):
    from fastscale.infra.aws.waiters import Progress
    from fastscale.infra.terraform.runner import TerraformEvent

    reporter = Reporter(as_json=True)
    reporter.operation = "apply"
    reporter.step("apply")
    reporter.terraform_event(TerraformEvent("apply_complete", "x: Creation complete", "x", "create", 3.0))
    reporter.wait_progress(Progress("endpoint e to be InService", "Creating", 12.34, 60))
    events = json_lines(capsys.readouterr().err)
    assert events == [
        {"event": "step", "step": "apply", "detail": ""},
        {"event": "terraform", "operation": "apply", "kind": "apply_complete", "message": "x: Creation complete",
         "address": "x", "action": "create", "elapsed": 3.0, "level": "info"},
        {"event": "wait", "what": "endpoint e to be InService", "state": "Creating", "elapsed": 12.3, "timeout": 60},
    ]
