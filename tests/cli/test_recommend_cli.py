"""`fastscale recommend`: the front, the choice, --json, --write, and bad input (exit 2)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fastscale.cli.main import COMMANDS, cli
from tests.conftest import ROOT

ZERO = str(ROOT / "examples" / "scale-to-zero-short-tail.yaml")
QWEN = str(ROOT / "examples" / "qwen3-8b.yaml")
MULTI = str(ROOT / "examples" / "multi-model.yaml")
TRACE = str(ROOT / "examples" / "requests-1h-synthetic.csv")


def run(*args):
    return CliRunner().invoke(cli, ["recommend", *args])


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "t.csv"
    rows = [f"{120 + i * 1.5:.1f},{700 + i % 300},{100 + i % 120}" for i in range(500)]
    path.write_text("timestamp,input_tokens,output_tokens\n" + "\n".join(rows) + "\n")
    return str(path)


def fast(*args):
    return run(*args, "--instance-types", "ml.g5.xlarge", "--workers", "1")


def test_registered_with_exit_codes_in_its_help():
    assert COMMANDS["recommend"][0] == "recommend"
    out = run("--help").output
    for needle in ("Exit codes:", "--trace", "--ttft-p99", "--max-rejected", "--instance-types", "--write", "--json"):
        assert needle in out


def test_prints_the_front_and_the_cheapest_choice(trace):
    result = fast(ZERO, "--trace", trace, "--ttft-p99", "30")
    assert result.exit_code == 0, result.output
    assert "Pareto front" in result.output and "meeting the SLO (TTFT p99 <= 30 s)" in result.output
    assert "endpoints[0].inference_components[0].autoscaling.target_concurrency:" in result.output


def test_json_shape_and_a_null_choice_with_its_reason(trace):
    ok = fast(ZERO, "--trace", trace, "--ttft-p99", "30", "--json")
    assert ok.exit_code == 0
    doc = json.loads(ok.stdout)
    assert set(doc) >= {"choice", "pareto"}
    for c in [doc["choice"], *doc["pareto"]]:
        assert set(c) >= {"settings", "cost_usd", "ttft_p99_s", "e2e_p99_s", "rejected_fraction"}
    assert doc["choice"] in doc["pareto"] and doc["choice"]["ttft_p99_s"] <= 30
    none = fast(ZERO, "--trace", trace, "--ttft-p99", "0.001", "--json")
    assert none.exit_code == 1
    doc = json.loads(none.stdout)
    assert doc["choice"] is None and "no candidate has a TTFT p99 within 0.001 s" in doc["reason"]


def test_write_gives_a_config_that_validates_and_never_overwrites(trace, tmp_path):
    out = tmp_path / "tuned.yaml"
    result = fast(ZERO, "--trace", trace, "--ttft-p99", "30", "--write", str(out))
    assert result.exit_code == 0, result.output
    assert "comments kept" in result.output
    validated = CliRunner().invoke(cli, ["validate", str(out)])
    assert validated.exit_code == 0 and "valid" in validated.output
    text = out.read_text()
    assert "# An internal assistant used in bursts." in text
    again = fast(ZERO, "--trace", trace, "--ttft-p99", "30", "--write", str(out))
    assert again.exit_code == 2 and "exists" in again.output and out.read_text() == text
    forced = fast(ZERO, "--trace", trace, "--ttft-p99", "10", "--write", str(out), "--force")
    assert forced.exit_code == 0
    copy = tmp_path / "in.yaml"
    copy.write_text((ROOT / "examples" / "scale-to-zero-short-tail.yaml").read_text())
    before = copy.read_text()
    refused = fast(str(copy), "--trace", trace, "--ttft-p99", "30", "--write", str(copy), "--force")
    assert refused.exit_code == 2 and "input file" in refused.output and copy.read_text() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--ttft-p99", "0"), "--ttft-p99"),
        (("--ttft-p99", "-1"), "--ttft-p99"),
        (("--ttft-p99", "2", "--instance-types", "ml.g9.huge"), "unknown instance type"),
        (("--ttft-p99", "2", "--max-rejected", "2"), "--max-rejected"),
    ],
)
def test_bad_options_exit_2(trace, args, message):
    result = run(ZERO, "--trace", trace, *args)
    assert result.exit_code == 2 and message in result.output


def test_bad_traces_exit_2_with_the_line(tmp_path):
    missing = run(ZERO, "--trace", str(tmp_path / "none.csv"), "--ttft-p99", "2")
    assert missing.exit_code == 2 and "trace file not found" in missing.output
    bad = tmp_path / "bad.csv"
    bad.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,10,2\n2023-11-16 18:15:47,ten,2\n")
    result = run(ZERO, "--trace", str(bad), "--ttft-p99", "2")
    assert result.exit_code == 2 and "line 3" in result.output and "ContextTokens" in result.output


def test_several_workloads_need_a_selection(trace):
    result = run(MULTI, "--trace", trace, "--ttft-p99", "5")
    assert result.exit_code == 2 and "--component" in result.output
    unknown = run(MULTI, "--trace", trace, "--ttft-p99", "5", "--component", "nope")
    assert unknown.exit_code == 2 and "no inference component 'nope'" in unknown.output
    chosen = run(MULTI, "--trace", trace, "--ttft-p99", "30", "--component", "mistral-7b", "--workers", "1", "--json")
    assert chosen.exit_code in (0, 1)
    assert json.loads(chosen.stdout)["workload"]["component"] == "mistral-7b"


def test_single_model_endpoint(trace):
    result = run(QWEN, "--trace", trace, "--ttft-p99", "30", "--instance-types", "ml.g6.2xlarge", "--workers", "1", "--json")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and "endpoints[0].instances.min" in doc["choice"]["settings"]


@pytest.mark.slow  # the search over the bundled hour-long trace
def test_the_example_hour_gives_a_front_a_monotone_choice_and_a_valid_config(tmp_path):
    out = tmp_path / "tuned.yaml"
    result = run(ZERO, "--trace", TRACE, "--ttft-p99", "5", "--instance-types", "ml.g5.xlarge", "--workers", "2",
                 "--json", "--write", str(out))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    front = doc["pareto"]
    for a in front:
        for b in front:
            assert a is b or not (a["cost_usd"] <= b["cost_usd"] and a["ttft_p99_s"] <= b["ttft_p99_s"])
    costs = [next((c["cost_usd"] for c in front if c["ttft_p99_s"] <= slo), None) for slo in (60, 10, 5, 2, 1, 0.5)]
    found = [c for c in costs if c is not None]
    assert found == sorted(found) and doc["choice"]["cost_usd"] == costs[2]
    assert CliRunner().invoke(cli, ["validate", str(out)]).exit_code == 0
