"""infra.terraform.workdir: what a stack directory may hold, and the private directory each run gives Terraform."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from fastscale.infra.model import cutover
from fastscale.infra.model.resolved import resolve
from fastscale.infra.terraform.outputs import STACK_FILE, OutputPathError
from fastscale.infra.terraform.plan_session import LOCK_FILE, StackLock, lock_stack
from fastscale.infra.terraform.runner import TerraformError, TerraformRunner
from fastscale.infra.terraform.workdir import (
    DATA_DIR,
    RUN_PREFIX,
    ForeignFile,
    ForeignFilesError,
    RunDirectory,
    defined_outputs,
    entry_kind,
    for_run_directory,
    foreign_files,
    refuse_foreign_files,
    remove_leftover_run_directories,
    terraform_leftovers,
)
from tests.aws.factories import single_model_config
from tests.cli.support import REAL_BINARY, needs_binary

#: The stack document of a project "demo": a local state three levels up (the project root), as synthesized.
STACK = {
    "terraform": {"backend": {"local": {"path": "../../../terraform.demo.us-east-1.tfstate"}}},
    "variable": {"cutover_instances_chat": {"type": "number", "default": 1}},
    "resource": {"terraform_data": {"endpoint": {"input": "${var.cutover_instances_chat}"}}},
    "output": {"endpoint_name": {"value": "${terraform_data.endpoint.output}"}},
}


def stack_dir_with(tmp_path, document=STACK):
    stack_dir = tmp_path / "cdktf.out" / "stacks" / "demo"
    stack_dir.mkdir(parents=True)
    (stack_dir / STACK_FILE).write_text(json.dumps(document))
    return stack_dir


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# --------------------------------------------------------------------------------------------- what is refused


@pytest.mark.parametrize(("name", "kind"), [
    ("zz_extra.tf.json", "configuration"),
    ("main.tf", "configuration"),
    ("EXTRA.TF.JSON", "configuration"),  # a case-insensitive file system opens it as extra.tf.json
    ("extra.tofu", "configuration"),
    ("extra.tofu.json", "configuration"),
    ("main_override.tf.json", "override"),
    ("override.tf", "override"),
    ("cdk_override.tofu.json", "override"),
    ("terraform.tfvars", "variables"),
    ("terraform.tfvars.json", "variables"),
    ("prod.auto.tfvars", "variables"),
    ("zz.auto.tfvars.json", "variables"),
    ("terraform.d", "provider plugins"),
    (".terraformrc", "CLI configuration"),
    ("terraform.rc", "CLI configuration"),
    (".terraform", "data directory"),
    (".terraform.lock.hcl", "lock file"),
])
def test_every_kind_of_entry_terraform_reads_in_its_working_directory_is_named(name, kind):
    assert entry_kind(name) == kind


@pytest.mark.parametrize("name", [
    "fastscale.lock", "fastscale-abc.tfplan", ".fastscale-run-abc", "metadata.json", "plan", "assets",
    "notes.tfvars.txt", "prod.tfvars",  # only loaded when named with -var-file, which fastscale never passes
])
def test_what_terraform_does_not_read_there_is_not_named(name):
    assert entry_kind(name) is None


def test_a_stack_directory_with_planted_files_is_refused_naming_each(tmp_path):
    stack_dir = stack_dir_with(tmp_path)
    for name in ("zz_extra.tf.json", "main_override.tf.json", "zz.auto.tfvars.json", "terraform.tfvars"):
        (stack_dir / name).write_text("{}")
    (stack_dir / "terraform.d" / "plugins").mkdir(parents=True)
    (stack_dir / "linked.tf").symlink_to(tmp_path / "elsewhere.tf")  # a dangling link counts too
    (stack_dir / ".terraform").mkdir()  # Terraform's own: not refused
    (stack_dir / cutover.TFVARS_FILE).write_text("{}")  # fastscale's own, from an earlier release

    with pytest.raises(ForeignFilesError) as refused:
        refuse_foreign_files(stack_dir)
    assert refused.value.exit_code == 2 and isinstance(refused.value, OutputPathError)
    message = str(refused.value)
    for named in ("linked.tf (configuration)", "main_override.tf.json (override)", "terraform.d (provider plugins)",
                  "terraform.tfvars (variables)", "zz.auto.tfvars.json (variables)", "zz_extra.tf.json (configuration)"):
        assert named in message
    assert "6 file(s)" in message and STACK_FILE + " there" in message and "Nothing was written or run" in message
    assert ".terraform " not in message and cutover.TFVARS_FILE not in message
    assert terraform_leftovers(stack_dir) == [ForeignFile(".terraform", "data directory")]


def test_a_clean_or_missing_stack_directory_is_not_refused(tmp_path):
    refuse_foreign_files(tmp_path / "nowhere")
    stack_dir = stack_dir_with(tmp_path)
    (stack_dir / LOCK_FILE).write_text("")
    (stack_dir / ".terraform.lock.hcl").write_text("")
    refuse_foreign_files(stack_dir)
    assert [f.name for f in foreign_files(stack_dir)] == [".terraform.lock.hcl"]


def test_lock_stack_refuses_planted_files_before_writing_anything(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stack_dir = stack_dir_with(tmp_path)
    (stack_dir / "zz_extra.tf.json").write_text("{}")
    before = sorted(os.listdir(stack_dir))
    with pytest.raises(ForeignFilesError, match="zz_extra.tf.json"):
        lock_stack(resolve(single_model_config()), tmp_path / "cdktf.out", "deploy")
    assert sorted(os.listdir(stack_dir)) == before  # no lock file either


# --------------------------------------------------------------------------------------------- the run directory


def test_a_run_directory_holds_only_the_stack_file_and_is_private(tmp_path):
    stack_dir = stack_dir_with(tmp_path)
    (stack_dir / ".terraform").mkdir()  # whatever else the stack directory holds stays out
    run = RunDirectory.create(stack_dir)
    try:
        assert run.path.parent == stack_dir.resolve() and run.path.name.startswith(RUN_PREFIX)
        assert run.path.is_absolute()
        assert mode(run.path) == 0o700
        assert os.listdir(run.path) == [STACK_FILE]
        assert mode(run.path / STACK_FILE) == 0o600
        assert run.env == {"TF_DATA_DIR": str(run.path / DATA_DIR)}
        assert run.document == STACK and run.variables == STACK["variable"]
        written = run.write(cutover.TFVARS_FILE, "{}")
        assert written.parent == run.path and mode(written) == 0o600
        assert RunDirectory.create(stack_dir).path != run.path  # each run its own
    finally:
        run.remove()
    assert not run.path.exists()
    run.remove()  # idempotent


def test_a_missing_or_broken_stack_file_makes_no_run_directory(tmp_path):
    stack_dir = stack_dir_with(tmp_path)
    (stack_dir / STACK_FILE).write_text("[]")
    with pytest.raises(TerraformError, match="not a JSON object"):
        RunDirectory.create(stack_dir)
    (stack_dir / STACK_FILE).unlink()
    with pytest.raises(TerraformError, match="synthesize the stack first"):
        RunDirectory.create(stack_dir)
    assert os.listdir(stack_dir) == []


@pytest.mark.parametrize("path", ["../../../terraform.demo.us-east-1.tfstate", "../../../state/prod.tfstate",
                                  "terraform.tfstate"])
def test_the_local_state_path_names_the_same_file_from_the_run_directory(tmp_path, path):
    stack_dir = tmp_path / "cdktf.out" / "stacks" / "demo"
    run_dir = stack_dir / ".fastscale-run-x"
    document = {"terraform": {"backend": {"local": {"path": path}}}, "resource": {}}
    local = for_run_directory(document)["terraform"]["backend"]["local"]
    assert os.path.normpath(run_dir / local["path"]) == os.path.normpath(stack_dir / path)
    assert os.path.normpath(run_dir / local["workspace_dir"]) == os.path.normpath(stack_dir / "terraform.tfstate.d")
    assert document["terraform"]["backend"]["local"] == {"path": path}  # the input is left as it was


def test_other_backends_and_absolute_paths_are_left_as_written():
    s3 = {"terraform": {"backend": {"s3": {"bucket": "b", "key": "k"}}}}
    assert for_run_directory(s3) == s3
    absolute = {"terraform": {"backend": {"local": {"path": "/srv/state/demo.tfstate", "workspace_dir": "/srv/ws"}}}}
    assert for_run_directory(absolute) == absolute
    assert for_run_directory({"resource": {}}) == {"resource": {}}
    # A local backend without a path: Terraform's default, in the stack directory as before.
    assert for_run_directory({"terraform": {"backend": {"local": {}}}})["terraform"]["backend"]["local"]["path"] == \
        "../terraform.tfstate"


EMULATOR = "http://127.0.0.1:4566"


def _emulated(endpoints, **more):
    return {"provider": {"aws": [{"region": "us-east-1", "access_key": "testing", "endpoints": endpoints, **more}]},
            "resource": {}}


def test_an_emulator_run_leaves_out_the_provider_endpoints_its_environment_names():
    document = _emulated([{"sagemaker": EMULATOR, "iam": EMULATOR, "sts": EMULATOR}], max_retries=2)
    run_copy = for_run_directory(document, EMULATOR)
    assert run_copy["provider"]["aws"] == [{"region": "us-east-1", "access_key": "testing", "max_retries": 2}]
    assert document["provider"]["aws"][0]["endpoints"] == [{"sagemaker": EMULATOR, "iam": EMULATOR, "sts": EMULATOR}]
    # the same for a block written as an object rather than a list
    single = {"provider": {"aws": {"region": "us-east-1", "endpoints": {"sagemaker": EMULATOR}}}}
    assert for_run_directory(single, EMULATOR)["provider"]["aws"] == {"region": "us-east-1"}


@pytest.mark.parametrize("endpoints", [
    [{"sagemaker": EMULATOR, "iam": "http://127.0.0.1:9999"}],  # one service elsewhere
    [{"sagemaker": "http://localhost:4566"}],  # another spelling is another URL
    ["http://127.0.0.1:4566"],  # not the provider's shape: left for Terraform to judge
])
def test_endpoints_naming_anything_but_the_runs_url_are_kept(endpoints):
    document = _emulated(endpoints)
    assert for_run_directory(document, EMULATOR) == document


def test_without_an_emulator_the_provider_is_left_as_written():
    document = _emulated([{"sagemaker": EMULATOR}])
    assert for_run_directory(document) == document
    assert for_run_directory(document, None) == document


def test_the_run_directory_of_an_emulator_run_holds_the_stack_without_the_endpoints(tmp_path):
    stack_dir = tmp_path / "cdktf.out" / "stacks" / "demo"
    stack_dir.mkdir(parents=True)
    (stack_dir / STACK_FILE).write_text(json.dumps(_emulated([{"sagemaker": EMULATOR}])))
    run = RunDirectory.create(stack_dir, endpoint_url=EMULATOR)
    written = json.loads((run.path / STACK_FILE).read_text())
    assert "endpoints" not in written["provider"]["aws"][0]
    assert run.document["provider"]["aws"][0]["endpoints"] == [{"sagemaker": EMULATOR}]  # as synthesized
    assert json.loads((stack_dir / STACK_FILE).read_text()) == run.document  # the stack directory's file unchanged
    run.remove()


def test_only_the_outputs_the_stack_defines_are_known():
    assert defined_outputs(STACK) == {"endpoint_name"}
    assert defined_outputs({"output": []}) == frozenset()


@needs_binary
def test_terraform_in_a_run_directory_keeps_its_data_there_and_the_state_where_the_config_says(tmp_path):
    stack_dir = stack_dir_with(tmp_path)
    run = RunDirectory.create(stack_dir)
    run.write(cutover.TFVARS_FILE, json.dumps({"cutover_instances_chat": 3}))
    env = {**run.env, "TF_CLI_CONFIG_FILE": str(tmp_path / "terraformrc")}
    (tmp_path / "terraformrc").write_text("")
    runner = TerraformRunner(REAL_BINARY, run.path, env=env)
    assert runner.init().ok
    applied = runner.apply()
    assert applied.ok, applied.diagnostics
    assert applied.outputs == {"endpoint_name": 3}  # the variables file in the run directory was read
    state = json.loads((tmp_path / "terraform.demo.us-east-1.tfstate").read_text())  # the project root, as before
    assert [r["name"] for r in state["resources"]] == ["endpoint"]
    assert (run.path / DATA_DIR).is_dir() and not (stack_dir / DATA_DIR).exists()
    run.remove()
    assert sorted(os.listdir(stack_dir)) == [STACK_FILE]


# --------------------------------------------------------------------------------------------- under the stack's lock


def test_the_lock_holder_plans_in_its_run_directory_and_removes_it_on_release(tmp_path):
    stack_dir = stack_dir_with(tmp_path)
    with StackLock.acquire(stack_dir, "deploy") as lock:
        run = lock.open_run_directory()
        assert lock.open_run_directory() is run
        plan = lock.new_plan()
        assert plan.path.parent == run.path
    assert not run.path.exists() and lock.run_directory is None


def test_run_directories_a_dead_run_left_are_removed_by_the_next_holder_links_unfollowed(tmp_path):
    stack_dir = stack_dir_with(tmp_path)
    left = stack_dir / f"{RUN_PREFIX}dead"
    (left / DATA_DIR).mkdir(parents=True)
    (left / "fastscale-x.tfplan").write_text("a plan that run never applied")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the stack's")
    (left / "link").symlink_to(outside)
    (stack_dir / f"{RUN_PREFIX}linked").symlink_to(outside)
    with StackLock.acquire(stack_dir, "plan") as lock:
        assert [p.name for p in lock.removed_run_directories] == [f"{RUN_PREFIX}dead", f"{RUN_PREFIX}linked"]
    assert not os.path.lexists(left) and not os.path.lexists(stack_dir / f"{RUN_PREFIX}linked")
    assert (outside / "keep.txt").read_text() == "not the stack's"
    assert remove_leftover_run_directories(tmp_path / "nowhere") == []


# --------------------------------------------------------------------------------------------- synthesis and cdktf


def test_synthesis_refuses_planted_files_writes_nothing_and_names_terraform_leftovers(tmp_path, monkeypatch):
    from fastscale.stacks.app import synthesize

    monkeypatch.chdir(tmp_path)
    stack_dir = tmp_path / "cdktf.out" / "stacks" / "demo"
    stack_dir.mkdir(parents=True)
    (stack_dir / "main_override.tf.json").write_text("{}")
    with pytest.raises(ForeignFilesError, match=r"main_override\.tf\.json \(override\)"):
        synthesize(resolve(single_model_config()), "cdktf.out")
    assert os.listdir(stack_dir) == ["main_override.tf.json"]

    (stack_dir / "main_override.tf.json").unlink()
    (stack_dir / ".terraform.lock.hcl").write_text("")
    (stack_dir / cutover.TFVARS_FILE).write_text('{"cutover_instances_chat": 4}')  # an earlier release's
    result = synthesize(resolve(single_model_config()), "cdktf.out")
    assert result.terraform_leftovers == [".terraform.lock.hcl"]
    assert sorted(os.listdir(stack_dir)) == [".terraform.lock.hcl", STACK_FILE]


def test_the_cdktf_app_refuses_planted_files_before_the_engine_loads(tmp_path):
    from fastscale.stacks.app import build_app

    stack_dir = tmp_path / "cdktf.out" / "stacks" / "demo"
    stack_dir.mkdir(parents=True)
    (stack_dir / "zz_extra.tf.json").write_text("{}")
    with pytest.raises(ForeignFilesError, match="zz_extra.tf.json"):
        build_app(resolve(single_model_config()), tmp_path / "cdktf.out", project_root=tmp_path)


@pytest.mark.parametrize("main_py", ["repository", "init"])
def test_main_py_exits_2_on_planted_files_with_one_error_line(tmp_path, main_py):
    """`cdktf synth` and `cdktf deploy` run main.py (this repository's, or the one `fastscale init` writes)."""
    if main_py == "init":
        from click.testing import CliRunner

        from fastscale.cli.main import cli

        project = tmp_path / "proj"
        assert CliRunner().invoke(cli, ["init", str(project), "--project", "demo"]).exit_code == 0
        main, env = project / "main.py", {}
    else:
        project = tmp_path
        config = tmp_path / "fastscale.yaml"
        config.write_text(json.dumps(single_model_config().model_dump(mode="json", exclude_defaults=True)))
        main = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "main.py")
        env = {"FASTSCALE_CONFIG": str(config)}
    stack_dir = project / "cdktf.out" / "stacks" / "demo"
    stack_dir.mkdir(parents=True)
    (stack_dir / "zz_extra.tf.json").write_text("{}")
    done = subprocess.run([sys.executable, str(main)], cwd=project, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env, "CDKTF_OUTDIR": "cdktf.out"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: the stack directory") and "zz_extra.tf.json (configuration)" in done.stderr
    assert "Traceback" not in done.stderr
    assert os.listdir(stack_dir) == ["zz_extra.tf.json"]
