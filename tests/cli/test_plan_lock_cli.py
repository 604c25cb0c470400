"""One run's plan is applied by that run only, and only after a yes: the stack's lock, the per-run plan
file, the prompts' defaults and the refusals that come before any prompt.

Terraform is the real binary on fixture stacks of ``terraform_data`` (offline); AWS is moto. A second run
at the same time is the real CLI in its own process (its own flock), started while the first one waits
at its prompt, so the order is fixed and the test is deterministic.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys

import pytest

from fastscale.infra.terraform.plan_session import LOCK_FILE, LockHolder, StackLock
from fastscale.infra.terraform.workdir import RUN_PREFIX
from tests.aws.factories import deploy_single_model
from tests.cli.support import (
    REAL_BINARY,
    FixtureSynth,
    fixture_addresses,
    json_lines,
    needs_binary,
    run,
    state_addresses,
    write_invalid,
)
from tests.rollout_support import as_sagemaker, replaced_endpoint_stack

pytestmark = needs_binary

BASIC = fixture_addresses("basic")


def stack_dir(project):
    return project / "cdktf.out" / "stacks" / "demo"


def plan_files(project) -> list:
    """Plan files anywhere in the stack directory (a run plans into its own directory there)."""
    return sorted(stack_dir(project).rglob("*.tfplan"))


def assert_lock_free(project) -> None:
    """Released cleanly: the file names nobody, and this process (where the run was) can take it again."""
    path = stack_dir(project) / LOCK_FILE
    assert path.read_text() == "", "a clean release empties the lock file"
    with StackLock.acquire(stack_dir(project), "test") as lock:
        assert lock.previous is None


def fastscale(project, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own (so with a lock of its own), in the project directory."""
    code = "from fastscale.cli.main import cli; cli()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=project, capture_output=True, text=True, timeout=120)


@pytest.fixture
def interactive(runtime, monkeypatch):
    runtime.use(is_interactive=lambda: True)


@pytest.fixture
def deployed(project, synth, aws):
    deploy_single_model(aws)
    result = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert result.exit_code == 0, result.output
    assert state_addresses(project) == BASIC


class CtrlCAtThePrompt(io.BytesIO):
    """Standard input on which the person presses Ctrl-C instead of answering."""

    def read(self, size=-1):
        if size == 0:
            return b""
        raise KeyboardInterrupt

    read1 = readline = read


# --------------------------------------------------------------------------------------------- the prompts


@pytest.mark.parametrize("answer", ["\n", ""], ids=["empty answer", "end of input"])
def test_no_answer_at_apply_these_changes_cancels_and_applies_nothing(project, synth, aws, interactive, answer):
    deploy_single_model(aws)
    result = run("deploy", "fastscale.yaml", input=answer)
    assert result.exit_code == 1, result.output
    assert "Apply these changes? [y/N]" in result.output  # No is the default, and says so
    assert "cancelled" in result.stderr and "nothing was changed" in result.stderr
    assert state_addresses(project) == set(), "nothing may be applied without a yes"
    # the clients of the name check and the live counts (built once); no verification of an apply that did not
    # happen
    assert aws["calls"] == ["demo"]
    assert plan_files(project) == []
    assert_lock_free(project)


@pytest.mark.parametrize("answer", ["\n", ""], ids=["empty answer", "end of input"])
def test_no_answer_at_destroy_these_resources_cancels_and_destroys_nothing(project, deployed, interactive, answer):
    result = run("destroy", "fastscale.yaml", input=answer)
    assert result.exit_code == 1, result.output
    assert "Destroy these resources? [y/N]" in result.output
    assert "cancelled" in result.stderr
    assert state_addresses(project) == BASIC, "nothing may be destroyed without a yes"
    assert plan_files(project) == []
    assert_lock_free(project)


def test_ctrl_c_at_the_prompt_is_an_interrupt_that_applies_nothing(project, synth, aws, interactive):
    deploy_single_model(aws)
    result = run("deploy", "fastscale.yaml", input=CtrlCAtThePrompt())
    assert result.exit_code == 130, result.output
    assert "Interrupted" in result.stderr and "Terraform was not running" in result.stderr
    assert state_addresses(project) == set() and plan_files(project) == []
    assert_lock_free(project)


@pytest.fixture
def sagemaker_plan(runtime, monkeypatch):
    real = runtime.runtime.plan_document
    runtime.use(plan_document=lambda runner, plan_file: as_sagemaker(real(runner, plan_file)))


def state_endpoint_name(project) -> str:
    from tests.cli.support import STATE_FILE

    doc = json.loads((project / STATE_FILE).read_text())
    [endpoint] = [r for r in doc["resources"] if r["name"] == "endpoint"]
    return endpoint["instances"][0]["attributes"]["input"]["value"]["name"]


