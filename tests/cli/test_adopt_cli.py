"""`fastscale adopt` through Click: written, refused, an existing file kept, an unknown endpoint."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.config import load_config
from tests.aws.factories import REGION
from tests.aws.test_adopt import NAME, sdk_endpoint


def run(*args: str):
    return CliRunner().invoke(cli, ["adopt", *args], catch_exceptions=False)


def test_adopt_writes_a_config_that_loads_and_lists_the_imports(aws, tmp_path):
    sdk_endpoint(aws)
    out = tmp_path / "fastscale.yaml"
    result = run(NAME, "--region", REGION, "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["written"] == str(out) and doc["exit_code"] == 0
    config = load_config(out)
    assert config.endpoints[0].adopted is not None and config.endpoints[0].adopted.endpoint == NAME
    assert {b["to"].split(".")[0] for b in doc["imports"]} == {
        "aws_sagemaker_model", "aws_sagemaker_endpoint_configuration", "aws_sagemaker_endpoint"}
    assert out.read_text().startswith("# Written by `fastscale adopt`")


def test_an_existing_file_is_kept_without_force(aws, tmp_path):
    sdk_endpoint(aws)
    out = tmp_path / "fastscale.yaml"
    out.write_text("mine\n")
    result = run(NAME, "--region", REGION, "--out", str(out))
    assert result.exit_code == 2
    assert "exists" in result.output and "--force" in result.output
    assert out.read_text() == "mine\n"
    forced = run(NAME, "--region", REGION, "--out", str(out), "--force")
    assert forced.exit_code == 0, forced.output
    assert load_config(out).endpoints[0].adopted is not None


def test_a_symbolic_link_is_never_written_through(aws, tmp_path):
    sdk_endpoint(aws)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    out = tmp_path / "fastscale.yaml"
    out.symlink_to(victim)
    assert run(NAME, "--region", REGION, "--out", str(out)).exit_code == 2
    assert run(NAME, "--region", REGION, "--out", str(out), "--force").exit_code == 2
    assert victim.read_text() == "keep\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_out_is_refused_at_once(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result = run(NAME, "--region", REGION, "--out", str(fifo), "--force")
    assert result.exit_code == 2 and "FIFO" in result.output


def test_an_unknown_endpoint_fails_with_the_aws_error_line(aws, tmp_path):
    out = tmp_path / "fastscale.yaml"
    result = run("nope", "--region", REGION, "--out", str(out))
    assert result.exit_code == 1
    assert "Could not find endpoint" in result.output
    assert not out.exists()


def test_an_endpoint_that_cannot_be_reproduced_is_refused_and_nothing_written(aws, tmp_path):
    sdk_endpoint(aws, InitialVariantWeight=0.5)
    out = tmp_path / "fastscale.yaml"
    result = run(NAME, "--region", REGION, "--out", str(out), "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["refused"] == ["variant AllTraffic has weight 0.5: fastscale sends none (1.0)"]
    assert not out.exists()


def test_a_bad_region_is_bad_input(tmp_path):
    result = run(NAME, "--region", "us-east-9", "--out", str(tmp_path / "x.yaml"))
    assert result.exit_code == 2 and "--region" in result.output
