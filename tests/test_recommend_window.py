"""A long trace is searched on its busiest hour, and the chosen settings are replayed on the whole trace with the
shortcut's error printed (the thresholds made small here so that a few thousand requests take the long path)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.analysis.recommend import window as rec_window
from fastscale.infra.analysis.simulate.requests.trace import parse_request_trace, read_request_trace
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # simulates long traces whole and on their busiest hour: `make test` runs it, `make test-fast` does not

ZERO = str(ROOT / "examples" / "scale-to-zero-short-tail.yaml")


def rows(quiet_gap: float, busy_gap: float, busy_from: int, busy_to: int, end: int) -> list[str]:
    """A request every ``quiet_gap`` s, every ``busy_gap`` s between ``busy_from`` and ``busy_to``."""
    out, t = [], 0.0
    while t < end:
        busy = busy_from <= t < busy_to
        out.append(f"{t:.2f},{900 if busy else 400},{150 if busy else 60}")
        t += busy_gap if busy else quiet_gap
    return out


def write_trace(path, lines):
    path.write_text("timestamp,input_tokens,output_tokens\n" + "\n".join(lines) + "\n")
    return str(path)


def test_the_busiest_window_holds_the_most_tokens_and_starts_at_zero(monkeypatch):
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 10)
    text = "timestamp,input_tokens,output_tokens\n" + "\n".join(rows(20, 2, 3000, 3600, 7200)) + "\n"
    trace = parse_request_trace(text, "t.csv")
    w = rec_window.busiest_window(trace, 1200)
    assert w is not None and w.whole is trace
    # Windows start on whole minutes. Every window that holds the whole busy stretch (3000-3600) holds the same
    # tokens, give or take a quiet request at either end; the earliest of the busiest is 2400-3600.
    assert w.start == 2400 and w.seconds == 1200
    inside = [a for a in trace.arrivals if 2400 <= a < 3600]
    assert len(w.trace) == len(inside) and w.trace.arrivals[0] == pytest.approx(inside[0] - 2400)
    assert max(w.trace.arrivals) < 1200 and min(w.trace.arrivals) >= 0
    assert sum(w.trace.input_tokens) == sum(p for a, p in zip(trace.arrivals, trace.input_tokens, strict=True)
                                            if 2400 <= a < 3600)


def test_a_short_trace_is_searched_whole(monkeypatch):
    trace = parse_request_trace("timestamp,input_tokens,output_tokens\n" + "\n".join(rows(20, 2, 3000, 3600, 7200))
                                + "\n", "t.csv")
    assert rec_window.busiest_window(trace) is None  # fewer requests than WHOLE_TRACE_MAX_REQUESTS
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 10)
    assert rec_window.busiest_window(trace, 7200) is None  # no longer than the window


def test_recommend_searches_the_busiest_window_and_measures_the_error_on_the_whole_trace(tmp_path, monkeypatch):
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 100)
    monkeypatch.setattr(rec_window, "WINDOW_SECONDS", 1800)
    trace = write_trace(tmp_path / "long.csv", rows(30, 1.5, 5400, 6600, 10800))
    written = tmp_path / "tuned.yaml"
    args = ["recommend", ZERO, "--trace", trace, "--ttft-p99", "30", "--instance-types", "ml.g5.xlarge",
            "--workers", "1", "--json", "--write", str(written)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    check = doc["search_window"]
    whole = read_request_trace(trace)
    assert check["window"]["whole_trace_requests"] == len(whole)
    assert check["window"]["start_second"] + check["window"]["seconds"] >= 6600 > 5400 >= check["window"]["start_second"]
    assert check["on_window"]["settings"] == doc["choice"]["settings"]
    # The search, the baseline included, ran on the window's requests only.
    assert doc["monthly"]["trace_seconds"] <= 1800 and doc["trace"]["requests"] == check["window"]["requests"]
    assert check["window"]["requests"] < len(whole)
    on_window, on_whole = check["on_window"], check["on_whole_trace"]
    # The monthly costs: the window's 1800 s and the whole trace's seconds, each scaled to 730 h.
    assert on_window["monthly_cost_usd"] == pytest.approx(on_window["cost_usd"] * 730 * 3600 / 1800, rel=1e-3)
    assert on_whole["monthly_cost_usd"] == pytest.approx(on_whole["cost_usd"] * 730 * 3600 / whole.seconds, rel=1e-3)
    assert check["error"]["monthly_cost"] == pytest.approx(
        (on_window["monthly_cost_usd"] - on_whole["monthly_cost_usd"]) / on_whole["monthly_cost_usd"], abs=1e-3)
    assert check["error"]["ttft_p99"] == pytest.approx(
        (on_window["ttft_p99_s"] - on_whole["ttft_p99_s"]) / on_whole["ttft_p99_s"], abs=2e-3)
    # The whole-trace figures are what simulate --requests gives for the written config on the whole trace.
    sim = CliRunner().invoke(cli, ["simulate", str(written), "--requests", trace, "--json"])
    assert sim.exit_code == 0, sim.output
    replayed = json.loads(sim.stdout)["simulations"][0]["requests"]
    assert on_whole["ttft_p99_s"] == replayed["ttft_seconds"]["p99"]
    assert on_whole["e2e_p99_s"] == replayed["e2e_seconds"]["p99"]
    assert on_whole["cost_usd"] == pytest.approx(replayed["cost_usd"], abs=1e-4)
    text = CliRunner().invoke(cli, args[:-3] + ["--write", str(tmp_path / "again.yaml")])
    out = " ".join(text.output.split())
    assert "searched on the busiest 0.5 h" in out and "on the whole trace" in out and "error" in out


def test_whole_trace_turns_the_shortcut_off(tmp_path, monkeypatch):
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 100)
    monkeypatch.setattr(rec_window, "WINDOW_SECONDS", 1800)
    trace = write_trace(tmp_path / "long.csv", rows(30, 1.5, 5400, 6600, 10800))
    result = CliRunner().invoke(cli, ["recommend", ZERO, "--trace", trace, "--ttft-p99", "30", "--instance-types",
                                      "ml.g5.xlarge", "--workers", "1", "--json", "--whole-trace"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert "search_window" not in doc and doc["monthly"]["trace_seconds"] == read_request_trace(trace).seconds
