"""`plan`, `deploy` and `destroy` run Terraform only on what fastscale wrote: files planted in the stack directory
are refused, and Terraform runs in a directory of the run's own, so a file the refusal missed is never read.

Terraform is real (fixture stacks of ``terraform_data``: no provider, offline); AWS is moto.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
import yaml

import fastscale.infra.terraform.workdir as workdir
from fastscale.infra.terraform.runner import TerraformRunner
from fastscale.infra.terraform.workdir import RUN_PREFIX
from tests.aws.factories import IMAGE, MOTO_INSTANCE_TYPE, REGION, deploy_single_model
from tests.cli.support import STATE_FILE, FixtureSynth, needs_binary, run, state_addresses, state_resources

COMMANDS = [["plan"], ["deploy", "--auto-approve", "--no-wait"], ["destroy", "--auto-approve"]]


def stack_dir(project: Path) -> Path:
    return project / "cdktf.out" / "stacks" / "demo"


def plant(project: Path, files: dict[str, object]) -> Path:
    """Commit ``files`` (name -> JSON document, or text) into the stack directory, as a pull request can."""
    where = stack_dir(project)
    where.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        (where / name).write_text(body if isinstance(body, str) else json.dumps(body))
    return where


def state_input(project: Path, name: str):
    doc = json.loads((project / STATE_FILE).read_text())
    [resource] = [r for r in doc["resources"] if r["name"] == name]
    return resource["instances"][0]["attributes"]["input"]["value"]


def run_directories(project: Path) -> list[str]:
    return sorted(p.name for p in stack_dir(project).glob(f"{RUN_PREFIX}*"))


@pytest.fixture
def canary(monkeypatch):
    """A secret in the environment fastscale and Terraform run in: it must never reach their output."""
    value = f"canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("FASTSCALE_TEST_SECRET", value)
    return value


def hostile_files(project: Path, marker: Path) -> dict[str, object]:
    """A pull request's additions to the stack directory: code, an output of the environment, an override of the
    stack's own resource, and variables."""
    return {
        "zz_extra.tf.json": {"resource": {"terraform_data": {"pwned": {
            "input": "x", "provisioner": [{"local-exec": {"command": f"touch {marker}"}}]}}}},
        "zz_leak.tf.json": {"output": {"leak": {"value": '${file("/proc/self/environ")}'}}},
        "main_override.tf.json": {"resource": {"terraform_data": {"model": {"input": "hijacked"}}}},
        "zz.auto.tfvars.json": {"planted_variable": "x"},
    }


# --------------------------------------------------------------------------------------------- refused


@needs_binary
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_planted_files_are_refused_with_exit_2_naming_each_before_anything_runs(runtime, project, synth, command,
                                                                               tmp_path):
    runtime.use(aws_clients=lambda config: pytest.fail("nothing may be asked of AWS"))
    runtime.use(quota_clients=lambda config: pytest.fail("nothing may be asked of AWS"))
    marker = tmp_path / "marker"
    plant(project, {**hostile_files(project, marker), "terraform.tfvars": 'planted = "x"\n'})

    result = run(command[0], "fastscale.yaml", *command[1:])
    assert result.exit_code == 2, result.output
    message = " ".join(result.stderr.split())
    for named in ("main_override.tf.json (override)", "terraform.tfvars (variables)", "zz.auto.tfvars.json (variables)",
                  "zz_extra.tf.json (configuration)", "zz_leak.tf.json (configuration)"):
        assert named in message
    assert "Traceback" not in result.output
    assert synth.calls == [] and not (project / STATE_FILE).exists() and not marker.exists()
    assert not (stack_dir(project) / "fastscale.lock").exists()

    as_json = run(command[0], "fastscale.yaml", *command[1:], "--json")
    assert as_json.exit_code == 2
    summary = json.loads(as_json.stdout)
    assert summary["exit_code"] == 2 and "zz_extra.tf.json (configuration)" in summary["error"]


# --------------------------------------------------------------------------------------------- never read


