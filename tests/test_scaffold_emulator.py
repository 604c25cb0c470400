"""`fastscale init --emulator URL` and examples/emulator.yaml: what an emulator can hold, valid with no finding."""

from __future__ import annotations

import os
import shutil
import subprocess

import boto3
import pytest
import yaml
from click.testing import CliRunner
from moto import mock_aws

from fastscale.cli.main import cli
from fastscale.infra.base.provider_versions import EMULATOR_AWS
from fastscale.infra.config import load_config, parse_config
from fastscale.infra.project.scaffold import (
    EMULATOR_INSTANCE_TYPES,
    ProjectOptions,
    emulator_instance_type,
    model_choices,
    render_config,
)
from fastscale.infra.rules import run_rules
from tests.conftest import ROOT

URL = "http://127.0.0.1:5000"


@mock_aws
def test_moto_accepts_every_emulator_instance_type_and_rejects_current_ones():
    sm = boto3.client("sagemaker", region_name="us-east-1")
    sm.create_model(ModelName="m", ExecutionRoleArn="arn:aws:iam::123456789012:role/r",
                    PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"})

    def create(instance_type: str) -> None:
        sm.create_endpoint_config(EndpointConfigName=instance_type.replace(".", "-"), ProductionVariants=[{
            "VariantName": "v", "ModelName": "m", "InstanceType": instance_type, "InitialInstanceCount": 1}])

    for instance_type in EMULATOR_INSTANCE_TYPES:
        create(instance_type)
    with pytest.raises(sm.exceptions.ClientError, match="enum value set"):
        create("ml.g6.2xlarge")


@pytest.mark.parametrize("model", model_choices())
def test_every_preset_that_fits_the_emulator_renders_without_a_finding(model):
    opts = ProjectOptions(project="demo", model=model, ci="none", emulator=URL)
    chosen = emulator_instance_type(opts)
    if chosen is None:  # too large for the emulator's older types: init refuses it (below)
        assert model in ("qwen3-32b", "llama3-70b")
        return
    text = render_config(opts)
    config = parse_config(yaml.safe_load(text), "fastscale.yaml", text)
    assert list(run_rules(config)) == []
    assert config.endpoint_url == URL and config.state.backend == "local"
    assert config.providers.aws == EMULATOR_AWS  # the same range `adopt --endpoint-url` writes
    [endpoint] = config.endpoints
    assert endpoint.instance_type == chosen and not endpoint.uses_inference_components
    assert endpoint.model is not None and endpoint.model.autoscaling.enabled


def test_the_emulator_example_has_no_finding():
    config = load_config(ROOT / "examples" / "emulator.yaml")
    assert list(run_rules(config)) == [] and config.endpoint_url and config.state.backend == "local"


def test_init_emulator_writes_a_project_without_pipeline(tmp_path):
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "demo"), "--emulator", URL])
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in (tmp_path / "demo").iterdir())
    assert ".github" not in written and "fastscale.yaml" in written
    assert "fastscale deploy fastscale.yaml --auto-approve" in result.output


@pytest.mark.parametrize(("args", "says"), [
    (["--ci", "github"], "--ci github does not go with --emulator"),
    (["--state-bucket", "b"], "--state-bucket does not go with --emulator"),
    (["--model", "llama3-70b"], "rehearse with --model llama3-8b | mistral-7b | qwen3-8b"),
])
def test_init_emulator_refuses_what_it_cannot_hold(tmp_path, args, says):
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "demo"), "--emulator", URL, *args])
    assert result.exit_code == 2
    assert says in " ".join(result.output.split())
    assert not (tmp_path / "demo").exists()


def test_init_emulator_refuses_a_url_that_is_not_one(tmp_path):
    result = CliRunner().invoke(cli, ["init", str(tmp_path / "demo"), "--emulator", "localhost:5000"])
    assert result.exit_code == 2 and "--emulator" in result.output


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_the_cdktf_targets_of_an_emulator_project_clear_the_shells_aws_variables_and_skip_the_provider_lock(tmp_path):
    """What `make cdktf-diff` runs (`make -n` prints it): cdktf without the shell's credentials, profile or
    endpoint variables but the region and CA bundle, without its update check and its `providers lock`
    (tests/e2e/test_cdktf_emulator.py runs it for real)."""
    assert CliRunner().invoke(cli, ["init", str(tmp_path / "demo"), "--emulator", URL]).exit_code == 0
    shell = {"PATH": os.environ["PATH"], "AWS_PROFILE": "prod", "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
             "AWS_SESSION_TOKEN": "token", "AWS_ENDPOINT_URL_SAGEMAKER": "https://example.com", "AWS_REGION": "eu-west-1"}
    shown = subprocess.run(["make", "-n", "--no-print-directory", "cdktf-diff"], cwd=tmp_path / "demo", env=shell,
                           capture_output=True, text=True, check=True).stdout.split()
    assert shown[0] == "env" and shown[-2:] == ["cdktf", "diff"]
    cleared = {shown[i + 1] for i, word in enumerate(shown) if word == "-u"}
    assert cleared == {"AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_SAGEMAKER"}
    assert {"CDKTF_SKIP_PROVIDER_LOCK=true", "CHECKPOINT_DISABLE=1"} <= set(shown)


def test_only_an_emulator_project_has_the_cdktf_targets(tmp_path):
    assert CliRunner().invoke(cli, ["init", str(tmp_path / "real"), "--ci", "none"]).exit_code == 0
    assert CliRunner().invoke(cli, ["init", str(tmp_path / "emulated"), "--emulator", URL]).exit_code == 0
    assert "cdktf-deploy:" not in (tmp_path / "real" / "Makefile").read_text()
    assert "\ncdktf-deploy:\n" in (tmp_path / "emulated" / "Makefile").read_text()
