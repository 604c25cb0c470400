"""The Terraform runner against the real binary, on stacks made only of Terraform's built-in
``terraform_data`` resource (no provider, no network)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from fastscale.infra.terraform import runner as tf
from fastscale.infra.terraform.runner import (
    TerraformError,
    TerraformFailed,
    TerraformNotFound,
    TerraformRunner,
    VersionInfo,
    find_binary,
    parse_plain_diagnostics,
)
from fastscale.infra.terraform.runner.commands import TERMINATE_GRACE

FIXTURES = Path(__file__).parent / "fixtures" / "tf_data"
REAL_BINARY = shutil.which("terraform") or shutil.which("tofu")

#: For a test that runs the real binary: marked `terraform`, which tests/conftest.py skips where neither terraform
#: nor tofu is on PATH (and which makes the test slow).
needs_binary = pytest.mark.terraform


@pytest.fixture
def tf_env(tmp_path: Path) -> dict[str, str]:
    """An empty CLI config and a private data dir, so the machine's ~/.terraformrc cannot interfere."""
    config = tmp_path / "terraformrc"
    config.write_text("")
    return {"TF_CLI_CONFIG_FILE": str(config), "TF_DATA_DIR": str(tmp_path / "tf-data-dir")}


def copy_stack(name: str, tmp_path: Path) -> Path:
    target = tmp_path / name
    shutil.copytree(FIXTURES / name, target)
    return target


def fixture_resources(stack: Path) -> dict[str, dict]:
    doc = json.loads((stack / "main.tf.json").read_text())
    return {f"terraform_data.{name}": body for name, body in doc["resource"]["terraform_data"].items()}


class Recorder(list):
    def __call__(self, event: tf.TerraformEvent) -> None:
        self.append(event)

    def addresses(self, kind: str) -> set[str]:
        return {e.address for e in self if e.kind == kind and e.address}


# -- find_binary ---------------------------------------------------------------------------------------


def _bin_dir(tmp_path: Path, *names: str) -> Path:
    """A PATH directory whose entries are links to the real binary under the given names."""
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for name in names:
        (d / name).symlink_to(REAL_BINARY)
    return d


@needs_binary
def test_find_binary_prefers_terraform_then_tofu_on_path(tmp_path, monkeypatch):
    monkeypatch.delenv(tf.ENV_VAR, raising=False)
    both = _bin_dir(tmp_path, "terraform", "tofu")
    monkeypatch.setenv("PATH", str(both))
    assert find_binary() == str(both / "terraform")

    (both / "terraform").unlink()
    assert find_binary() == str(both / "tofu")


@needs_binary
def test_find_binary_env_var_beats_path_and_explicit_beats_env(tmp_path, monkeypatch):
    on_path = _bin_dir(tmp_path, "terraform")
    monkeypatch.setenv("PATH", str(on_path))
    elsewhere = tmp_path / "opt" / "tofu"
    elsewhere.parent.mkdir()
    elsewhere.symlink_to(REAL_BINARY)
    explicit = tmp_path / "explicit-terraform"
    explicit.symlink_to(REAL_BINARY)

    monkeypatch.setenv(tf.ENV_VAR, str(elsewhere))
    assert find_binary() == str(elsewhere)
    assert find_binary(str(explicit)) == str(explicit)
    # A bare name given explicitly is looked up on PATH.
    assert find_binary("terraform") == str(on_path / "terraform")


