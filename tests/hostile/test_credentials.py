"""The runner's AWS credentials stay with AWS: every call to an endpoint URL (an emulator the config or the
command line names) carries the dummy credentials, and no credential source is asked, unless the command
line says --send-credentials-to-endpoint-url.

A local server records what arrives (tests/hostile/capture.py): the AWS calls of fastscale's own boto3
clients and of a real `terraform plan`, and any request to the container credential endpoint or the
instance metadata service, which the environment points at that same server. Each source of credentials a
CI job may have is set up with values that must never appear there.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import boto3
import pytest
import yaml
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.base.credentials import DUMMY_ACCESS_KEY_ID, emulator_environment, terraform_environment
from fastscale.infra.terraform.runner.binary import child_env
from tests.hostile.capture import CONTAINER_PATH, REAL_KEY_ID, REAL_SECRET, REAL_TOKEN, CaptureServer

CONFIG = {
    "project": "demo",
    "region": "us-east-1",
    "endpoints": [{"name": "chat", "instance_type": "ml.g6.2xlarge",
                   "model": {"image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0"}}],
}
SOURCES = ("environment", "profile_credential_process", "container_endpoint", "instance_metadata")


@pytest.fixture
def capture():
    server = CaptureServer().start()
    yield server
    server.stop()


def credential_sources(source: str, tmp_path: Path, capture: CaptureServer) -> dict[str, str]:
    """The AWS settings of a CI job whose credentials come from ``source``; the instance metadata service is
    the capture server in every case, so any lookup there is seen."""
    marker = tmp_path / "credential_process_ran"
    script = tmp_path / "credential_process.py"
    script.write_text(
        f"import json, pathlib\npathlib.Path({str(marker)!r}).touch()\n"
        f"print(json.dumps({{'Version': 1, 'AccessKeyId': {REAL_KEY_ID!r}, 'SecretAccessKey': {REAL_SECRET!r}, "
        f"'SessionToken': {REAL_TOKEN!r}}}))\n")
    config = tmp_path / "aws_config"
    config.write_text(f"[profile ci]\ncredential_process = {sys.executable} {script}\nregion = us-east-1\n")
    env = {"AWS_CONFIG_FILE": str(config), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no_credentials"),
           "AWS_EC2_METADATA_SERVICE_ENDPOINT": capture.url + "/", "AWS_DEFAULTS_MODE": "auto",
           "AWS_DEFAULT_REGION": "us-east-1"}
    env.update({
        "environment": {"AWS_ACCESS_KEY_ID": REAL_KEY_ID, "AWS_SECRET_ACCESS_KEY": REAL_SECRET,
                        "AWS_SESSION_TOKEN": REAL_TOKEN},
        "profile_credential_process": {"AWS_PROFILE": "ci"},
        "container_endpoint": {"AWS_CONTAINER_CREDENTIALS_FULL_URI": capture.url + CONTAINER_PATH},
        "instance_metadata": {},
    }[source])
    return env


def use_environment(monkeypatch, env: dict[str, str]) -> None:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # it would keep credentials found by an earlier test


def assert_only_dummy_credentials(capture: CaptureServer, tmp_path: Path) -> None:
    calls = capture.aws_calls()
    assert calls, "no AWS call reached the endpoint"
    for call in calls:
        assert f"Credential={DUMMY_ACCESS_KEY_ID}/" in call.headers.get("authorization", ""), call
        assert "x-amz-security-token" not in call.headers, call
    everything = capture.everything_sent()
    assert REAL_KEY_ID not in everything and REAL_TOKEN not in everything
    assert capture.credential_lookups() == [], "a credential source was asked"
    assert not (tmp_path / "credential_process_ran").exists(), "the profile's credential_process ran"


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("where", ["config", "flag"])
def test_boto3_calls_to_an_endpoint_url_carry_only_dummy_credentials(tmp_path, monkeypatch, capture, source, where):
    use_environment(monkeypatch, credential_sources(source, tmp_path, capture))
    monkeypatch.chdir(tmp_path)
    config = {**CONFIG, "endpoint_url": capture.url} if where == "config" else CONFIG
    (tmp_path / "fastscale.yaml").write_text(yaml.safe_dump(config))
    target = ["--endpoint-url", capture.url] if where == "flag" else []
    result = CliRunner().invoke(cli, ["status", "fastscale.yaml", "--json", *target])
    assert json.loads(result.stdout)["exit_code"] == 1  # the capture server answers every call with an error
    assert_only_dummy_credentials(capture, tmp_path)
    assert "signed with dummy credentials" in result.stderr


@pytest.mark.parametrize("source", SOURCES)
def test_the_command_line_opt_in_sends_the_real_credentials(tmp_path, monkeypatch, capture, source):
    """The control of the test above: the same setup reaches the capture server when allowed to."""
    use_environment(monkeypatch, credential_sources(source, tmp_path, capture))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fastscale.yaml").write_text(yaml.safe_dump({**CONFIG, "endpoint_url": capture.url}))
    result = CliRunner().invoke(cli, ["status", "fastscale.yaml", "--json", "--send-credentials-to-endpoint-url"])
    assert json.loads(result.stdout)["exit_code"] == 1
    assert "signed with your own AWS credentials" in result.stderr
    if source == "instance_metadata":  # asked, and it has no role: the call fails without credentials
        assert capture.credential_lookups()
        return
    [call] = capture.aws_calls()
    assert f"Credential={REAL_KEY_ID}/" in call.headers["authorization"]
    assert call.headers["x-amz-security-token"] == REAL_TOKEN


def test_no_config_key_and_no_environment_variable_sends_the_credentials(tmp_path, monkeypatch, capture):
    use_environment(monkeypatch, {**credential_sources("environment", tmp_path, capture),
                                  "FASTSCALE_SEND_CREDENTIALS_TO_ENDPOINT_URL": "1"})
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fastscale.yaml").write_text(yaml.safe_dump({**CONFIG, "endpoint_url": capture.url}))
    CliRunner().invoke(cli, ["status", "fastscale.yaml", "--json"])
    assert_only_dummy_credentials(capture, tmp_path)
    (tmp_path / "fastscale.yaml").write_text(
        yaml.safe_dump({**CONFIG, "endpoint_url": capture.url, "send_credentials_to_endpoint_url": True}))
    refused = CliRunner().invoke(cli, ["status", "fastscale.yaml", "--json"])
    assert refused.exit_code == 2 and "unknown key" in refused.stdout


# --------------------------------------------------------------------------------------------- Terraform's environment


def test_terraform_gets_no_aws_setting_of_the_runner_but_the_dummy_credentials():
    runner_env = {"AWS_ACCESS_KEY_ID": REAL_KEY_ID, "AWS_SECRET_ACCESS_KEY": REAL_SECRET, "AWS_SESSION_TOKEN": REAL_TOKEN,
                  "AWS_SECURITY_TOKEN": REAL_TOKEN, "AWS_PROFILE": "ci", "AWS_DEFAULT_PROFILE": "ci",
                  "AWS_SHARED_CREDENTIALS_FILE": "/home/ci/.aws/credentials", "AWS_CONFIG_FILE": "/home/ci/.aws/config",
                  "AWS_WEB_IDENTITY_TOKEN_FILE": "/var/run/token", "AWS_ROLE_ARN": "arn:aws:iam::1:role/deploy",
                  "AWS_ROLE_SESSION_NAME": "ci", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.23/v1",
                  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/x",
                  "AWS_CONTAINER_AUTHORIZATION_TOKEN": "secret", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": "/t",
                  "AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://169.254.169.254", "AWS_METADATA_URL": "http://x",
                  "AWS_ENDPOINT_URL_STS": "https://sts.example.com", "AWS_ACCESS_KEY": REAL_KEY_ID,
                  "AWS_SECRET_KEY": REAL_SECRET, "AWS_REGION": "eu-west-1", "AWS_CA_BUNDLE": "/etc/ca.pem",
                  "PATH": "/usr/bin", "TF_CLI_CONFIG_FILE": "/tf.rc"}
    changes = emulator_environment("http://127.0.0.1:4566", runner_env)
    assert changes == {**{name: None for name in runner_env if name.startswith("AWS_")
                          and name not in ("AWS_REGION", "AWS_CA_BUNDLE")},
                       "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
                       "AWS_EC2_METADATA_DISABLED": "true", "AWS_ENDPOINT_URL": "http://127.0.0.1:4566"}


def test_the_runner_removes_what_the_changes_remove(monkeypatch):
    monkeypatch.setenv("AWS_SESSION_TOKEN", REAL_TOKEN)
    monkeypatch.setenv("AWS_PROFILE", "ci")
    env = child_env(terraform_environment("http://localhost:4566", send_credentials=False))
    assert "AWS_SESSION_TOKEN" not in env and "AWS_PROFILE" not in env
    assert (env["AWS_ACCESS_KEY_ID"], env["AWS_ENDPOINT_URL"]) == ("testing", "http://localhost:4566")
    trusted = child_env(terraform_environment("http://localhost:4566", send_credentials=True))
    assert trusted["AWS_SESSION_TOKEN"] == REAL_TOKEN and trusted["AWS_PROFILE"] == "ci"
    assert child_env(terraform_environment(None, send_credentials=False))["AWS_SESSION_TOKEN"] == REAL_TOKEN


# --------------------------------------------------------------------------------------------- a real terraform plan


@pytest.fixture(scope="module")
def emulator():
    from tests.e2e.emulator_support import fresh_emulator

    with fresh_emulator() as url:
        yield url


@pytest.mark.terraform
def test_a_real_terraform_plan_sends_only_dummy_credentials(tmp_path, emulator):
    """fastscale's preflight and Terraform's aws provider, run by `fastscale plan` against the emulator behind
    the capture server, in a job that has credentials from every source at once; then the synthesized stack
    planned by plain `terraform` in that same environment, as `cdktf deploy` would run it."""
    import subprocess

    from tests.e2e.emulator_support import BINARY, FOUND, fastscale, project_env

    if BINARY is None or FOUND is None:
        pytest.skip("needs terraform or tofu on PATH and a filesystem mirror with hashicorp/aws (tests/tf_mirror.py)")
    proxy = CaptureServer(upstream=emulator).start()
    try:
        env = {**project_env(tmp_path)}
        for source in SOURCES:
            env.update(credential_sources(source, tmp_path, proxy))
        config = {
            "project": "creds", "region": "us-east-1", "endpoint_url": proxy.url,
            "providers": {"aws": f"= {FOUND[1]}"},
            "endpoints": [{"name": "chat", "instance_type": "ml.g4dn.xlarge",
                           "instances": {"initial": 1, "min": 1, "max": 1},
                           "model": {"image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0",
                                     "model_data": "s3://creds-models/small/", "model_size_gb": 2,
                                     "autoscaling": {"enabled": False}}}],
        }
        (tmp_path / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        planned = fastscale(tmp_path, env, "plan", "fastscale.yaml", "--json")
        assert planned.returncode == 0, planned.stdout + planned.stderr
        through_fastscale = len(proxy.requests)
        # The environment as it is, real credentials included: the provider block's own dummy keys win.
        # fastscale ran Terraform in a directory of its own run, so this directory is initialised here, as
        # `cdktf deploy` would (init, then plan).
        stack_dir = tmp_path / "cdktf.out" / "stacks" / "creds"
        initialised = subprocess.run([BINARY, "init", "-input=false", "-no-color"], cwd=stack_dir, env=env,
                                     capture_output=True, text=True, timeout=600)
        assert initialised.returncode == 0, initialised.stdout + initialised.stderr
        direct = subprocess.run([BINARY, "plan", "-input=false", "-lock=false", "-no-color"],
                                cwd=stack_dir, env=env, capture_output=True, text=True, timeout=600)
        assert direct.returncode == 0, direct.stdout + direct.stderr
    finally:
        proxy.stop()
    terraform_calls = [c for c in proxy.aws_calls() if "terraform" in c.headers.get("user-agent", "").lower()]
    assert terraform_calls and len(proxy.requests) > through_fastscale, "the provider made no call through the URL"
    assert_only_dummy_credentials(proxy, tmp_path)
    assert REAL_KEY_ID not in planned.stdout + planned.stderr


# --------------------------------------------------------------------------------------------- every command


def _reaches_aws(module: str) -> bool:
    """Whether a command module reaches AWS: through the runtime's clients, or Terraform on the stack."""
    source = (Path(__file__).resolve().parents[2] / "cli" / "commands" / f"{module}.py").read_text()
    return any(word in source for word in ("aws_clients", "quota_clients", "StackCommand", "apply_target"))


def test_every_command_that_reaches_aws_takes_the_endpoint_and_its_opt_in():
    from fastscale.cli.main import COMMANDS

    reaching = sorted(name for name, (module, _) in COMMANDS.items() if _reaches_aws(module))
    assert {"validate", "plan", "deploy", "status", "destroy", "verify-cleanup", "sweep", "measure-scaleout",
            "explain", "adopt"} <= set(reaching)
    # synth reaches nothing, but writes the provider block, whose credentials depend on the opt-in.
    for name in [*reaching, "synth"]:
        shown = CliRunner().invoke(cli, [name, "--help"], terminal_width=200).output
        assert "--endpoint-url" in shown and "--send-credentials-to-endpoint-url" in shown, name
