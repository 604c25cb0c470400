"""`fastscale init`: the rendered project validates and synthesizes, and its pipelines use real commands."""

from __future__ import annotations

import re

import pytest
import yaml
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.config import load_config
from fastscale.infra.project.scaffold import CI_FILES, model_choices
from fastscale.infra.rules import Severity, has_errors, run_rules


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


@pytest.mark.parametrize("scale_to_zero", [False, True], ids=["steady", "scale-to-zero"])
@pytest.mark.parametrize("model", model_choices())
def test_every_preset_validates_without_a_warning(tmp_path, model, scale_to_zero):
    """The first `validate` of a new project shows nothing to fix: no error and no warning (a note, severity
    info, is allowed), through the rules and through the command a user runs."""
    target = tmp_path / "proj"
    args = ["init", target, "--model", model, "--project", "demo-llm"] + (["--scale-to-zero"] if scale_to_zero else [])
    assert invoke(*args).exit_code == 0
    findings = run_rules(load_config(target / "fastscale.yaml"))
    assert [f.to_dict() for f in findings if f.severity is not Severity.INFO] == []
    result = invoke("validate", target / "fastscale.yaml")
    assert result.exit_code == 0 and "warning" not in result.output, result.output


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


def test_model_that_does_not_fit_writes_nothing_and_suggests_options_that_work(tmp_path):
    target = tmp_path / "proj"
    result = invoke("init", target, "--project", "p1", "--model", "llama3-70b", "--instance-type", "ml.g6.2xlarge")
    assert result.exit_code == 2, result.output
    assert "Nothing was written" in result.output
    assert not target.exists()
    assert "FS007" in result.output, "the reason is given"
    assert "  --model llama3-70b --instance-type ml.g6.2xlarge\n" in result.output, "the refused options, whole"
    # Every suggestion is a set of init options, and following it gives a valid project.
    offered = result.output.split("These options give a valid project:\n", 1)[1]
    suggestions = [line.split() for line in offered.splitlines() if line.startswith("  --model ")]
    assert any("llama3-70b" in s for s in suggestions), "another instance type for the same model"
    assert any("ml.g6.2xlarge" in s and "llama3-70b" not in s for s in suggestions), "a model that fits the type"
    assert "set accelerators" not in result.output, "no fix that only editing the YAML could apply"
    for i, options in enumerate(suggestions):
        again = invoke("init", tmp_path / f"try{i}", "--project", "p1", *options)
        assert again.exit_code == 0, (options, again.output)


def test_schema_file_is_written_and_named_by_the_config(tmp_path):
    from fastscale.infra.config import dump_json_schema

    target = tmp_path / "proj"
    assert invoke("init", target, "--project", "p1").exit_code == 0
    assert (target / "fastscale.schema.json").read_text() == dump_json_schema()
    first = (target / "fastscale.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=fastscale.schema.json"


def test_requirement_defaults_to_how_fastscale_was_installed(tmp_path):
    from fastscale.infra.project.scaffold import installed_requirement

    target = tmp_path / "proj"
    assert invoke("init", target, "--project", "p1").exit_code == 0
    assert _requirement_line(target) == installed_requirement()


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_requirement_option_is_the_one_place_that_names_fastscale(tmp_path, ci):
    target = tmp_path / "proj"
    wanted = "fastscale @ git+https://git.example.com/you/fastscale.git@0123456789abcdef"
    result = invoke("init", target, "--project", "p1", "--ci", ci, "--fastscale-requirement", wanted)
    assert result.exit_code == 0, result.output
    assert _requirement_line(target) == wanted
    assert "cannot reach" not in result.output, "a VCS URL works on a CI runner"
    # but pip cannot hash it, and the pipeline's AWS jobs install with --require-hashes
    assert "whose hashes pip cannot check" in result.output and "requirements.lock" in result.output
    readme = (target / "README.md").read_text()
    assert "pip install -r requirements.txt" in readme
    assert "Which fastscale" in readme and "fastscale==X.Y.Z" in readme, "the README says how to change it"
    pipeline = (target / CI_FILES[ci]).read_text()
    assert "-r requirements.txt" in pipeline and "requirements.txt names the fastscale to install" in pipeline
    for rel in ("README.md", "Makefile", CI_FILES[ci]):
        text = (target / rel).read_text()
        installs = re.findall(r"pip install[^\n#]*", text)
        assert not [line for line in installs if "fastscale" in line], (rel, installs)


def test_local_path_requirement_warns_about_ci(tmp_path):
    target = tmp_path / "proj"
    result = invoke("init", target, "--project", "p1", "--fastscale-requirement", "fastscale @ file:///src/fastscale")
    assert result.exit_code == 0
    assert "a CI runner cannot reach" in result.output
    result = invoke("init", tmp_path / "other", "--project", "p1", "--ci", "none",
                    "--fastscale-requirement", "fastscale @ file:///src/fastscale")
    assert "cannot reach" not in result.output, "no pipeline, no warning"
    result = invoke("init", tmp_path / "vcs", "--project", "p1", "--ci", "none",
                    "--fastscale-requirement", "fastscale @ git+https://git.example.com/f.git@0123")
    assert result.exit_code == 0 and "hashes" not in result.output, "no pipeline, no lock"
    result = invoke("init", tmp_path / "index", "--project", "p1", "--fastscale-requirement", "fastscale==0.1.0")
    assert result.exit_code == 0 and "warning" not in result.output
    assert "lock" in result.output.split("Next:")[1], "the next steps say to write the lock"


def test_requirement_for_another_package_is_a_usage_error(tmp_path):
    result = invoke("init", tmp_path / "proj", "--project", "p1", "--fastscale-requirement", "numpy==2.0")
    assert result.exit_code == 2
    assert "--fastscale-requirement" in result.output and "does not install fastscale" in result.output
    assert not (tmp_path / "proj").exists()


def _without_comments(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))