def test_find_binary_missing_names_both_binaries_and_how_to_point_at_one(tmp_path, monkeypatch):
    monkeypatch.delenv(tf.ENV_VAR, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory
    with pytest.raises(TerraformNotFound) as info:
        find_binary()
    text = str(info.value)
    for needle in ("terraform", "tofu", "--terraform-bin", "FASTSCALE_TERRAFORM"):
        assert needle in text
    assert isinstance(info.value, TerraformError)


def test_find_binary_explicit_or_env_that_does_not_exist_is_an_error_not_a_fallback(tmp_path, monkeypatch):
    if REAL_BINARY:
        monkeypatch.setenv("PATH", str(_bin_dir(tmp_path, "terraform")))
    monkeypatch.setenv(tf.ENV_VAR, str(tmp_path / "nope" / "terraform"))
    with pytest.raises(TerraformNotFound, match="FASTSCALE_TERRAFORM"):
        find_binary()
    with pytest.raises(TerraformNotFound, match="--terraform-bin 'no-such-terraform-binary'"):
        find_binary("no-such-terraform-binary")


def test_runner_rejects_a_directory_without_configuration(tmp_path):
    with pytest.raises(TerraformError, match="does not exist"):
        TerraformRunner("terraform", tmp_path / "cdktf.out" / "stacks" / "missing")
    with pytest.raises(TerraformError, match="no Terraform configuration"):
        TerraformRunner("terraform", tmp_path)


# -- lifecycle -----------------------------------------------------------------------------------------


@needs_binary
def test_init_apply_plan_destroy_lifecycle(tmp_path, tf_env):
    stack = copy_stack("basic", tmp_path)
    resources = fixture_resources(stack)
    events = Recorder()
    runner = TerraformRunner(REAL_BINARY, stack, env=tf_env, on_event=events)

    init = runner.init()
    assert init.ok, init.diagnostics
    assert init.operation == "init"

    events.clear()
    applied = runner.apply()
    assert applied.ok and applied.returncode == 0, applied.diagnostics
    assert (applied.added, applied.changed, applied.destroyed) == (len(resources), 0, 0)
    # state holds every value of the stack (environment included): owner-only, whatever the caller's umask
    assert stat.S_IMODE((stack / "terraform.tfstate").stat().st_mode) == 0o600
    assert events.addresses("apply_start") == set(resources)
    assert events.addresses("apply_complete") == set(resources)
    assert all(e.elapsed is not None for e in events if e.kind == "apply_complete")
    assert {e.action for e in events if e.kind == "apply_complete"} == {"create"}
    # Outputs carry values; the sensitive one is neither in the result nor in any event.
    assert applied.outputs == {"endpoint_name": resources["terraform_data.endpoint_config"]["input"]}
    assert not any("token-that-must-not-be-printed" in json.dumps(e.to_dict()) for e in events)

    unchanged = runner.plan(detailed_exitcode=True)
    assert unchanged.ok and unchanged.returncode == 0
    assert unchanged.has_changes is False
    assert (unchanged.added, unchanged.changed, unchanged.destroyed) == (0, 0, 0)

    # Change one input the way a re-synthesized stack would.
    doc = json.loads((stack / "main.tf.json").read_text())
    doc["resource"]["terraform_data"]["model"]["input"] = "model-v2"
    (stack / "main.tf.json").write_text(json.dumps(doc))
    events.clear()
    plan_file = tmp_path / "changes.tfplan"
    changed = runner.plan(detailed_exitcode=True, out=plan_file)
    assert changed.ok and changed.returncode == 2 and changed.has_changes
    assert plan_file.is_file() and stat.S_IMODE(plan_file.stat().st_mode) == 0o600
    # terraform_data updates `input` in place.
    assert (changed.added, changed.changed, changed.destroyed) == (0, 1, 0)
    assert {(e.address, e.action) for e in events if e.kind == "planned_change"} == {
        ("terraform_data.model", "update")
    }

    from_plan = runner.apply(plan_file=plan_file)
    assert from_plan.ok and (from_plan.added, from_plan.changed, from_plan.destroyed) == (0, 1, 0)
    assert runner.plan().returncode == 0

    events.clear()
    destroyed = runner.destroy()
    assert destroyed.ok, destroyed.diagnostics
    assert destroyed.destroyed == len(resources)
    assert {(e.address, e.action) for e in events if e.kind == "apply_complete"} == {
        (address, "delete") for address in resources
    }
    state = json.loads((stack / "terraform.tfstate").read_text())
    assert state["resources"] == []


@needs_binary
def test_child_runs_in_automation_mode_with_the_callers_env(tmp_path, tf_env, monkeypatch):
    monkeypatch.delenv("TF_IN_AUTOMATION", raising=False)
    events = Recorder()
    env = {**tf_env, "FASTSCALE_TEST_MARKER": "m-42"}
    runner = TerraformRunner(REAL_BINARY, copy_stack("env_echo", tmp_path), env=env, on_event=events)
    assert runner.apply().ok
    printed = [e.message for e in events if e.kind == "provision_progress"]
    assert any(m.endswith("automation=1 caller=m-42") for m in printed), printed


@needs_binary
def test_caller_env_reaches_the_child_and_stderr_warnings_become_diagnostics(tmp_path, tf_env):
    stack = copy_stack("basic", tmp_path)
    missing_config = tmp_path / "no-such-terraformrc"
    events = Recorder()
    env = {**tf_env, "TF_CLI_CONFIG_FILE": str(missing_config)}
    runner = TerraformRunner(REAL_BINARY, stack, env=env, on_event=events)
    result = runner.plan()
    assert result.ok
    [warning] = result.warnings
    assert warning.summary == "Unable to open CLI configuration file"
    assert str(missing_config) in warning.detail
    assert ("diagnostic", "warning") in {(e.kind, e.level) for e in events}


@needs_binary
def test_plan_without_detailed_exitcode_still_reports_changes(tmp_path, tf_env):
    stack = copy_stack("basic", tmp_path)
    result = TerraformRunner(REAL_BINARY, stack, env=tf_env).plan(detailed_exitcode=False)
    assert result.ok and result.returncode == 0
    assert result.has_changes and result.added == len(fixture_resources(stack))


@needs_binary
def test_apply_requires_approval_or_plan_file(tmp_path, tf_env):
    runner = TerraformRunner(REAL_BINARY, copy_stack("basic", tmp_path), env=tf_env)
    with pytest.raises(ValueError, match="plan file"):
        runner.apply(auto_approve=False)


# -- failures ------------------------------------------------------------------------------------------


@needs_binary
def test_failed_apply_reports_terraform_text_and_a_rerun_converges(tmp_path, tf_env):
    stack = copy_stack("failing", tmp_path)
    events = Recorder()
    runner = TerraformRunner(REAL_BINARY, stack, env=tf_env, on_event=events)
    assert runner.init().ok

    failed = runner.apply()
    assert not failed.ok and failed.returncode == 1
    [error] = failed.errors
    assert error.summary == "local-exec provisioner error"
    assert "provisioner-boom" in error.detail
    assert error.address == "terraform_data.broken"
    # The siblings were still created, and the result says so even without a final summary.
    assert events.addresses("apply_complete") == {"terraform_data.first", "terraform_data.third"}
    assert events.addresses("apply_errored") == {"terraform_data.broken"}
    assert failed.added == 2
    with pytest.raises(TerraformFailed) as info:
        failed.raise_for_status()
    assert "local-exec provisioner error" in str(info.value) and "provisioner-boom" in str(info.value)
    assert info.value.result is failed

    # Fix the input; Terraform's state knows what exists, so the re-run only finishes the job.
    (stack / "terraform.auto.tfvars.json").write_text(json.dumps({"broken": False}))
    events.clear()
    fixed = runner.apply().raise_for_status()
    assert fixed.ok
    assert events.addresses("apply_complete") == {"terraform_data.broken"}
    assert runner.plan(detailed_exitcode=True).returncode == 0


@needs_binary
def test_plan_of_invalid_configuration_is_not_ok_and_carries_the_diagnostic(tmp_path, tf_env):
    stack = copy_stack("basic", tmp_path)
    doc = json.loads((stack / "main.tf.json").read_text())
    doc["resource"]["terraform_data"]["model"] = {"inptu": "typo"}
    (stack / "main.tf.json").write_text(json.dumps(doc))
    result = TerraformRunner(REAL_BINARY, stack, env=tf_env).plan(detailed_exitcode=True)
    assert not result.ok and result.returncode == 1 and not result.has_changes
    assert any("inptu" in d.detail for d in result.errors)


@needs_binary
def test_init_failure_in_json_and_in_plain_mode(tmp_path, tf_env):
    stack = copy_stack("bad_module", tmp_path)
    json_mode = TerraformRunner(REAL_BINARY, stack, env=tf_env)
    from_json = json_mode.init()
    assert not from_json.ok
    assert "Unreadable module directory" in {d.summary for d in from_json.errors}

    # Binaries without `init -json` (OpenTofu, Terraform < 1.9) are driven in plain mode. The real
    # binary cannot pretend to be one, so only its version answer is replaced; the run itself is real.
    events = Recorder()
    plain_mode = TerraformRunner(REAL_BINARY, stack, env=tf_env, on_event=events)
    plain_mode._version = VersionInfo("tofu", (1, 8, 0))
    from_plain = plain_mode.init()
    assert not from_plain.ok
    assert [d.summary for d in from_plain.errors] == [d.summary for d in from_json.errors]
    assert "Initializing modules..." in [e.message for e in events if e.kind == "log"]
    assert "Unreadable module directory" in str(pytest.raises(TerraformFailed, from_plain.raise_for_status).value)


def test_plain_diagnostics_parse_boxed_and_unboxed_layouts():
    boxed = """
╷
│ Warning: Unable to open CLI configuration file
│
│ The CLI configuration file at "/x/.terraformrc" does not exist.
╵
╷
│ Error: Invalid reference
│
│   on main.tf line 3:
│   with aws_instance.web,
│
│ A reference to a resource type must be followed by an attribute.
╵
""".splitlines()
    warn, err = parse_plain_diagnostics(boxed)
    assert (warn.severity, warn.summary) == ("warning", "Unable to open CLI configuration file")
    assert warn.detail == 'The CLI configuration file at "/x/.terraformrc" does not exist.'
    assert (err.severity, err.summary, err.address) == ("error", "Invalid reference", "aws_instance.web")
    assert err.detail.endswith("must be followed by an attribute.")
    plain_progress = ["Initializing the backend...", "Terraform has been successfully initialized!"]
    assert parse_plain_diagnostics(plain_progress) == []


@needs_binary
def test_version_is_read_from_the_binary(tmp_path, tf_env):
    runner = TerraformRunner(REAL_BINARY, copy_stack("basic", tmp_path), env=tf_env)
    info = runner.version()
    env = {**os.environ, **tf_env}
    expected = subprocess.run([REAL_BINARY, "version", "-json"], capture_output=True, text=True, env=env)
    assert ".".join(map(str, info.version)) == json.loads(expected.stdout)["terraform_version"]
    assert info.product in ("terraform", "tofu")


def test_missing_binary_at_run_time_is_terraform_not_found(tmp_path):
    stack = copy_stack("basic", tmp_path)
    runner = TerraformRunner(str(tmp_path / "gone" / "terraform"), stack)
    with pytest.raises(TerraformNotFound, match="tofu"):
        runner.plan()


# -- Ctrl-C --------------------------------------------------------------------------------------------


def _group_gone_within(pgid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@needs_binary
def test_ctrl_c_is_forwarded_once_and_terraform_releases_state(tmp_path, tf_env, ctrl_c):
    stack = copy_stack("slow", tmp_path)
    groups: dict[str, int] = {}
    timers: list[threading.Timer] = []

    def on_event(event: tf.TerraformEvent) -> None:
        if event.kind == "provision_start" and event.address == "terraform_data.slow" and not timers:
            groups["child"] = os.getpgid(runner.last_pid)
            # Ctrl-C at the terminal: SIGINT to this process only (the child has its own group).
            timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
            timers.append(timer)
            timer.start()

    runner = TerraformRunner(REAL_BINARY, stack, env=tf_env, on_event=on_event)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        runner.apply()
    took = time.monotonic() - started
    timers[0].join()

    assert groups["child"] == runner.last_pid != os.getpgrp(), "child must lead its own process group"
    # Terraform and everything it started (the `sleep 60`) are gone, long before the sleep would end.
    # The provisioner's processes are reaped by init once Terraform is gone, so allow a moment for that.
    assert took < 30
    assert _group_gone_within(runner.last_pid, seconds=10)
    result = runner.last_result
    assert result is not None and result.interrupted and not result.ok
    # Terraform says it stopped: "execution halted", or, when the interrupt reached the provisioner's command
    # before Terraform stopped the walk, that command's error naming the signal (both seen under load).
    assert any(d.summary == "execution halted" or "signal: interrupt" in d.detail for d in result.errors), \
        result.diagnostics
    # State was written and unlocked: the resource that finished is recorded and a new plan runs.
    assert not (stack / ".terraform.tfstate.lock.info").exists()
    after = runner.plan(detailed_exitcode=True)
    assert after.ok and after.returncode == 2, after.diagnostics
    state = json.loads((stack / "terraform.tfstate").read_text())
    assert "fast" in {r["name"] for r in state["resources"]}


def test_a_child_that_ignores_the_interrupt_is_terminated_after_the_timeout(tmp_path, ctrl_c):
    # Terraform itself always honours SIGINT, so only a stand-in can show the escalation path.
    stubborn = tmp_path / "stubborn-terraform"
    stubborn.write_text(
        "#!/bin/sh\n"
        "trap '' INT\n"
        "echo '{\"type\": \"version\", \"@message\": \"stand-in\"}'\n"
        "exec sleep 30\n"
    )
    stubborn.chmod(0o755)
    stack = copy_stack("basic", tmp_path)

    def on_event(event: tf.TerraformEvent) -> None:
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT)).start()

    runner = TerraformRunner(str(stubborn), stack, on_event=on_event, interrupt_timeout=1.0)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        runner.apply()
    assert time.monotonic() - started < TERMINATE_GRACE
    assert runner.last_result is not None and runner.last_result.returncode == -signal.SIGTERM
    assert _group_gone_within(runner.last_pid, seconds=5)


@needs_binary
def test_a_failing_event_callback_stops_terraform_gracefully_and_propagates(tmp_path, tf_env):
    stack = copy_stack("slow", tmp_path)

    def on_event(event: tf.TerraformEvent) -> None:
        if event.kind == "provision_start":
            raise BrokenPipeError("progress display went away")

    runner = TerraformRunner(REAL_BINARY, stack, env=tf_env, on_event=on_event)
    with pytest.raises(BrokenPipeError):
        runner.apply()
    assert runner.last_result is not None and not runner.last_result.interrupted
    assert _group_gone_within(runner.last_pid, seconds=10)
    assert runner.plan().ok
