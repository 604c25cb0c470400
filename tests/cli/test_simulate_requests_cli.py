"""`fastscale simulate --requests`: request-level output, --json shape and bad input (exit 2)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from fastscale.cli.main import cli
from tests.conftest import ROOT

ZERO = str(ROOT / "examples" / "scale-to-zero-short-tail.yaml")
TRACE = str(ROOT / "examples" / "requests-1h-synthetic.csv")


def run(*args):
    return CliRunner().invoke(cli, ["simulate", *args])


def small_trace(tmp_path, rows=200):
    path = tmp_path / "t.csv"
    path.write_text("timestamp,input_tokens,output_tokens\n" + "".join(f"{i * 2},500,100\n" for i in range(rows)))
    return str(path)


def test_prints_latency_percentiles_failures_and_cost(tmp_path):
    result = run(ZERO, "--requests", small_trace(tmp_path))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "latency of served requests" in out and "time to first token" in out and "end to end" in out
    assert "200 of 200 requests served; 0 rejected" in out
    assert "routing least outstanding requests" in out and "$" in out


def test_json_carries_the_latency_the_failures_and_the_cost(tmp_path):
    result = run(ZERO, "--requests", small_trace(tmp_path), "--json", "--timeout", "0.5")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    sim = doc["simulations"][0]
    req = sim["requests"]
    # Every request's 500-token prompt takes a fraction of a second on its own, and a copy whose KV cache holds
    # dozens of 600-token requests never makes one wait for a slot: none times out at 0.5 s.
    assert req["requests"] == 200 and req["timeout_seconds"] == 0.5 and req["rejected"] == 0
    assert set(req["ttft_seconds"]) == {"p50", "p90", "p99", "mean"}
    assert req["rejected"] == req["rejected_no_capacity"] + req["rejected_timeout"]
    assert req["cost_usd"] > 0 and sim["trace"]["format"] == "seconds"
    assert req["rates"]["slots"] == req["rates"]["kv_cache_tokens"] // 600
    assert req["rates"]["token_budget_per_step"] == 2048 and req["rates"]["request_overhead_seconds"] > 0


def test_a_short_timeout_rejects_the_requests_that_wait(tmp_path):
    path = tmp_path / "burst.csv"
    path.write_text("timestamp,input_tokens,output_tokens\n" + "".join(f"{i * 0.01},500,400\n" for i in range(40)))
    # 40 prompts of 500 tokens at once on the two copies the example's maximum allows: 10,000 prompt tokens each,
    # about 3.5 s of prefill; the prompts at the back of a copy's line pass a 2 s time-out and fail.
    doc = json.loads(run(ZERO, "--requests", str(path), "--json", "--timeout", "2").output)
    req = doc["simulations"][0]["requests"]
    assert req["rejected_timeout"] > 0 and req["served"] > 0 and req["ttft_seconds"]["p99"] <= 2


def test_bad_input_exits_2_naming_the_file_and_line(tmp_path):
    missing = run(ZERO, "--requests", str(tmp_path / "nope.csv"))
    assert missing.exit_code == 2 and "trace file not found" in missing.output
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,input_tokens,output_tokens\n0,1,1\n1,one,1\n")
    result = run(ZERO, "--requests", str(bad))
    assert result.exit_code == 2 and "line 3" in result.output and "input_tokens" in result.output
    profile = tmp_path / "p.yaml"
    profile.write_text("max_concurrency: 0\n")
    result = run(ZERO, "--requests", str(tmp_path / "nope.csv"), "--profile", str(profile))
    assert result.exit_code == 2
    result = run(ZERO, "--requests", small_trace(tmp_path), "--profile", str(profile))
    assert result.exit_code == 2 and "max_concurrency" in result.output


def test_options_of_the_other_model_are_refused(tmp_path):
    result = run(ZERO, "--requests", small_trace(tmp_path), "--service-time", "3")
    assert result.exit_code == 2 and "--service-time" in result.output
    result = run(ZERO, "--timeout", "3")
    assert result.exit_code == 2 and "only apply with --requests" in result.output
    result = run(ZERO, "--requests", small_trace(tmp_path), "--trace", small_trace(tmp_path))
    assert result.exit_code == 2 and "one traffic profile" in result.output


def test_the_example_trace_runs(tmp_path):
    result = run(ZERO, "--requests", TRACE, "--json")
    assert result.exit_code == 0
    req = json.loads(result.output)["simulations"][0]["requests"]
    assert req["requests"] > 10_000 and req["served"] + req["rejected"] == req["requests"]