def _requirement_line(target) -> str:
    lines = [ln for ln in (target / "requirements.txt").read_text().splitlines() if ln and not ln.startswith("#")]
    assert len(lines) == 1
    return lines[0]


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
    # The pipeline runs fastscale directly or through the project's Makefile targets (comments aside).
    makefile = _without_comments((target / "Makefile").read_text())
    text = _without_comments(text)
    targets = set(re.findall(r"^([a-z-]+):", makefile, re.M))
    used_targets = {t for line in re.findall(r"\bmake ([a-z -]+)", text) for t in line.split()}
    assert {"validate", "synth", "scan"} <= used_targets <= targets, (used_targets, targets)
    commands = set(re.findall(r"\bfastscale ([a-z][a-z-]+)", text + makefile))
    assert {"validate", "synth", "plan", "deploy", "destroy", "verify-cleanup"} <= commands
    for command in commands:
        result = invoke(command, "--help")
        assert result.exit_code == 0, (command, result.output)
    # options the pipeline passes must exist too
    for command, option in re.findall(r"\bfastscale ([a-z-]+)[^\n]*?(--[a-z-]+)", text + makefile):
        assert option in invoke(command, "--help").output, (command, option)


@pytest.mark.parametrize("ci", ["github", "gitlab"])
def test_scheduled_canary_upgrades_dependencies_and_never_deploys(tmp_path, ci):
    target = tmp_path / "proj"
    assert invoke("init", target, "--project", "p1", "--ci", ci).exit_code == 0
    pipeline = yaml.load((target / CI_FILES[ci]).read_text(), Loader=_PipelineLoader)
    if ci == "github":
        assert "schedule" in pipeline.get("on", pipeline.get(True))  # YAML 1.1 reads the key `on` as true
        jobs = pipeline["jobs"]
        assert jobs["canary"]["if"] == "github.event_name == 'schedule'"
        steps = " ".join(step.get("run", "") for step in jobs["canary"]["steps"])
        # a scheduled run reaches no other job: each names the event it runs on, none of them the schedule
        others = {name: job["if"] for name, job in jobs.items() if name != "canary"}
        assert all("schedule" not in cond and "github.event_name ==" in cond for cond in others.values()), others
    else:
        canary = pipeline["canary"]
        assert canary["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "schedule"'}]
        steps = " ".join(canary["script"])
        for name in ("deploy", "teardown"):
            assert all('$CI_PIPELINE_SOURCE != "schedule"' in rule["if"] for rule in pipeline[name]["rules"]), name
    assert "pip install" in steps and "--upgrade --upgrade-strategy eager -r requirements.txt" in steps
    assert "make validate synth scan" in steps
    assert "fastscale deploy" not in steps and "fastscale destroy" not in steps