def test_a_downtime_plan_is_refused_before_any_prompt(runtime, project, aws, monkeypatch, interactive, sagemaker_plan):
    deploy_single_model(aws)
    runtime.use(synthesize=FixtureSynth(replaced_endpoint_stack(1)))
    assert run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait").exit_code == 0
    runtime.use(synthesize=FixtureSynth(replaced_endpoint_stack(2)))

    # Someone ready to say yes is never asked: the refusal comes first, with the documented exit code 2.
    refused = run("deploy", "fastscale.yaml", input="y\n")
    assert refused.exit_code == 2, refused.output
    assert "Apply these changes?" not in refused.output
    assert "Nothing was applied" in refused.stderr and "--allow-downtime" in refused.stderr
    assert state_endpoint_name(project) == "demo-chat"
    assert plan_files(project) == []
    assert_lock_free(project)


# --------------------------------------------------------------------------------------------- the plan file


def test_a_plan_file_changed_after_it_was_shown_is_not_applied(runtime, project, deployed, monkeypatch, interactive):
    """The old failure: another run's destroy plan in place of the deploy's. It must never be applied."""
    changed = {"resource": {"terraform_data": {"model": {"input": "model-v2"}, "endpoint_config": {"input": "config-v1"},
                                               "endpoint": {"input": "${terraform_data.endpoint_config.output}"}}}}
    runtime.use(synthesize=FixtureSynth(changed))
    shown = []
    real = runtime.runtime.plan_document

    def show_then_swap(runner, plan_file):
        document = real(runner, plan_file)
        shown.append((plan_file, oct(plan_file.stat().st_mode & 0o777)))
        swap = subprocess.run([REAL_BINARY, "plan", "-destroy", "-input=false", f"-out={plan_file}"],
                              cwd=runner.workdir, capture_output=True, text=True)
        assert swap.returncode == 0, swap.stderr
        return document

    runtime.use(plan_document=show_then_swap)
    result = run("deploy", "fastscale.yaml", input="y\n")
    assert result.exit_code == 1, result.output
    assert "Plan: 0 to add, 1 to change, 0 to destroy." in result.stdout  # what was shown and agreed to
    assert "changed" in result.stderr and "after it was shown" in result.stderr and "Nothing was applied" in result.stderr
    assert state_addresses(project) == BASIC, "the swapped-in destroy plan must not run"
    [(plan_file, mode)] = shown
    # In the run's own Terraform directory inside the stack directory, removed with it when the run ends.
    assert plan_file.parent.parent == stack_dir(project).resolve() and plan_file.name.startswith("fastscale-")
    assert plan_file.parent.name.startswith(RUN_PREFIX)
    assert mode == "0o600"
    assert not plan_file.exists() and not plan_file.parent.exists() and plan_files(project) == []
    assert_lock_free(project)


# --------------------------------------------------------------------------------------------- the lock


@pytest.mark.parametrize("command", [["deploy", "--auto-approve"], ["destroy", "--auto-approve"], ["plan"]])
def test_a_run_on_a_locked_stack_exits_1_naming_the_holder_and_does_nothing(runtime, project, synth, monkeypatch, command):
    runtime.use(aws_clients=lambda config: pytest.fail("nothing may be asked of AWS"))
    runtime.use(quota_clients=lambda config: pytest.fail("nothing may be asked of AWS"))
    with StackLock.acquire(stack_dir(project), "deploy") as held:
        result = run(command[0], "fastscale.yaml", *command[1:])
        assert result.exit_code == 1, result.output
        since = held.holder.started_at
        assert f"in use by fastscale deploy (pid {os.getpid()} on {socket.gethostname()}, since {since})" in result.stderr
        assert "Traceback" not in result.output
        assert synth.calls == [] and plan_files(project) == []
        assert "checking what is left" not in result.output  # destroy: no proof while another run changes the stack

        as_json = run(command[0], "fastscale.yaml", *command[1:], "--json")
        assert as_json.exit_code == 1
        summary = json.loads(as_json.stdout)
        assert summary["ok"] is False and summary["exit_code"] == 1
        assert summary["locked_by"] == held.holder.to_dict()
        assert json.loads((stack_dir(project) / LOCK_FILE).read_text()) == held.holder.to_dict(), "left as it was"


