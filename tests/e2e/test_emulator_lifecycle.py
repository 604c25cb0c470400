"""The whole lifecycle through the real terraform binary and the real hashicorp/aws provider, against an
AWS emulator (moto's threaded server): deploy → status → a new model version deployed → destroy →
verify-cleanup, each through the `fastscale` command in its own process, as a user would run it.

The provider comes from a filesystem mirror found by tests/tf_mirror.py (FASTSCALE_TF_MIRROR, the
Terraform CLI configuration, /opt/tf-plugins, Terraform's implicit mirror directories). Without a mirror
that holds hashicorp/aws the test skips and says why. The config pins the provider to a version the mirror has (`providers.aws`), which rule FS071
checks against what the stack writes.

Gaps of the emulator (moto 5.2.5) worked around in the test config, each of which a real account does not have:
- Auto scaling is off in the lifecycle test (test_live_updates turns it on): the aws provider reads a
  scalable target's tags with Application Auto Scaling's ListTagsForResource, which moto does not
  implement; tests/e2e/moto_shims.py adds it.
- ml.g4dn.xlarge instead of a current GPU type: moto only accepts a fixed list of older instance types
  (it rejects ml.g6.*).
- Single-model endpoint without `metrics_publish_frequency`: inference components and the metrics
  configuration are hashicorp/awscc resources (AWS Cloud Control API), which moto does not emulate; rule
  FS072 refuses them with an emulator target anyway.
- moto has no UpdateEndpoint, which the provider calls to move the endpoint to a new configuration: the
  `emulator` fixture adds one (tests/e2e/moto_shims.py: switch the endpoint to the named configuration and
  its variants, as AWS does once an update finishes, and refuse an instance-type change of an auto-scaled
  variant, as AWS does).
- moto creates endpoints InService at once, so the waits end on their first look.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
import yaml

from tests.e2e.moto_shims import shims
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
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with shims():
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.stop()


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


def test_deploy_status_update_destroy_and_verify_cleanup_through_the_real_provider(project, emulator):
    root, _, provider = project
    write_config(root, emulator, provider, "1.0")
    sm = sagemaker(emulator)

    deployed = fastscale(project, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert deployed.returncode == 0, deployed.stderr
    report = summary(deployed)
    assert report["ok"] is True and report["endpoint_url"] == emulator
    assert "EMULATOR TARGET" in deployed.stderr and emulator in deployed.stderr
    endpoint = sm.describe_endpoint(EndpointName="emu-chat")
    assert endpoint["EndpointStatus"] == "InService"
    first_config = endpoint["EndpointConfigName"]
    [first_model] = [m["ModelName"] for m in sm.list_models()["Models"]]
    state = json.loads((root / "terraform.emu.us-east-1.tfstate").read_text())
    assert {r["type"] for r in state["resources"]} >= {
        "aws_sagemaker_model", "aws_sagemaker_endpoint_configuration", "aws_sagemaker_endpoint", "aws_iam_role",
        "aws_cloudwatch_metric_alarm"}

    status = fastscale(project, "status", "fastscale.yaml", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    assert summary(status)["ok"] is True

    # A new model version: a new model (its name carries a digest of the image), a new endpoint
    # configuration created before the old one is destroyed, and the endpoint moved to it.
    write_config(root, emulator, provider, "2.0")
    updated = fastscale(project, "deploy", "fastscale.yaml", "--auto-approve", "--json")
    assert updated.returncode == 0, updated.stderr
    endpoint = sm.describe_endpoint(EndpointName="emu-chat")
    assert endpoint["EndpointConfigName"] != first_config
    models = [m["ModelName"] for m in sm.list_models()["Models"]]
    assert len(models) == 1 and models[0] != first_model
    live_config = sm.describe_endpoint_config(EndpointConfigName=endpoint["EndpointConfigName"])
    assert live_config["ProductionVariants"][0]["ModelName"] == models[0]
    assert [c["EndpointConfigName"] for c in sm.list_endpoint_configs()["EndpointConfigs"]] == [
        endpoint["EndpointConfigName"]]
    assert fastscale(project, "status", "fastscale.yaml").returncode == 0

    destroyed = fastscale(project, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    assert destroyed.returncode == 0, destroyed.stdout + destroyed.stderr
    assert sm.list_endpoints()["Endpoints"] == [] and sm.list_models()["Models"] == []

    verified = fastscale(project, "verify-cleanup", "fastscale.yaml", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert summary(verified)["ok"] is True


def test_an_emulator_config_with_s3_state_in_real_s3_is_refused_before_terraform(project, emulator):
    root, _, provider = project
    path = write_config(root, emulator, provider, "1.0")
    config = yaml.safe_load(path.read_text())
    config["state"] = {"backend": "s3", "bucket": "team-terraform-state", "key": "emu/terraform.tfstate"}
    path.write_text(yaml.safe_dump(config))
    refused = fastscale(project, "plan", "fastscale.yaml", "--json")
    assert refused.returncode == 2
    [report] = summary(refused)["files"]
    assert [f["code"] for f in report["findings"]] == ["FS070"]
    assert not (root / "cdktf.out").exists()
