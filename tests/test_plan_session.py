"""infra.terraform.plan_session: the per-stack lock (real flock, real processes) and the per-run saved plan."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap

import pytest

from fastscale.infra.model.resolved import resolve
from fastscale.infra.terraform.outputs import OutputPathError
from fastscale.infra.terraform.plan_session import (
    LEGACY_PLAN_FILE,
    LOCK_FILE,
    LockHolder,
    PlanChanged,
    StackLock,
    StackLocked,
    lock_stack,
)
from tests.aws.factories import single_model_config

HOLDER = textwrap.dedent("""
    import sys, time
    from fastscale.infra.terraform.plan_session import StackLock
    lock = StackLock.acquire(sys.argv[1], sys.argv[2])
    lock.new_plan()  # a plan file this run leaves behind if it dies
    print("locked", flush=True)
    time.sleep(120)
""")


def holder_process(stack_dir, command: str) -> subprocess.Popen[str]:
    """Another process holding the lock of ``stack_dir`` (and one plan file there) until it is killed."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(stack_dir), command], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_lock_file_names_its_holder_and_is_owner_only(tmp_path):
    stack_dir = tmp_path / "out" / "stacks" / "demo"
    with StackLock.acquire(stack_dir, "deploy") as lock:
        assert lock.path == stack_dir / LOCK_FILE
        assert mode(lock.path) == 0o600 and mode(stack_dir) == 0o700
        doc = json.loads(lock.path.read_text())
        assert doc["command"] == "deploy" and doc["pid"] == os.getpid() and doc["host"] == socket.gethostname()
        assert doc["started_at"].endswith("Z") and "T" in doc["started_at"]
        assert lock.previous is None and lock.removed_plans == []
    # A clean release empties the file, so the next holder has no dead run to report.
    assert lock.path.read_text() == "" and not lock.held
    with StackLock.acquire(stack_dir, "plan") as again:
        assert again.previous is None


def test_a_second_holder_is_refused_naming_the_first_until_it_releases(tmp_path):
    first = StackLock.acquire(tmp_path, "deploy")
    # A second open of the file is a second lock, in this process as in any other.
    with pytest.raises(StackLocked) as refused:
        StackLock.acquire(tmp_path, "destroy")
    assert refused.value.holder == first.holder
    message = str(refused.value)
    assert f"fastscale deploy (pid {os.getpid()} on {socket.gethostname()}, since {first.holder.started_at})" in message
    assert str(tmp_path / LOCK_FILE) in message and "Nothing was synthesized, planned or applied" in message
    assert refused.value.exit_code == 1
    first.release()
    StackLock.acquire(tmp_path, "destroy").release()


def test_a_lock_held_by_another_process_is_refused_naming_that_process(tmp_path):
    proc = holder_process(tmp_path, "deploy")
    try:
        with pytest.raises(StackLocked) as refused:
            StackLock.acquire(tmp_path, "destroy")
        assert refused.value.holder is not None and refused.value.holder.pid == proc.pid
        assert f"fastscale deploy (pid {proc.pid} on " in str(refused.value)
    finally:
        proc.kill()
        proc.wait()


def test_the_lock_of_a_run_that_died_is_taken_over_and_its_plans_removed(tmp_path):
    proc = holder_process(tmp_path, "deploy")
    [left] = list(tmp_path.glob("fastscale-*.tfplan"))
    (tmp_path / LEGACY_PLAN_FILE).write_text("the plan file of an earlier release")
    os.kill(proc.pid, signal.SIGKILL)  # no chance to release: only the kernel does
    proc.wait()

    with StackLock.acquire(tmp_path, "destroy") as lock:
        assert lock.previous is not None and (lock.previous.command, lock.previous.pid) == ("deploy", proc.pid)
        assert sorted(lock.removed_plans) == sorted([left, tmp_path / LEGACY_PLAN_FILE])
        assert not left.exists() and not (tmp_path / LEGACY_PLAN_FILE).exists()
        assert json.loads(lock.path.read_text())["command"] == "destroy"


def test_a_lock_file_that_is_a_symlink_is_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    victim = tmp_path / "victim"
    stack_dir = tmp_path / "out" / "stacks" / "demo"
    stack_dir.mkdir(parents=True)
    (stack_dir / LOCK_FILE).symlink_to(victim)
    with pytest.raises(OutputPathError, match="symbolic link"):
        lock_stack(resolve(single_model_config()), tmp_path / "out", "deploy")
    assert not victim.exists()


def test_plans_are_unique_owner_only_files_and_only_made_under_the_lock(tmp_path):
    lock = StackLock.acquire(tmp_path, "deploy")
    one, two = lock.new_plan(), lock.new_plan()
    assert one.path != two.path and one.path.parent == tmp_path.resolve()
    assert one.path.name.startswith("fastscale-") and one.path.suffix == ".tfplan"
    assert mode(one.path) == 0o600
    with one:
        pass
    assert not one.path.exists() and two.path.exists(), "a plan is removed by its own run only"
    lock.release()
    with pytest.raises(RuntimeError):
        lock.new_plan()


def test_a_plan_changed_or_removed_after_it_was_shown_is_refused(tmp_path):
    with StackLock.acquire(tmp_path, "deploy") as lock:
        plan = lock.new_plan()
        plan.path.write_bytes(b"the plan Terraform wrote")
        digest = plan.seal()
        plan.verify()  # unchanged: fine
        assert len(digest) == 64

        plan.path.write_bytes(b"another run's plan")
        with pytest.raises(PlanChanged, match="changed") as changed:
            plan.verify()
        assert "Nothing was applied" in str(changed.value) and changed.value.exit_code == 1

        plan.path.write_bytes(b"the plan Terraform wrote")
        plan.verify()  # the same bytes again are the same plan
        plan.discard()
        with pytest.raises(PlanChanged, match="was removed"):
            plan.verify()
        with pytest.raises(PlanChanged, match="missing"):
            plan.seal()


def test_holder_text_that_is_not_a_holder_names_nobody():
    assert LockHolder.parse("") is None
    assert LockHolder.parse("{not json") is None
    assert LockHolder.parse(json.dumps({"command": "deploy"})) is None
    holder = LockHolder.this_process("plan")
    assert LockHolder.parse(json.dumps(holder.to_dict())) == holder
