"""The launcher mirror the suite installs hashicorp/aws from (tests/provider_launcher.py): it runs the provider it
was made from, with what Terraform passes it, and Terraform still checks it against the lock file."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import tests.venv_cache
from fastscale.stacks.testing.terraform import AWS_PROVIDER, MIRROR_ENV, cli_config, find_aws_mirror
from tests import provider_launcher
from tests.provider_launcher import launcher_mirror, use_launcher_mirror

EXE = "terraform-provider-aws_v9.9.9_x5"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A cache of the test's own: the suite's launcher mirror stays untouched."""
    monkeypatch.setattr(tests.venv_cache, "CACHE", tmp_path / "cache")
    return tmp_path / "cache"


def stand_in_mirror(root: Path, body: str = 'echo "args:$*"; echo "cookie:$TF_PLUGIN_MAGIC_COOKIE"; exit 7') -> Path:
    """A mirror with hashicorp/aws 9.9.9 for one platform: an executable that reports what it was given, and a
    licence file."""
    package = root / AWS_PROVIDER / "9.9.9" / "linux_amd64"
    package.mkdir(parents=True)
    (package / EXE).write_text(f"#!/bin/sh\n{body}\n")
    (package / EXE).chmod(0o755)
    (package / "LICENSE.txt").write_text("licence text\n")
    return root


def test_the_launcher_runs_the_executable_with_the_arguments_and_environment_it_is_given(tmp_path, cache):
    mirror = launcher_mirror(stand_in_mirror(tmp_path / "real"), "9.9.9")
    package = mirror / AWS_PROVIDER / "9.9.9" / "linux_amd64"
    assert mirror.is_relative_to(cache)
    assert sorted(p.name for p in package.iterdir()) == ["LICENSE.txt", EXE]
    assert (package / "LICENSE.txt").read_text() == "licence text\n"
    assert os.access(package / EXE, os.X_OK) and (package / EXE).stat().st_size < 200
    ran = subprocess.run([package / EXE, "a b", "c"], capture_output=True, text=True,
                         env={**os.environ, "TF_PLUGIN_MAGIC_COOKIE": "from-terraform"})
    assert (ran.returncode, ran.stdout) == (7, "args:a b c\ncookie:from-terraform\n")


def test_a_replaced_executable_gives_a_new_launcher_mirror_and_the_old_one_goes(tmp_path, cache):
    real = stand_in_mirror(tmp_path / "real")
    first = launcher_mirror(real, "9.9.9")
    assert launcher_mirror(real, "9.9.9") == first
    (real / AWS_PROVIDER / "9.9.9" / "linux_amd64" / EXE).write_text("#!/bin/sh\necho replaced, a longer file\n")
    second = launcher_mirror(real, "9.9.9")
    assert second != first and second.is_dir() and not first.exists()


def test_a_mirror_named_in_the_environment_is_used_as_it_is(tmp_path, cache, monkeypatch):
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "chosen"))
    assert use_launcher_mirror() == tmp_path / "chosen"
    assert os.environ[MIRROR_ENV] == str(tmp_path / "chosen") and not cache.exists()


def test_otherwise_the_found_mirror_is_replaced_by_its_launcher_mirror(tmp_path, cache, monkeypatch):
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    real = stand_in_mirror(tmp_path / "real")
    monkeypatch.setattr(provider_launcher, "find_aws_mirror", lambda: (real, "9.9.9"))
    chosen = use_launcher_mirror()
    assert chosen is not None and chosen.is_relative_to(cache) and os.environ[MIRROR_ENV] == str(chosen)
    assert (chosen / AWS_PROVIDER / "9.9.9" / "linux_amd64" / EXE).read_text() != (
        real / AWS_PROVIDER / "9.9.9" / "linux_amd64" / EXE).read_text()


FOUND = find_aws_mirror()
TERRAFORM = shutil.which("terraform")


@pytest.mark.terraform
@pytest.mark.skipif(FOUND is None or TERRAFORM is None, reason="needs terraform and a mirror with hashicorp/aws")
def test_terraform_installs_the_launcher_runs_the_provider_and_refuses_a_changed_one(tmp_path, cache):
    assert FOUND is not None and TERRAFORM is not None
    mirror = launcher_mirror(*FOUND)
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "terraformrc").write_text(cli_config(mirror))
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(tmp_path / "terraformrc"), "CHECKPOINT_DISABLE": "1",
           "TF_IN_AUTOMATION": "1", "TF_DATA_DIR": str(tmp_path / "data")}
    (work / "main.tf.json").write_text(json.dumps({"terraform": {"required_providers": {
        "aws": {"source": "hashicorp/aws", "version": FOUND[1]}}}}))

    def terraform(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([TERRAFORM, *args, "-no-color"], cwd=work, env=env, capture_output=True, text=True,
                              timeout=300)

    init = terraform("init", "-input=false")
    assert init.returncode == 0, init.stdout + init.stderr
    assert '"h1:' in (work / ".terraform.lock.hcl").read_text()
    # The provider itself answers (its schema names its resources), through the launcher.
    schema = terraform("providers", "schema", "-json")
    assert schema.returncode == 0, schema.stderr
    assert "aws_sagemaker_endpoint" in json.loads(schema.stdout)["provider_schemas"][AWS_PROVIDER]["resource_schemas"]
    # The lock file still holds: a launcher changed after init is refused (init linked the mirror's package).
    installed = next((mirror / AWS_PROVIDER / FOUND[1]).glob("*/terraform-provider-aws*"))
    installed.write_text(installed.read_text() + "# changed\n")
    refused = terraform("validate")
    assert refused.returncode != 0
    assert "does not match any of the checksums recorded in the dependency lock file" in " ".join(refused.stderr.split())