@needs_binary
def test_a_planted_file_the_refusal_missed_is_never_read_by_terraform(project, synth, aws, _moto, canary, tmp_path,
                                                                      monkeypatch):
    """As if the refusal did not know a kind of file: Terraform, in the run's own directory, still never sees it."""
    monkeypatch.setattr(workdir, "REFUSED_KINDS", frozenset())
    marker = tmp_path / "marker"
    plant(project, hostile_files(project, marker))
    deploy_single_model(aws)

    summaries = {}
    for command in (["plan"], ["deploy", "--auto-approve", "--no-wait"]):
        for as_json in (["--json"], []):
            result = run(command[0], "fastscale.yaml", *command[1:], *as_json)
            assert result.exit_code == 0, result.output
            assert canary not in result.output, f"{command}: the planted output printed the environment"
            assert "planted_variable" not in result.output, "Terraform read the planted variables"
            if as_json:
                summaries[command[0]] = json.loads(result.stdout)
    assert not marker.exists(), "the planted provisioner ran"
    assert state_addresses(project) == {"terraform_data.model", "terraform_data.endpoint_config",
                                        "terraform_data.endpoint"}
    assert state_input(project, "model") == "model-v1", "the planted override took"
    assert {c["address"] for c in summaries["plan"]["changes"]} == state_addresses(project)
    assert set(summaries["deploy"]["terraform"]["outputs"]) == {"endpoint_name"}

    _moto[0].reset()  # what Terraform's destroy does to the account
    destroyed = run("destroy", "fastscale.yaml", "--auto-approve")
    assert destroyed.exit_code == 0, destroyed.output
    assert canary not in destroyed.output and not marker.exists()
    assert state_addresses(project) == set()
    assert run_directories(project) == []


@needs_binary
def test_an_output_the_stack_does_not_define_is_never_reported(runtime, project, synth, aws, canary):
    """Whatever Terraform reports beyond the stack's own outputs (here: a file put into the run's directory behind
    fastscale's back) is dropped from stdout and --json."""

    def terraform(binary, workdir_path, *, env, on_event):
        (Path(workdir_path) / "extra.tf.json").write_text(json.dumps(
            {"output": {"extra": {"value": '${file("/proc/self/environ")}'}}}))
        return TerraformRunner(binary, workdir_path, env=env, on_event=on_event)

    runtime.use(terraform=terraform)
    deploy_single_model(aws)
    shown = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert shown.exit_code == 0, shown.output
    assert "endpoint_name = " in shown.stdout  # the stack's own outputs are shown
    assert "extra" not in shown.stdout and canary not in shown.output
    as_json = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait", "--json")
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)["terraform"]["outputs"].keys() == {"endpoint_name"}
    assert canary not in as_json.output


