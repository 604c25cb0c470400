"""`fastscale simulate`: output, --json shape, traffic options, --plot, and bad input (exit 2)."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from fastscale.cli.main import COMMANDS, cli
from tests.conftest import EXAMPLES, ROOT

QWEN = str(ROOT / "examples" / "qwen3-8b.yaml")
MULTI = str(ROOT / "examples" / "multi-model.yaml")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(*args):
    return CliRunner().invoke(cli, ["simulate", *args])


def test_registered_with_its_short_help():
    assert COMMANDS["simulate"][0] == "simulate"
    result = CliRunner().invoke(cli, ["--help"])
    assert "simulate" in result.output


def test_help_documents_exit_codes_and_options():
    result = run("--help")
    assert result.exit_code == 0
    for needle in ("Exit codes:", "0  simulated", "2  bad input", "--spike", "--ramp", "--trace", "--service-time", "--json", "--plot", "--every"):
        assert needle in result.output


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_runs_with_the_default_spike_and_prints_the_layer_table(path):
    result = run(str(path))
    assert result.exit_code == 0, result.output
    out = result.output
    for needle in ("demand vs serving capacity", "summary: served", "the same traffic with each layer flipped",
                   "as configured", "60-second metrics instead of 10-second", "no container image caching", "cost"):
        assert needle in out, needle


def test_human_output_for_scale_to_zero_components():
    out = run(MULTI, "--component", "qwen3-8b").output
    assert "shared / qwen3-8b" in out and "llama3-8b" not in out.split("traffic:")[0]
    assert "no-capacity alarm: step policy +1, desired 1" in out
    assert "no-capacity alarm: step policy +1, desired 2" in out  # applied to the desired count, a minute later
    assert "first capacity after" in out and "full capacity after" in out
    assert "warm minimum of one copy (what-if)" in out
    assert "requests rejected with no capacity" in out


def test_json_shape_and_determinism():
    first = run(MULTI, "--json", "--component", "llama3-8b")
    second = run(MULTI, "--json", "--component", "llama3-8b")
    assert first.exit_code == 0, first.output
    assert first.output == second.output
    payload = json.loads(first.output)
    assert set(payload) == {"simulations", "skipped"}
    [sim] = payload["simulations"]
    assert sim["component"] == "llama3-8b" and sim["unit"] == "copy"
    assert [v["name"] for v in sim["variants"]] == ["configured", "metrics", "data_cache", "image_cache", "warm_minimum", "capacity_fallback"]
    configured = sim["variants"][0]
    assert len(configured["steps"]["demand"]) == sim["traffic"]["window_seconds"] == 3600
    assert set(configured["steps"]) >= {"demand", "capacity", "serving_copies", "instances", "queued", "rejected"}
    assert configured["summary"]["served_after_seconds"] > 0
    assert all("steps" not in v for v in sim["variants"][1:])


def test_spike_option_sets_the_traffic():
    # One instance of the example serves what its KV cache holds (dozens of requests): a spike to 60 passes it.
    payload = json.loads(run(QWEN, "--json", "--spike", "4:60@30+600", "--duration", "900").output)
    [sim] = payload["simulations"]
    demand = sim["variants"][0]["steps"]["demand"]
    assert len(demand) == 900 and demand[29] == 4 and demand[30] == 60 and demand[630] == 4
    assert sim["capacity_concurrency"] < 60 and sim["variants"][0]["summary"]["short_at_second"] == 30


def test_ramp_and_trace_options(tmp_path):
    ramp = json.loads(run(QWEN, "--json", "--ramp", "0:12@60-360", "--duration", "1200").output)
    assert ramp["simulations"][0]["traffic"]["kind"] == "ramp"
    trace = tmp_path / "t.csv"
    trace.write_text("second,rps\n0,0\n100,6\n900,0\n")
    result = run(QWEN, "--json", "--trace", str(trace), "--service-time", "10", "--duration", "1500")
    assert result.exit_code == 0, result.output
    sim = json.loads(result.output)["simulations"][0]
    assert sim["traffic"]["kind"] == "trace" and sim["traffic"]["peak_concurrency"] == 60
    assert sim["variants"][0]["summary"]["short_at_second"] == 100


def test_every_option_samples_the_step_table():
    out = run(QWEN, "--every", "600").output
    assert "every 600 s" in out
    for clock in ("0:00", "10:00", "50:00"):
        assert clock in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--spike", "nope"], "expected BASE:PEAK@T"),
        (["--ramp", "0:1@9-3"], "must be after START"),
        (["--spike", "0:1@5", "--ramp", "0:1@1-2"], "one traffic profile"),
        (["--endpoint", "nope"], "no endpoint 'nope'"),
        (["--component", "nope"], "no inference component 'nope'"),
        (["--duration", "30"], "default spike does not fit"),
        (["--service-time", "0"], "--service-time"),
    ],
)
def test_bad_input_exits_2_with_a_clear_error(args, needle):
    result = run(QWEN, *args)
    assert result.exit_code == 2, result.output
    assert needle in result.output
    assert "Traceback" not in result.output


def test_bad_trace_and_bad_config_exit_2(tmp_path, write_yaml, base_config):
    trace = tmp_path / "t.csv"
    trace.write_text("rps\n1\n")
    result = run(QWEN, "--trace", str(trace))
    assert result.exit_code == 2 and "--service-time" in result.output
    assert run(str(tmp_path / "missing.yaml")).exit_code == 2
    base_config["endpoints"][0]["instance_type"] = "ml.c7i.2xlarge"
    result = run(str(write_yaml(base_config)))
    assert result.exit_code == 2 and "no accelerator" in result.output


def test_config_errors_in_json_mode(write_yaml, base_config):
    base_config["endpoints"][0]["model"]["autoscaling"] = {"target_concurrency": 0}
    result = run(str(write_yaml(base_config)), "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["valid"] is False


def test_plot_writes_a_png(tmp_path):
    out = tmp_path / "sim.png"
    result = run(QWEN, "--plot", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(PNG_MAGIC)
    assert f"plot written to {out}" in result.output


def test_plot_to_an_unwritable_place_exits_1(tmp_path):
    result = run(QWEN, "--plot", str(tmp_path / "no-such-dir" / "sim.png"))
    assert result.exit_code == 1 and "cannot write" in result.output


def test_plot_without_matplotlib_exits_1(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    result = run(QWEN, "--plot", str(tmp_path / "x.png"))
    assert result.exit_code == 1 and "fastscale[plot]" in result.output


def test_simulate_imports_no_cdktf_or_boto3():
    import subprocess

    code = (
        "import sys; from click.testing import CliRunner; from fastscale.cli.main import cli; "
        f"r = CliRunner().invoke(cli, ['simulate', {QWEN!r}, '--json']); assert r.exit_code == 0, r.output; "
        "bad = [m for m in ('cdktf', 'jsii', 'boto3', 'matplotlib') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_output_fits_80_columns(path, monkeypatch):
    from tests.cli.test_output_width import assert_fits

    monkeypatch.setenv("COLUMNS", "80")
    result = run(str(path))
    assert result.exit_code == 0, result.output
    assert_fits(result.output)
    assert "summary: served" in result.output and "as configured" in result.output


def test_piped_output_keeps_each_row_on_one_line(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    out = run(MULTI, "--component", "qwen3-8b").output
    rows = [line for line in out.splitlines() if "desired 1;" in line]
    assert len(rows) == 1 and "instance 1 requested" in rows[0]
