"""A project on fastscale's emulator (infra/project/emulator.py: moto's threaded server answering as AWS does,
Application Auto Scaling tags and an UpdateEndpoint that refuses an instance-type change of an auto-scaled
variant included), its UpdateEndpoint calls recorded (tests/e2e/update_calls.py), for
tests/e2e/test_live_updates.py and tests/e2e/test_concurrent_runs.py.

The provider comes from a filesystem mirror found by tests/tf_mirror.py; without one the tests skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
import yaml

from tests.e2e.emulator_support import fresh_emulator
from tests.e2e.update_calls import recording
from tests.tf_mirror import cli_config, find_aws_mirror, where_looked

REGION = "us-east-1"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:{tag}"
BINARY = shutil.which("terraform") or shutil.which("tofu")
STEP_TIMEOUT = 600  # seconds for one command: each provider start takes 3-20 s (the aws binary is large)


FOUND = find_aws_mirror()
pytestmark = [
    pytest.mark.terraform,
    pytest.mark.skipif(BINARY is None, reason="needs terraform or tofu on PATH"),
    pytest.mark.skipif(FOUND is None, reason=f"no filesystem provider mirror with hashicorp/aws (looked in {where_looked()})"),
]


@pytest.fixture(scope="module")
def emulator():
    with fresh_emulator() as url, recording():
        yield url


@pytest.fixture
def project(tmp_path, emulator):
    mirror, version = FOUND
    rc = tmp_path / "terraformrc"
    rc.write_text(cli_config(mirror))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "TF_", "FASTSCALE_"))},
        "TF_CLI_CONFIG_FILE": str(rc),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "FASTSCALE_TERRAFORM": BINARY,
    }
    return tmp_path, env, version


def write_config(root: Path, emulator: str, provider: str, tag: str) -> Path:
    config = {
        "project": "emu",
        "region": REGION,
        "endpoint_url": emulator,
        "providers": {"aws": f"= {provider}"},
        "endpoints": [{
            "name": "chat",
            "instance_type": "ml.g4dn.xlarge",
            "instances": {"initial": 1, "min": 1, "max": 1},
            "model": {
                "image": IMAGE.format(tag=tag),
                "model_data": "s3://emu-models/small/",
                "model_size_gb": 2,
                "autoscaling": {"enabled": False},
            },
        }],
    }
    path = root / "fastscale.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def fastscale(project, *args: str) -> subprocess.CompletedProcess[str]:
    root, env, _ = project
    code = "import sys; from fastscale.cli.main import cli; sys.argv = ['fastscale', *sys.argv[1:]]; cli()"
    try:
        return subprocess.run([sys.executable, "-c", code, *args], cwd=root, env=env, capture_output=True, text=True,
                              timeout=STEP_TIMEOUT)
    except subprocess.TimeoutExpired as exc:  # show where it stood instead of a bare timeout
        pytest.fail(f"fastscale {' '.join(args)} did not finish in {STEP_TIMEOUT} s:\n{exc.stdout}\n{exc.stderr}")


def sagemaker(emulator: str):
    return boto3.client("sagemaker", region_name=REGION, endpoint_url=emulator, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def summary(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)
