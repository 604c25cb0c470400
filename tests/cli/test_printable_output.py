"""Control characters from a config, a file name, an AWS answer or Terraform reach a terminal as visible escapes,
never as instructions to it; --json keeps the text exact (JSON escapes them itself)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.cli.output import console, say
from fastscale.cli.progress import Reporter
from fastscale.infra.base.printable import printable
from fastscale.infra.terraform.runner import TerraformEvent
from tests.cli.support import FixtureSynth, needs_binary, run
from tests.hostile.capture import CaptureServer

#: Whatever a terminal would act on: C0 controls but tab and line feed, DEL, C1 (CSI 0x9b), bidi overrides.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
CONFIG = ("project: demo\nregion: us-east-1\nendpoints:\n  - name: chat\n    instance_type: ml.g6.2xlarge\n"
          "    model:\n      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0\n")
#: A title change, a screen clear, a bell, CSI in its one-byte form, a backspace and an override.
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b31m\x08\u202e"


def test_printable_shows_every_control_character_and_keeps_the_layout():
    assert printable("a\x1b[31mb") == "a\\x1b[31mb"
    assert printable("\x00\x07\x08\x0b\x0c\x0d\x1b\x7f\x80\x9b\x9f") == (
        "\\x00\\x07\\x08\\x0b\\x0c\\x0d\\x1b\\x7f\\x80\\x9b\\x9f")
    assert printable("right\u202eleft\u2066\u2028") == "right\\u202eleft\\u2066\\u2028"
    assert printable("line\r\nnext\tcol") == "line\nnext\tcol"
    assert printable("plain é ü 漢字 ✓") == "plain é ü 漢字 ✓"
    once = printable(HOSTILE)
    assert printable(once) == once and not RAW_CONTROL.search(once)


def test_the_console_shows_control_characters_from_markup_text_and_tables(capsys):
    from rich.table import Table
    from rich.text import Text

    say(f"message {HOSTILE}")
    out = console()
    out.print(Text(f"text {HOSTILE}"))
    table = Table()
    table.add_column("name")
    table.add_row(f"cell {HOSTILE}")
    out.print(table)
    shown = capsys.readouterr().out
    assert not RAW_CONTROL.search(shown)
    # A Text built by hand has lost BEL and backspace to rich already; the rest is shown, as in the others.
    assert shown.count("\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\x08\\u202e") == 2
    assert "text \\x1b]0;owned\\x1b[2J\\x9b31m\\u202e" in shown


def test_a_config_key_with_escape_sequences_is_shown_escaped_and_kept_exact_in_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fastscale.yaml").write_text(
        'project: demo\nregion: us-east-1\n"\\e]0;owned\\a\\e[2Jkey\\x9b": 1\nendpoints: []\n')
    text = CliRunner().invoke(cli, ["validate", "fastscale.yaml"])
    assert text.exit_code == 2
    assert not RAW_CONTROL.search(text.output) and "\\x1b]0;owned\\x07\\x1b[2Jkey\\x9b" in text.output
    as_json = CliRunner().invoke(cli, ["validate", "--json", "fastscale.yaml"])
    paths = [f["path"] for f in json.loads(as_json.stdout)["files"][0]["findings"]]
    assert "\x1b]0;owned\x07\x1b[2Jkey\x9b" in paths


def test_a_file_name_with_escape_sequences_is_shown_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fastscale.yaml").write_text(CONFIG)
    result = CliRunner().invoke(cli, ["simulate", "--trace", f"trace{HOSTILE}.csv", "fastscale.yaml"])
    assert result.exit_code == 2
    assert not RAW_CONTROL.search(result.output) and "trace\\x1b]0;owned" in result.output


def test_a_file_name_in_a_usage_error_is_shown_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fastscale.yaml").write_text(CONFIG)
    (tmp_path / f"out{HOSTILE}.yaml").write_text("taken")
    result = CliRunner().invoke(cli, ["recommend", "fastscale.yaml", "--trace", "t.csv", "--ttft-p99", "1",
                                      "--write", f"out{HOSTILE}.yaml"])
    assert result.exit_code == 2 and "give --force" in result.output  # Click's usage error, with the name
    assert not RAW_CONTROL.search(result.output) and "out\\x1b]0;owned" in result.output


@pytest.fixture
def hostile_aws():
    server = CaptureServer(error={"__type": "AccessDeniedException", "message": f"denied {HOSTILE} here"}).start()
    yield server
    server.stop()


def test_an_aws_error_message_with_escape_sequences_is_shown_escaped(tmp_path, monkeypatch, hostile_aws):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fastscale.yaml").write_text(CONFIG)
    args = ["status", "fastscale.yaml", "--endpoint-url", hostile_aws.url]
    text = CliRunner().invoke(cli, args)
    assert text.exit_code == 1
    assert "denied \\x1b]0;owned\\x07" in text.stderr and not RAW_CONTROL.search(text.output)
    as_json = CliRunner().invoke(cli, [*args, "--json"])
    assert f"denied {HOSTILE} here" in json.loads(as_json.stdout)["error"]


def test_terraform_events_with_escape_sequences_are_shown_escaped(capsys):
    reporter = Reporter()
    reporter.terraform_event(TerraformEvent("apply_errored", f"terraform_data.x: failed {HOSTILE}", "terraform_data.x"))
    reporter.close()
    shown = capsys.readouterr().err
    assert "failed \\x1b]0;owned" in shown and not RAW_CONTROL.search(shown)


@needs_binary
def test_terraform_diagnostics_with_escape_sequences_are_shown_escaped(runtime, project, aws):
    # A provisioner whose output (part of Terraform's error text) is an escape sequence.
    command = "printf '\\033]0;owned\\007\\033[2J' >&2; exit 1"
    runtime.use(synthesize=FixtureSynth({"resource": {"terraform_data": {
        "noisy": {"input": "x", "provisioner": [{"local-exec": {"command": command}}]}}}}))
    result = run("deploy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 1 and "local-exec provisioner error" in result.stderr
    assert "\\x1b]0;owned\\x07\\x1b[2J" in result.stderr and not RAW_CONTROL.search(result.output)
    as_json = run("deploy", "fastscale.yaml", "--auto-approve", "--json")
    details = [d["detail"] for d in json.loads(as_json.stdout)["terraform"]["diagnostics"]]
    assert any("\x1b]0;owned\x07\x1b[2J" in d for d in details)