def test_the_lock_of_a_run_that_died_is_taken_over_with_a_notice(project, synth, aws):
    dead = LockHolder(command="destroy", pid=2**22 + 17, host=socket.gethostname(), started_at="2025-01-02T03:04:05Z")
    stack_dir(project).mkdir(parents=True)
    (stack_dir(project) / LOCK_FILE).write_text(json.dumps(dead.to_dict()))  # nobody holds it: its run is gone
    left = stack_dir(project) / "fastscale-dead.tfplan"
    left.write_text("a plan that run never applied")

    deploy_single_model(aws)
    result = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert result.exit_code == 0, result.output
    assert f"took over the lock of fastscale destroy (pid {dead.pid} on {dead.host}, since 2025-01-02T03:04:05Z)" in \
        " ".join(result.stderr.split())
    assert "fastscale-dead.tfplan" in result.stderr and not left.exists()
    assert state_addresses(project) == BASIC
    assert_lock_free(project)

    (stack_dir(project) / LOCK_FILE).write_text(json.dumps(dead.to_dict()))
    as_json = run("plan", "fastscale.yaml", "--json")
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["lock_taken_over"] == dead.to_dict()
    [note] = [e for e in json_lines(as_json.stderr) if e["event"] == "note"]
    assert "took over the lock of fastscale destroy" in note["message"]


def stack_with_a_failing_apply(runtime):
    runtime.use(synthesize=FixtureSynth("failing"))


@pytest.mark.parametrize(
    ("args", "code", "setup"),
    [
        (["deploy", "--auto-approve", "--no-wait"], 0, None),
        (["deploy", "--auto-approve"], 1, stack_with_a_failing_apply),
        (["deploy", "--no-wait"], 1, "declined"),
        (["plan"], 0, None),
        (["destroy", "--auto-approve"], 0, None),
        (["destroy"], 1, "declined"),
    ],
    ids=["deploy applied", "apply failed", "deploy declined", "plan", "destroy", "destroy declined"],
)
def test_the_lock_is_released_on_every_way_a_run_ends(runtime, project, synth, aws, _moto, interactive, args, code,
                                                      setup):
    deploy_single_model(aws)
    if callable(setup):
        setup(runtime)
    if args[0] == "destroy":
        assert run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait").exit_code == 0
        _moto[0].reset()  # what the destroy will do to the account, so its proof finds nothing left
    result = run(args[0], "fastscale.yaml", *args[1:], input="n\n" if setup == "declined" else None)
    assert result.exit_code == code, result.output
    assert plan_files(project) == []
    assert_lock_free(project)


def test_a_config_with_errors_takes_no_lock(project, synth):
    result = run("deploy", write_invalid(project), "--auto-approve")
    assert result.exit_code == 2
    assert not (project / "cdktf.out").exists()


# --------------------------------------------------------------------------------------------- two runs at once


@pytest.mark.parametrize(
    ("first", "second", "question"),
    [
        ("deploy", "destroy", "Apply these changes?"),
        ("destroy", "deploy", "Destroy these resources?"),
    ],
)
def test_a_second_run_while_the_first_waits_at_its_prompt_is_refused_and_nothing_is_applied_twice(
    runtime, project, synth, aws, _moto, interactive, first, second, question
):
    deploy_single_model(aws)
    if first == "destroy":
        assert run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait").exit_code == 0
        _moto[0].reset()  # what the destroy will do to the account, so its proof finds nothing left
    before = state_addresses(project)
    during = {}
    original = runtime.runtime.confirm

    def second_run_while_waiting(asked):
        # The first run has shown its plan and waits for the answer: start the second one now.
        during["plans"] = plan_files(project)
        during["second"] = fastscale(project, second, "fastscale.yaml", "--auto-approve", "--json")
        during["plans after"] = plan_files(project)
        during["state"] = state_addresses(project)
        return original(asked)

    runtime.use(confirm=second_run_while_waiting)
    result = run(first, "fastscale.yaml", *(["--no-wait"] if first == "deploy" else []), input="y\n")
    assert question in result.output

    refused = during["second"]
    assert refused.returncode == 1, refused.stdout + refused.stderr
    summary = json.loads(refused.stdout)
    assert f"in use by fastscale {first} (pid {os.getpid()} on " in summary["error"]
    assert summary["locked_by"]["command"] == first and summary["locked_by"]["pid"] == os.getpid()
    assert during["state"] == before, "the second run changed nothing"
    assert len(during["plans"]) == 1 and during["plans after"] == during["plans"], "nor touched the first run's plan"

    # The first run applies its own plan, once.
    assert result.exit_code == 0, result.output
    assert state_addresses(project) == (BASIC if first == "deploy" else set())
    assert plan_files(project) == []
    assert_lock_free(project)


@pytest.mark.parametrize("command", ["plan", "deploy", "destroy"])
def test_help_says_the_stack_is_locked_and_a_second_run_exits_1(command):
    text = " ".join(run(command, "--help").output.split())
    assert "fastscale.lock" in text and "exits 1" in text
    assert "another run holds the stack's lock" in text  # in the exit codes
