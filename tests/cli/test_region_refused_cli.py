"""A misspelt region stops every command that validates first, before anything is written or computed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli

TYPO = Path(__file__).resolve().parents[1] / "hostile" / "files" / "region_typo_commercial.yaml"


@pytest.mark.parametrize("command", [["validate"], ["estimate"], ["synth", "--out", "{out}"]])
def test_misspelt_region_is_bad_input_everywhere(tmp_path, command):
    out = tmp_path / "cdktf.out"
    args = [a.replace("{out}", str(out)) for a in command]
    result = CliRunner().invoke(cli, [*args, str(TYPO)] if command[0] != "synth" else [args[0], str(TYPO), *args[1:]])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())
    assert "FS075" in flat and "did you mean us-east-1" in flat and "line 2" in flat
    assert not out.exists()  # synth wrote nothing


def test_json_names_the_line_and_the_fix():
    result = CliRunner().invoke(cli, ["validate", "--json", str(TYPO)])
    (finding,) = json.loads(result.stdout)["files"][0]["findings"]
    assert (finding["code"], finding["path"], finding["line"]) == ("FS075", "region", 2)
    assert finding["hint"].startswith("did you mean us-east-1")


def test_init_refuses_a_misspelt_region_and_writes_nothing(tmp_path):
    target = tmp_path / "proj"
    result = CliRunner().invoke(cli, ["init", str(target), "--region", "cn-nrth-1", "--project", "demo-llm"])
    assert result.exit_code == 2
    assert "did you mean cn-north-1" in " ".join(result.output.split())
    assert not target.exists() or not any(target.iterdir())