@needs_binary
def test_the_live_counts_reach_terraform_from_the_run_directory(runtime, project, aws, _moto):
    """The cut-over variables file is written into the run's own directory, and read there."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.sagemaker.models import sagemaker_backends

    stack = {"variable": {"cutover_instances_chat": {"type": "number", "default": 1}},
             "resource": {"terraform_data": {"endpoint": {"input": "${var.cutover_instances_chat}"}}}}
    runtime.use(synthesize=FixtureSynth(stack))
    deploy_single_model(aws)
    [variant] = sagemaker_backends[DEFAULT_ACCOUNT_ID][REGION].endpoints["demo-chat"].production_variants
    variant["CurrentInstanceCount"] = variant["DesiredInstanceCount"] = 3

    result = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["cutover"]["demo-chat"]["starts_at"] == 3
    assert state_input(project, "endpoint") == 3
    assert sorted(os.listdir(stack_dir(project))) == ["cdk.tf.json", "fastscale.lock"]


@needs_binary
def test_an_adopted_endpoint_cuts_over_at_its_own_live_count(runtime, project, aws, _moto):
    """The live count is read from the adopted endpoint (`legacy-llm`, variant `primary`), not `demo-chat`, and is
    what the replaced configuration starts with."""
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.sagemaker.models import sagemaker_backends

    config = yaml.safe_load((project / "fastscale.yaml").read_text())
    config["endpoints"][0]["adopted"] = {"endpoint": "legacy-llm", "variant": "primary"}
    (project / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    stack = {"variable": {"cutover_instances_chat": {"type": "number", "default": 1}},
             "resource": {"terraform_data": {"endpoint": {"input": "${var.cutover_instances_chat}"}}}}
    runtime.use(synthesize=FixtureSynth(stack))
    sm = aws["sagemaker"]
    sm.create_model(ModelName="legacy-model", ExecutionRoleArn=f"arn:aws:iam::{DEFAULT_ACCOUNT_ID}:role/legacy",
                    PrimaryContainer={"Image": IMAGE})
    sm.create_endpoint_config(EndpointConfigName="legacy-config", ProductionVariants=[
        {"VariantName": "primary", "ModelName": "legacy-model", "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}])
    sm.create_endpoint(EndpointName="legacy-llm", EndpointConfigName="legacy-config")
    [variant] = sagemaker_backends[DEFAULT_ACCOUNT_ID][REGION].endpoints["legacy-llm"].production_variants
    variant["CurrentInstanceCount"] = variant["DesiredInstanceCount"] = 3

    plans = []

    def plan_document(runner, plan_file):
        plans.append(runner.show_plan(plan_file))
        return plans[-1]

    runtime.use(plan_document=plan_document)

    result = run("plan", "fastscale.yaml", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["cutover"] == {"legacy-llm": {"live": 3, "initial": 1, "max": 4, "starts_at": 3}}
    [planned] = plans  # what Terraform itself planned with the variables file
    assert planned["variables"]["cutover_instances_chat"]["value"] == 3
    [change] = planned["resource_changes"]
    assert change["change"]["after"]["input"] == 3


@needs_binary
def test_terraform_leaves_nothing_in_the_stack_directory_and_never_uses_the_callers_data_dir(
        runtime, project, synth, aws, _moto, monkeypatch, tmp_path):
    callers = tmp_path / "callers-data-dir"
    monkeypatch.setenv("TF_DATA_DIR", str(callers))
    planted = plant(project, {})
    (planted / ".terraform").mkdir()
    (planted / ".terraform" / "environment").write_text("someone-elses-workspace")  # Terraform would select it
    (planted / ".terraform.lock.hcl").write_text("# not fastscale's\n")
    deploy_single_model(aws)

    for command in COMMANDS:
        if command[0] == "destroy":
            _moto[0].reset()  # what Terraform's destroy does to the account
        result = run(command[0], "fastscale.yaml", *command[1:])
        assert result.exit_code == 0, result.output
        assert run_directories(project) == [], f"{command[0]} left its Terraform directory"
        assert not callers.exists()
    assert (planted / ".terraform" / "environment").read_text() == "someone-elses-workspace"
    assert (planted / ".terraform.lock.hcl").read_text() == "# not fastscale's\n"
    assert os.listdir(planted / ".terraform") == ["environment"]

    runtime.use(synthesize=FixtureSynth("failing"))
    deploy_single_model(aws)
    failed = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert failed.exit_code == 1, failed.output
    assert run_directories(project) == [] and state_resources(project)


# --------------------------------------------------------------------------------------------- synth


def test_synth_refuses_planted_files_and_names_terraforms_leftovers(project):
    planted = plant(project, {"zz_extra.tf.json": {}})
    refused = run("synth", "fastscale.yaml")
    assert refused.exit_code == 2, refused.output
    assert "zz_extra.tf.json (configuration)" in " ".join(refused.stderr.split())
    assert os.listdir(planted) == ["zz_extra.tf.json"]

    (planted / "zz_extra.tf.json").unlink()
    (planted / ".terraform.lock.hcl").write_text("")
    written = run("synth", "fastscale.yaml")
    assert written.exit_code == 0, written.output
    notice = " ".join(written.stderr.split())
    assert ".terraform.lock.hcl (lock file)" in notice and "never read them" in notice
    assert json.loads(run("synth", "fastscale.yaml", "--json").stdout)["terraform_leftovers"] == [".terraform.lock.hcl"]


def test_synth_of_several_files_refuses_a_planted_file_in_any_before_writing_one(project):
    config = (project / "fastscale.yaml").read_text()
    (project / "other.yaml").write_text(config.replace("project: demo", "project: other"))
    planted = project / "out" / "other" / "stacks" / "other"
    planted.mkdir(parents=True)
    (planted / "terraform.tfvars").write_text("")
    refused = run("synth", "fastscale.yaml", "other.yaml", "--out", "out")
    assert refused.exit_code == 2, refused.output
    assert "terraform.tfvars (variables)" in " ".join(refused.stderr.split())
    assert sorted(os.listdir(project / "out")) == ["other"] and os.listdir(planted) == ["terraform.tfvars"]
