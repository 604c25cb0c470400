"""A hostile repository, not only a hostile config: files a pull request commits into the stack directory
(``cdktf.out/stacks/<stack>/``), run through `plan`, `deploy` and `destroy` with the real terraform binary and the
real hashicorp/aws provider against fastscale's emulator.

Each file is one Terraform would act on if it ran in the stack directory: a configuration file whose
``local-exec`` provisioner writes a marker, an output of ``file("/proc/self/environ")`` (the job's environment,
here holding a canary secret), an ``*_override.tf.json`` replacing the endpoint's ownership tag, ``*.auto.tfvars.json``
and ``terraform.tfvars``, a provider binary in ``terraform.d/plugins`` (Terraform's implicit local mirror in its
working directory), and a ``.terraform/`` holding a provider binary with a ``.terraform.lock.hcl`` that trusts it
(Terraform then reuses it as "previously installed"). Each planted binary writes a marker when started.

Two guards, each tested on its own:

- configuration, overrides, variables, plugins and CLI configuration are refused: every command exits 2 naming
  each file, before Terraform or AWS is reached;
- Terraform runs in a directory of the run's own: with the refusal switched off (as if it missed a kind of file)
  plan, deploy and destroy succeed, and none of the files is read: no marker, no canary in any output, the
  override and the variables did not take. ``.terraform/`` and the lock file are never refused (earlier releases
  and `cdktf deploy` write them there) and are covered by this guard alone.

Terraform finds hashicorp/aws in ``~/.terraform.d/plugins`` (a HOME of the test's own), with a CLI configuration
that has no ``provider_installation`` block, so that it would also look in ``terraform.d/plugins`` of the directory
it runs in. One emulator, one provider setup and one deploy for the module.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import fastscale.infra.terraform.workdir as workdir
from fastscale.cli.main import cli
from tests.e2e.emulator_support import BINARY, FOUND, MARKS, REGION, aws, fastscale, fresh_emulator
from tests.tf_mirror import AWS_PROVIDER

pytestmark = MARKS

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0"
CANARY_VARIABLE = "FASTSCALE_HOSTILE_CANARY"
#: What the planted files are called, and what every refusal must name.
REFUSED = {
    "zz_extra.tf.json": "configuration",
    "zz_leak.tf.json": "configuration",
    "main_override.tf.json": "override",
    "zz-planted.auto.tfvars.json": "variables",
    "terraform.tfvars": "variables",
    "terraform.d": "provider plugins",
    ".terraformrc": "CLI configuration",
}


@pytest.fixture(scope="module")
def emulator():
    with fresh_emulator() as url:
        yield url


@dataclass
class Setup:
    home: Path  # HOME, with hashicorp/aws in ~/.terraform.d/plugins
    cli_config: Path  # no provider_installation block: Terraform's implicit local mirrors apply
    version: str
    platform: str
    canary: str = field(default_factory=lambda: f"canary-{uuid.uuid4().hex}")

    def env(self) -> dict[str, str]:
        """A user's shell with no AWS setup (fastscale brings the emulator's dummy credentials) and a secret."""
        return {**{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TF_", "FASTSCALE_"))},
                "HOME": str(self.home), "TF_CLI_CONFIG_FILE": str(self.cli_config), "FASTSCALE_TERRAFORM": str(BINARY),
                CANARY_VARIABLE: self.canary}


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> Setup:
    assert FOUND is not None
    mirror, version = FOUND
    home = tmp_path_factory.mktemp("home")
    plugins = home / ".terraform.d" / "plugins" / AWS_PROVIDER / version
    plugins.mkdir(parents=True)
    [package] = [p for p in (mirror / AWS_PROVIDER / version).iterdir() if p.is_dir()]
    (plugins / package.name).symlink_to(package)
    cli_config = home / "terraformrc"
    cli_config.write_text("")
    return Setup(home, cli_config, version, package.name)


def write_project(root: Path, project: str, emulator: str, version: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    config = {
        "project": project, "region": REGION, "endpoint_url": emulator, "providers": {"aws": f"= {version}"},
        "dashboard": {"enabled": False},
        "endpoints": [{"name": "chat", "instance_type": "ml.g4dn.xlarge",
                       "instances": {"initial": 1, "min": 1, "max": 2},
                       "alarms": {"enabled": False},
                       "model": {"image": IMAGE, "model_data": "s3://emu-models/small/", "model_size_gb": 2,
                                 "autoscaling": {"enabled": False}}}],
    }
    (root / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return root / "cdktf.out" / "stacks" / project


def fake_provider(root: Path, setup: Setup, marker: Path) -> Path:
    """A provider package of hashicorp/aws under ``root`` (a plugin directory's layout) whose binary only writes
    ``marker``."""
    package = root / AWS_PROVIDER / setup.version / setup.platform
    package.mkdir(parents=True)
    binary = package / f"terraform-provider-aws_v{setup.version}_x5"
    binary.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    binary.chmod(0o755)
    return root


def lock_file_trusting(mirror: Path, setup: Setup, scratch: Path) -> str:
    """A ``.terraform.lock.hcl`` that trusts the package in ``mirror``, written by terraform itself."""
    scratch.mkdir()
    (scratch / "main.tf.json").write_text(json.dumps(
        {"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": f"= {setup.version}"}}}}))
    done = subprocess.run([str(BINARY), "providers", "lock", "-no-color", f"-fs-mirror={mirror}",
                           f"-platform={setup.platform}"], cwd=scratch, env=setup.env(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return (scratch / ".terraform.lock.hcl").read_text()


def plant(stack_dir: Path, setup: Setup, markers: Path, document: dict | None) -> None:
    """Every file kind, as a pull request commits it. ``document`` (the synthesized stack) names the endpoint
    resource the override aims at."""
    stack_dir.mkdir(parents=True, exist_ok=True)
    endpoint = next(iter(document["resource"]["aws_sagemaker_endpoint"])) if document else "chat_endpoint"
    tags = dict(document["resource"]["aws_sagemaker_endpoint"][endpoint]["tags"]) if document else {}
    files: dict[str, object] = {
        "zz_extra.tf.json": {"resource": {"terraform_data": {"pwned": {
            "input": "x", "provisioner": [{"local-exec": {"command": f"touch '{markers / 'local-exec'}'"}}]}}}},
        "zz_leak.tf.json": {"output": {"leak": {"value": '${file("/proc/self/environ")}'}}},
        "main_override.tf.json": {"resource": {"aws_sagemaker_endpoint": {
            endpoint: {"tags": {**tags, "fastscale:stack": "someone-else"}}}}},
        "zz-planted.auto.tfvars.json": {"cutover_instances_chat": 2},
        "terraform.tfvars": 'planted_tfvars = "read"\n',
        ".terraformrc": 'plugin_cache_dir = "/nonexistent"\n',
    }
    for name, body in files.items():
        (stack_dir / name).write_text(body if isinstance(body, str) else json.dumps(body))
    fake_provider(stack_dir / "terraform.d" / "plugins", setup, markers / "terraform.d")
    fake_provider(stack_dir / ".terraform" / "providers", setup, markers / "dot-terraform")
    lock = lock_file_trusting(stack_dir / ".terraform" / "providers", setup, markers.parent / "lock-scratch")
    (stack_dir / ".terraform.lock.hcl").write_text(lock)


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


# --------------------------------------------------------------------------------------------- refused


def test_every_command_refuses_planted_terraform_files_naming_each(tmp_path, emulator, setup):
    project = tmp_path / "project"
    stack_dir = write_project(project, "refused", emulator, setup.version)
    markers = tmp_path / "markers"
    markers.mkdir()
    plant(stack_dir, setup, markers, None)
    before = listing(stack_dir)

    for args in (["synth"], ["plan"], ["deploy", "--auto-approve"], ["destroy", "--auto-approve"]):
        done = fastscale(project, setup.env(), args[0], "fastscale.yaml", *args[1:], "--json")
        assert done.returncode == 2, f"{args[0]}: {done.stdout}{done.stderr}"
        error = json.loads(done.stdout)["error"]
        for name, kind in REFUSED.items():
            assert f"{name} ({kind})" in error, f"{args[0]} did not name {name}"
        assert ".terraform " not in error and ".terraform.lock.hcl" not in error  # Terraform's own: not refused
        assert setup.canary not in done.stdout + done.stderr
    assert sorted(os.listdir(markers)) == [], "a planted file ran"
    assert listing(stack_dir) == before, "something was written into the stack directory"
    assert not (project / "terraform.refused.us-east-1.tfstate").exists()
    assert [e["EndpointName"] for e in aws(emulator, "sagemaker").list_endpoints()["Endpoints"]
            if e["EndpointName"].startswith("refused-")] == []


# --------------------------------------------------------------------------------------------- never read


@dataclass
class Attack:
    project: Path
    stack_dir: Path
    markers: Path
    planted: list[str]
    results: dict[str, object]  # command -> click Result
    tags: dict[str, str]  # the live endpoint's tags after the deploy
    initial_count: int | None  # the live endpoint configuration's InitialInstanceCount after the deploy
    left_after_destroy: list[str]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, emulator, setup) -> Attack:
    """plan, deploy, destroy of a stack directory holding every planted file, with the refusal switched off:
    only the run's own Terraform directory stands between the files and Terraform."""
    root = tmp_path_factory.mktemp("attacked")
    project = root / "project"
    stack_dir = write_project(project, "hostile", emulator, setup.version)
    markers = root / "markers"
    markers.mkdir()
    sm = aws(emulator, "sagemaker")
    results: dict[str, object] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        for name in [k for k in os.environ if k.startswith(("AWS_", "TF_", "FASTSCALE_"))]:
            mp.delenv(name)
        for name, value in setup.env().items():
            mp.setenv(name, value)

        def invoke(*args: str):
            return CliRunner().invoke(cli, [*args], catch_exceptions=False)

        synthesized = invoke("synth", "fastscale.yaml")
        assert synthesized.exit_code == 0, synthesized.output
        plant(stack_dir, setup, markers, json.loads((stack_dir / "cdk.tf.json").read_text()))
        planted = sorted(os.listdir(stack_dir))
        mp.setattr(workdir, "REFUSED_KINDS", frozenset())

        results["plan"] = invoke("plan", "fastscale.yaml", "--json")
        results["deploy"] = invoke("deploy", "fastscale.yaml", "--auto-approve", "--no-wait", "--json")
        live = live_endpoint(sm, "hostile-chat")
        results["destroy"] = invoke("destroy", "fastscale.yaml", "--auto-approve", "--json")
    left = [e["EndpointName"] for e in sm.list_endpoints()["Endpoints"] if e["EndpointName"].startswith("hostile-")]
    return Attack(project, stack_dir, markers, planted, results, *live, left)


def live_endpoint(sm, name: str) -> tuple[dict[str, str], int | None]:
    """The endpoint's tags and its configuration's InitialInstanceCount; nothing when it was not deployed."""
    try:
        endpoint = sm.describe_endpoint(EndpointName=name)
    except sm.exceptions.ClientError:
        return {}, None
    tags = {t["Key"]: t["Value"] for t in sm.list_tags(ResourceArn=endpoint["EndpointArn"])["Tags"]}
    config = sm.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"])
    return tags, config["ProductionVariants"][0]["InitialInstanceCount"]


def test_plan_deploy_and_destroy_succeed_beside_the_planted_files(attacked):
    for command, result in attacked.results.items():
        assert result.exit_code == 0, f"{command}: {result.output}"
        assert json.loads(result.stdout)["ok"] is True
    assert attacked.left_after_destroy == []
    # The state is where the config says (the project root), not in a run's directory that is gone.
    state = json.loads((attacked.project / "terraform.hostile.us-east-1.tfstate").read_text())
    assert state["resources"] == [] and state["serial"] > 1


def test_no_planted_code_ran(attacked):
    """Neither the provisioner, nor the provider in terraform.d/plugins, nor the one in .terraform/."""
    assert sorted(os.listdir(attacked.markers)) == []


def test_no_planted_output_and_no_secret_is_printed(attacked, setup):
    for command, result in attacked.results.items():
        assert setup.canary not in result.output, f"{command} printed the environment"
        assert "leak" not in json.loads(result.stdout).get("terraform", {}).get("outputs", {})
    deployed = json.loads(attacked.results["deploy"].stdout)
    assert set(deployed["terraform"]["outputs"]) == {"endpoint_chat"}
    assert deployed["terraform"]["outputs"]["endpoint_chat"]["endpoint_name"] == "hostile-chat"


def test_the_override_did_not_take(attacked):
    assert attacked.tags.get("fastscale:stack") == "hostile"


def test_the_planted_variables_did_not_take(attacked):
    assert attacked.initial_count == 1  # zz-planted.auto.tfvars.json said 2
    for result in attacked.results.values():
        assert "planted_tfvars" not in result.output  # terraform.tfvars: Terraform warns of an undeclared value


def test_the_stack_directory_is_left_as_planted(attacked):
    assert sorted(os.listdir(attacked.stack_dir)) == sorted([*attacked.planted, "fastscale.lock"])
    assert not any(name.startswith(workdir.RUN_PREFIX) for name in os.listdir(attacked.stack_dir))
