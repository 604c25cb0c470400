"""What the emulator end-to-end tests share: the provider mirror, a project's environment, fastscale as a
process, and boto3 clients of the emulator."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import boto3
import pytest

from tests.tf_mirror import cli_config, find_aws_mirror, where_looked

REGION = "us-east-1"
BINARY = shutil.which("terraform") or shutil.which("tofu")
STEP_TIMEOUT = 600  # seconds for one command: each provider start takes 3-20 s (the aws binary is large)
FOUND = find_aws_mirror()
MARKS = [
    pytest.mark.terraform,
    pytest.mark.skipif(BINARY is None, reason="needs terraform or tofu on PATH"),
    pytest.mark.skipif(FOUND is None, reason=f"no filesystem provider mirror with hashicorp/aws (looked in {where_looked()})"),
]


@contextmanager
def fresh_emulator() -> Iterator[str]:
    """fastscale's emulator on a free port, its URL, starting from an empty account: moto keeps its backends
    per process, so whatever an earlier test module left in them is reset first."""
    from fastscale.infra.project.emulator import Emulator

    with Emulator(port=0) as running:
        reset_moto(running.url)
        yield running.url


def reset_moto(url: str) -> None:
    """An empty account on the moto server at `url`: moto keeps its backends per process, so this clears
    whatever an earlier test module left in them."""
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=30).close()


def project_env(root: Path) -> dict[str, str]:
    """The environment of a user's shell with no AWS setup at all: no AWS_* variables (fastscale brings the
    emulator's dummy credentials itself), Terraform pointed at the offline provider mirror."""
    assert FOUND is not None and BINARY is not None
    rc = root / "terraformrc"
    rc.write_text(cli_config(FOUND[0]))
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TF_", "FASTSCALE_"))},
        "HOME": str(root),  # no ~/.aws of the machine running the tests
        "TF_CLI_CONFIG_FILE": str(rc),
        "FASTSCALE_TERRAFORM": BINARY,
    }


def command(*args: str) -> list[str]:
    """`fastscale ARGS` as a process of its own, run by this interpreter (so the tree under test)."""
    code = "import sys; from fastscale.cli.main import cli; sys.argv = ['fastscale', *sys.argv[1:]]; cli()"
    return [sys.executable, "-c", code, *args]


def fastscale(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command(*args), cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT)
    except subprocess.TimeoutExpired as exc:  # show where it stood instead of a bare timeout
        pytest.fail(f"fastscale {' '.join(args)} did not finish in {STEP_TIMEOUT} s:\n{exc.stdout}\n{exc.stderr}")


def aws(url: str, service: str):
    return boto3.client(service, region_name=REGION, endpoint_url=url, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def summary(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)


def state_resources(directory: Path, project: str = "demo") -> list[dict]:
    """The resources of the local state a project's deploys left in ``directory`` (``terraform.<project>.<region>.tfstate``)."""
    return json.loads((directory / f"terraform.{project}.{REGION}.tfstate").read_text())["resources"]
