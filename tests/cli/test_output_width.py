"""Every command's human output at COLUMNS=80: no line wider than 80 except an unbreakable token, and the
verdict (✓/✗, the summary line, the live value) still on screen. Piped without COLUMNS, nothing is wrapped."""

from __future__ import annotations

import re

import pytest
import yaml

from fastscale.cli.main import COMMANDS
from tests.aws.factories import deploy_single_model
from tests.cli.support import needs_binary, run
from tests.conftest import ROOT

WIDTH = 80


def assert_fits(text: str, width: int = WIDTH) -> None:
    """A line may be wider than ``width`` only when it is one token that cannot be broken: a word, a path,
    a URI, or a command between backticks, alone on its line after its indentation or label."""
    for line in text.splitlines():
        line = line.rstrip()
        if len(line) <= width:
            continue
        rest = re.sub(r"^\s*(\S+:\s+)?", "", line)
        assert " " not in rest or re.fullmatch(r"`[^`]*`\S*", rest), f"line of {len(line)} > {width}: {line!r}"


@pytest.fixture
def narrow(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))


def _broken_config(project) -> None:
    data = yaml.safe_load((ROOT / "examples" / "multi-model.yaml").read_text())
    data["endpoints"][0]["instance_type"] = "ml.g6.13xlarge"
    for component in data["endpoints"][0]["inference_components"]:
        component["copies"]["min"] = 9
    (project / "bad.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def test_validate_findings_stack_at_80_columns_and_keep_every_verdict(project, narrow):
    _broken_config(project)
    result = run("validate", "bad.yaml")
    assert result.exit_code == 2
    assert_fits(result.stdout)
    assert "✗ bad.yaml: invalid" in result.stdout
    # Every finding keeps its code and its whole path on one line; nothing is cut to an ellipsis.
    assert re.search(r"^FS001 line \d+, endpoints\[0\]\.instance_type$", result.stdout, flags=re.M)
    assert re.search(r"^FS009 line \d+, endpoints\[0\]\.inference_components\[2\]\.copies\.min$", result.stdout, flags=re.M)
    assert "…" not in result.stdout


def test_validate_is_a_table_when_it_fits_and_one_line_per_row_when_piped(project, monkeypatch):
    _broken_config(project)
    monkeypatch.setenv("COLUMNS", "250")
    wide = run("validate", "bad.yaml").stdout
    assert "┃ code" in wide and max(len(line) for line in wide.splitlines()) <= 250
    monkeypatch.delenv("COLUMNS")
    piped = run("validate", "bad.yaml").stdout
    # No width given: rows are never wrapped, so each finding is on a single line a grep finds.
    assert len([line for line in piped.splitlines() if "FS009" in line]) == 3
    assert any("set min to at most 4" in line and "endpoints[0].inference_components[0]" in line
               for line in piped.splitlines())


def test_schema_errors_and_long_messages_wrap_at_spaces(project, narrow):
    (project / "typo.yaml").write_text("project: demo\nregion: us-east-1\nendpoints: []\nregoin: x\n")
    result = run("validate", "typo.yaml")
    assert result.exit_code == 2
    assert_fits(result.stderr)
    assert "regoin" in result.stderr


def test_estimate_fits_80_columns(project, narrow):
    for example in ("multi-model", "qwen3-8b", "inferentia"):
        result = run("estimate", str(ROOT / "examples" / f"{example}.yaml"))
        assert result.exit_code == 0, result.output
        assert_fits(result.stdout)
        assert "total" in result.stdout and "$ per month" in result.stdout
    what_if = run("estimate", "--instance-type", "ml.g6.2xlarge", "--model-size-gb", "16")
    assert what_if.exit_code == 0 and "$ per month" in what_if.stdout
    assert_fits(what_if.stdout)


def test_synth_detection_keeps_whole_names_at_80_columns(project, narrow, tmp_path):
    result = run("synth", str(ROOT / "examples" / "multi-model.yaml"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout)
    assert "assist-shared assist-qwen3-8b" in result.stdout and "scale-out detect: ~30 s" in result.stdout
    assert "…" not in result.stdout and "✓ wrote" in result.stdout


def test_init_fits_80_columns_and_prints_each_command_whole(tmp_path, narrow, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("init", "newproj")
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout)
    assert "  fastscale deploy newproj/fastscale.yaml" in result.stdout.splitlines()


@needs_binary
def test_stack_commands_fit_80_columns_with_their_verdicts(project, synth, aws, narrow):
    deploy_single_model(aws, metric="SageMakerVariantInvocationsPerInstance")  # one check differs
    plan = run("plan", "fastscale.yaml")
    assert plan.exit_code == 0 and "Plan:" in plan.stdout
    assert_fits(plan.stdout)
    assert_fits(plan.stderr)

    deploy = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert deploy.exit_code == 1
    status = run("status", "fastscale.yaml")
    assert status.exit_code == 1
    for result in (deploy, status):
        assert_fits(result.stdout)
        assert_fits(result.stderr)
        # The verdict of each check, the live value and the expected one are all on screen.
        assert "✗ endpoint-config/" in result.stdout or "✗ scaling-policy/" in result.stdout
        assert "live: SageMakerVariantInvocationsPerInstance" in result.stdout
        assert "SageMakerVariantConcurrentRequestsPerModelHighResolution" in result.stdout
        assert "checks differ from the config" in result.stdout

    destroy = run("destroy", "fastscale.yaml", "--auto-approve")
    assert destroy.exit_code == 1  # the endpoint is still in the account (moto)
    assert_fits(destroy.stdout)
    assert "`fastscale sweep fastscale.yaml --dry-run`" in destroy.stdout
    dry = run("sweep", "fastscale.yaml", "--dry-run")
    assert dry.exit_code == 0
    assert_fits(dry.stdout)
    assert "would-delete endpoint demo-chat" in dry.stdout


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_fits_80_columns_and_documents_exit_codes(command, narrow):
    result = run(command, "--help")
    assert result.exit_code == 0
    assert_fits(result.stdout)
    assert "Exit codes:" in result.stdout


def _help_codes(command: str) -> set[str]:
    text = run(command, "--help").stdout
    block = text.split("Exit codes:", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"^\s+(\d+)\s", block, flags=re.M))


def test_readme_lists_the_exit_codes_each_help_documents():
    readme = (ROOT / "README.md").read_text()
    cell = r"(?:[^|]|\\\|)*"  # a table cell; `\|` is a pipe inside it
    rows = dict(re.findall(rf"^\| `fastscale ([a-z-]+){cell}\|{cell}\| ([^|]+) \|$", readme, flags=re.M))
    assert set(rows) == set(COMMANDS)
    for command, codes in rows.items():
        assert set(re.findall(r"\b(0|1|2|3)\b", codes)) == _help_codes(command) - {"130"}, command
    assert "130 when interrupted" in readme


def test_readme_shows_every_flag_required_without_a_terminal():
    """A command whose --help says an option is required without a terminal shows it in its README row: the
    README is where a CI author copies the command line from."""
    readme = (ROOT / "README.md").read_text()
    rows = dict(re.findall(r"^\| `fastscale ([a-z-]+)([^`]*)`", readme, flags=re.M))
    # the command's own option (other commands' help may show it in an example of what to run next)
    needs = {c for c in COMMANDS if "--auto-approve" in run(c, "--help").stdout.partition("Options:")[2]}
    assert needs >= {"deploy", "destroy", "sweep"}
    assert {c for c in needs if "--auto-approve" not in rows[c]} == set()


def test_a_closed_pipe_ends_quietly_with_141(project):
    """`fastscale validate ... | head -1`: the reader goes away while output is still coming."""
    import subprocess
    import sys
    from pathlib import Path

    _broken_config(project)
    binary = Path(sys.executable).with_name("fastscale")
    proc = subprocess.Popen([str(binary), "validate", *["bad.yaml"] * 300], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()  # as `head -1` does after its line
    _, err = proc.communicate(timeout=60)
    assert first.strip().endswith(b" errors")
    assert proc.returncode == 141, err
    assert b"Traceback" not in err and b"BrokenPipe" not in err and err == b""


def test_recommend_and_request_simulation_fit_80_columns(narrow, tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("timestamp,input_tokens,output_tokens\n"
                     + "".join(f"{120 + i * 1.5:.1f},{700 + i % 300},{100 + i % 120}\n" for i in range(300)))
    example = str(ROOT / "examples" / "scale-to-zero-short-tail.yaml")
    result = run("recommend", example, "--trace", str(trace), "--ttft-p99", "30", "--instance-types", "ml.g5.xlarge",
                 "--workers", "1")
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout)
    assert "meeting the SLO (TTFT p99 <= 30 s)" in " ".join(result.stdout.split())
    assert "now\n" in result.stdout  # the current config's row, stacked at 80 columns
    result = run("simulate", example, "--requests", str(trace))
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout)
    assert "requests served" in result.stdout
