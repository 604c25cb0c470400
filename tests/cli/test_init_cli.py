"""`fastscale init`: the rendered project validates and synthesizes, and its pipelines use real commands."""

from __future__ import annotations

import re

import pytest
import yaml
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.config import load_config
from fastscale.infra.rules import has_errors, run_rules
from fastscale.infra.scaffold import CI_FILES, model_choices


def invoke(*args):
    return CliRunner().invoke(cli, list(map(str, args)))


class _PipelineLoader(yaml.SafeLoader):
    """GitLab's `!reference` tag is part of its pipeline syntax; accept it like GitLab does."""


_PipelineLoader.add_constructor("!reference", lambda loader, node: loader.construct_sequence(node))


@pytest.mark.parametrize("model", model_choices())
def test_rendered_project_validates(tmp_path, model):
    target = tmp_path / "proj"
    result = invoke("init", target, "--model", model, "--project", "demo-llm")
    assert result.exit_code == 0, result.output
    for name in ("fastscale.yaml", "cdktf.json", "main.py", "Makefile", ".gitignore", "README.md", CI_FILES["github"]):
        assert (target / name).is_file(), name
    config = load_config(target / "fastscale.yaml")
    assert config.project == "demo-llm"
    findings = run_rules(config)
    assert not has_errors(findings), [f.to_dict() for f in findings]
    assert invoke("validate", target / "fastscale.yaml").exit_code == 0
    gitignore = (target / ".gitignore").read_text()
    assert "cdktf.out/" in gitignore and ".terraform/" in gitignore and "*.tfstate" in gitignore


def test_rendered_project_synthesizes(tmp_path):
    target = tmp_path / "proj"
    assert invoke("init", target, "--project", "demo-llm", "--scale-to-zero").exit_code == 0
    result = invoke("synth", target / "fastscale.yaml", "--out", target / "cdktf.out")
    assert result.exit_code == 0, result.output
    assert (target / "cdktf.out" / "stacks" / "demo-llm" / "cdk.tf.json").is_file()


def test_refuses_to_overwrite_without_force(tmp_path):
    target = tmp_path / "proj"
    assert invoke("init", target, "--project", "p1").exit_code == 0
    (target / "fastscale.yaml").write_text("mine\n")
    result = invoke("init", target, "--project", "p1")
    assert result.exit_code == 2
    assert "already exist" in result.output and "--force" in result.output
    assert (target / "fastscale.yaml").read_text() == "mine\n", "nothing is overwritten"
    assert invoke("init", target, "--project", "p1", "--force").exit_code == 0
    assert (target / "fastscale.yaml").read_text() != "mine\n"


def test_model_that_does_not_fit_writes_nothing(tmp_path):
    target = tmp_path / "proj"
    result = invoke("init", target, "--project", "p1", "--model", "llama3-70b", "--instance-type", "ml.g6.2xlarge")
    assert result.exit_code == 2, result.output
    assert "Nothing was written" in result.output
    assert not target.exists()


def test_bad_project_name_is_a_usage_error(tmp_path):
    result = invoke("init", tmp_path / "x", "--project", "Bad_Name")
    assert result.exit_code == 2
    assert "--project" in result.output and "lowercase" in result.output


def test_ci_none_writes_no_pipeline_and_local_state(tmp_path):
    target = tmp_path / "proj"
    assert invoke("init", target, "--project", "p1", "--ci", "none").exit_code == 0
    assert not (target / ".github").exists() and not (target / ".gitlab-ci.yml").exists()
    assert load_config(target / "fastscale.yaml").state.backend == "local"


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_pipelines_parse_and_use_existing_commands(tmp_path, ci):
    target = tmp_path / "proj"
    assert invoke("init", target, "--project", "p1", "--ci", ci).exit_code == 0
    text = (target / CI_FILES[ci]).read_text()
    pipeline = yaml.load(text, Loader=_PipelineLoader)
    assert isinstance(pipeline, dict)
    # CI needs shared, locked state: the generated config uses the S3 backend.
    state = load_config(target / "fastscale.yaml").state
    assert state.backend == "s3" and state.use_lockfile
    # No long-lived keys: credentials come from OIDC.
    assert "AWS_SECRET_ACCESS_KEY:" not in text and "secrets.AWS" not in text
    assert ("id-token: write" in text) if ci == "github" else ("id_tokens" in text)
    commands = set(re.findall(r"\bfastscale ([a-z][a-z-]+)", text))
    assert {"validate", "synth", "plan", "deploy", "destroy", "verify-cleanup"} <= commands
    for command in commands:
        result = invoke(command, "--help")
        assert result.exit_code == 0, (command, result.output)
    # options the pipeline passes must exist too
    for command, option in re.findall(r"\bfastscale ([a-z-]+)[^\n]*?(--[a-z-]+)", text):
        assert option in invoke(command, "--help").output, (command, option)
