"""Choosing the CDK engine: FASTSCALE_ENGINE, else CDK Terrain when installed, else CDK for Terraform.

The suite runs in two environments (`make test` and `make test-terrain`): one with only CDK for Terraform,
one with CDK Terrain added. The tests below hold in both.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.stacks import engine_choice
from fastscale.stacks.engine_choice import ENV_VAR, EngineUnavailable, is_installed, select_engine
from tests.conftest import EXAMPLES

INSTALLED = [m for m in ("cdktf", "cdktn") if is_installed(m)]


def test_unset_prefers_cdk_terrain_when_installed_else_cdk_for_terraform():
    engine = select_engine({})
    assert engine.module == ("cdktn" if is_installed("cdktn") else "cdktf")
    assert engine.version == importlib.metadata.version(engine.module)


@pytest.mark.parametrize("module", INSTALLED)
def test_the_variable_picks_an_installed_engine_whatever_the_preference(module):
    engine = select_engine({ENV_VAR: f" {module.upper()} "})
    assert (engine.module, engine.label) == (module, engine_choice.ENGINES[module])


def test_an_unknown_engine_name_is_refused_with_the_choices():
    with pytest.raises(EngineUnavailable, match="'terraform-cdk' is not an engine.*cdktf.*cdktn"):
        select_engine({ENV_VAR: "terraform-cdk"})


def test_an_unknown_engine_name_is_bad_input_and_writes_nothing(tmp_path):
    # A process of its own: the engine is chosen once per process, when the stacks are first imported.
    out = tmp_path / "out"
    env = {**os.environ, ENV_VAR: "terraform-cdk"}
    code = "import sys; from fastscale.cli.main import cli; cli(sys.argv[1:], prog_name='fastscale')"
    result = subprocess.run([sys.executable, "-c", code, "synth", str(EXAMPLES[0]), "--out", str(out)],
                            capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "'terraform-cdk' is not an engine" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists() or not any(out.iterdir())


def test_asking_for_an_engine_that_is_not_installed_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(engine_choice, "is_installed", lambda module: module != "cdktn")
    with pytest.raises(EngineUnavailable, match=r"CDK Terrain, which is not installed.*fastscale\[terrain\]"):
        select_engine({ENV_VAR: "cdktn"})
    assert select_engine({}).module == "cdktf"  # unset: falls back to what is there


def test_no_engine_at_all_is_an_error_not_a_guess(monkeypatch):
    monkeypatch.setattr(engine_choice, "is_installed", lambda module: False)
    monkeypatch.delenv(ENV_VAR, raising=False)
    with pytest.raises(EngineUnavailable, match="no CDK engine is installed"):
        select_engine({})
    assert engine_choice.engine_summary().startswith("none (no CDK engine")


def test_version_names_fastscale_and_the_engine_without_loading_it():
    code = ("import sys; from fastscale.cli.main import cli; "
            "sys.argv = ['fastscale', '--version']\n"
            "try:\n    cli()\nexcept SystemExit:\n    pass\n"
            "print('loaded:', sorted(m for m in ('cdktf', 'cdktn', 'jsii') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    expected = select_engine()
    assert out.splitlines() == [
        f"fastscale, version {importlib.metadata.version('fastscale')}",
        f"engine: {expected.label} ({expected.module} {expected.version})",
        "loaded: []",
    ]


def test_synth_reports_the_engine_that_wrote_the_stack(tmp_path):
    result = CliRunner().invoke(cli, ["synth", str(EXAMPLES[0]), "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    from fastscale.stacks.engine import ENGINE

    assert summary["engine"] == {"module": ENGINE.module, "name": ENGINE.label, "version": ENGINE.version}
    stamped = json.loads((tmp_path / "stacks" / summary["stack_name"] / "cdk.tf.json").read_text())
    assert stamped["//"]["metadata"]["version"] == ENGINE.version


def test_synth_with_an_engine_it_cannot_load_is_one_line_with_its_exit_code(tmp_path):
    # An engine that exists but is not installed is a failed operation (1); an unknown name is bad input (2).
    missing = "cdktf" if not is_installed("cdktf") else ("cdktn" if not is_installed("cdktn") else None)
    if missing is None:  # both installed: ask for a name that cannot be installed
        env, expected, code_expected = {ENV_VAR: "nope"}, "'nope' is not an engine", 2
    else:
        env, expected, code_expected = {ENV_VAR: missing}, "which is not installed", 1
    code = ("import sys; from fastscale.cli.main import cli; "
            f"sys.argv = ['fastscale', 'synth', {str(EXAMPLES[0])!r}, '--out', {str(tmp_path)!r}]; cli()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **env})
    assert proc.returncode == code_expected
    assert expected in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "stacks").exists()
