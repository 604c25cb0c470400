"""A long trace is searched on a sample of its hours (one from each group of hours ranked by load, quietest first),
and the chosen settings are replayed on the whole trace with the shortcut's error printed (the thresholds made
small here so that a few thousand requests take the long path)."""

from __future__ import annotations

import json
from array import array

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.analysis.recommend import window as rec_window
from fastscale.infra.analysis.simulate.requests.trace import RequestTrace, parse_request_trace, read_request_trace
from tests.conftest import ROOT

pytestmark = pytest.mark.slow  # simulates long traces whole and on a sample of them: `make test` runs it, `make test-fast` does not

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


def minutes_trace(requests_per_minute: list[int]) -> RequestTrace:
    """Minute ``m`` holds ``requests_per_minute[m]`` requests of 1000 + m prompt and 10 output tokens, spread
    evenly, the last 0.25 s before the minute's end (so the trace's seconds are whole minutes)."""
    arrivals, prompts = [], []
    for m, n in enumerate(requests_per_minute):
        arrivals += [m * 60 + 60 * (i + 1) / n - 0.25 for i in range(n)]
        prompts += [1000 + m] * n
    return RequestTrace(array("d", arrivals), array("I", prompts), array("I", [10] * len(prompts)), "t.csv", "seconds")


def test_the_sample_takes_the_middle_slice_of_each_group_quietest_first(monkeypatch):
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 10)
    monkeypatch.setattr(rec_window, "SLICE_SECONDS", 60)
    # 32 minutes, minute m with counts[m] requests: the counts are 1..32 shuffled, so minute m ranks counts[m] - 1
    # by tokens (counts[m] x (1010 + m): the count decides). Four groups of eight ranks; their middles are ranks 4, 12, 20 and 28: counts 5, 13, 21 and 29.
    counts = [(7 * m) % 32 + 1 for m in range(32)]
    trace = minutes_trace(counts)
    w = rec_window.sample_window(trace, 4)
    assert w is not None and w.whole is trace and w.slice_seconds == 60 and w.slices_in_trace == 32
    picked = [counts.index(c) for c in (5, 13, 21, 29)]
    assert list(w.starts) == [m * 60 for m in picked]
    assert list(w.slice_requests) == [5, 13, 21, 29] and len(w.trace) == 5 + 13 + 21 + 29
    # Replayed one after the other: slice j's requests, their offsets in their minute kept, at j minutes.
    expected = [(j * 60 + a - m * 60, 1000 + m) for j, m in enumerate(picked)
                for a, p in zip(trace.arrivals, trace.input_tokens, strict=True) if m * 60 <= a < m * 60 + 60]
    assert list(w.trace.arrivals) == pytest.approx([a for a, _ in expected], abs=1e-9)
    assert list(w.trace.input_tokens) == [p for _, p in expected]
    assert list(w.slice_tokens) == [c * (1000 + m + 10) for c, m in zip((5, 13, 21, 29), picked, strict=True)]
    assert w.trace.seconds <= w.seconds == 240 and w.to_dict()["slices"][0]["start_second"] == picked[0] * 60


def test_a_trace_under_twice_the_sample_in_hours_is_sampled_in_slices_of_whole_minutes(monkeypatch):
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 10)
    trace = minutes_trace([3] * 120)  # two hours
    w = rec_window.sample_window(trace, 8)
    # 7200 s / 16 = 450 s, down to whole minutes: 420 s slices, 17 of them whole (the last 60 s never taken).
    assert w is not None and w.slice_seconds == 420 and w.slices_in_trace == 17 and len(w.starts) == 8
    assert all(start % 420 == 0 and start + 420 <= 7200 for start in w.starts) and len(set(w.starts)) == 8
    assert rec_window.sample_window(minutes_trace([3] * 15), 8) is None  # under 16 minutes: no whole-minute slices


def test_a_short_trace_is_searched_whole(monkeypatch):
    trace = parse_request_trace("timestamp,input_tokens,output_tokens\n" + "\n".join(rows(20, 2, 3000, 3600, 7200))
                                + "\n", "t.csv")
    assert rec_window.sample_window(trace) is None  # fewer requests than WHOLE_TRACE_MAX_REQUESTS
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 10)
    assert rec_window.sample_window(trace) is not None


def test_recommend_searches_the_sample_and_measures_the_error_on_the_whole_trace(tmp_path, monkeypatch):
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 100)
    monkeypatch.setattr(rec_window, "SAMPLE_SLICES", 3)  # 10,800 s: six slices of 1800 s, three sampled
    trace = write_trace(tmp_path / "long.csv", rows(30, 1.5, 5400, 6600, 10800) + ["10799.5,400,60"])
    written = tmp_path / "tuned.yaml"
    args = ["recommend", ZERO, "--trace", trace, "--ttft-p99", "30", "--instance-types", "ml.g5.xlarge",
            "--workers", "1", "--json", "--write", str(written)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    check = doc["search_window"]
    whole = read_request_trace(trace)
    assert check["window"]["whole_trace_requests"] == len(whole)
    # Six slices ranked by tokens: four quiet ones of 60 requests (the earliest first), 9000-10800 (one more),
    # 5400-7200 (busy). The middles of the three pairs of ranks, quietest first: 1800, 7200, 5400.
    slices = check["window"]["slices"]
    assert [s["start_second"] for s in slices] == [1800, 7200, 5400] and check["window"]["slice_seconds"] == 1800
    assert [s["requests"] for s in slices[:2]] == [60, 60] and slices[2]["requests"] > 800
    assert check["on_window"]["settings"] == doc["choice"]["settings"]
    # The search, the baseline included, ran on the window's requests only.
    assert doc["monthly"]["trace_seconds"] <= 5400 and doc["trace"]["requests"] == check["window"]["requests"]
    assert check["window"]["requests"] < len(whole)
    on_window, on_whole = check["on_window"], check["on_whole_trace"]
    # The monthly costs: the window's seconds and the whole trace's, each scaled to 730 h.
    window_seconds = doc["monthly"]["trace_seconds"]
    assert on_window["monthly_cost_usd"] == pytest.approx(on_window["cost_usd"] * 730 * 3600 / window_seconds, rel=1e-3)
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
    assert "searched on 3 sampled slices of 30 min" in out and "starting at seconds" in out
    assert "on the whole trace" in out and "error" in out


def test_whole_trace_turns_the_shortcut_off(tmp_path, monkeypatch):
    monkeypatch.setattr(rec_window, "WHOLE_TRACE_MAX_REQUESTS", 100)
    monkeypatch.setattr(rec_window, "SAMPLE_SLICES", 3)
    trace = write_trace(tmp_path / "long.csv", rows(30, 1.5, 5400, 6600, 10800))
    result = CliRunner().invoke(cli, ["recommend", ZERO, "--trace", trace, "--ttft-p99", "30", "--instance-types",
                                      "ml.g5.xlarge", "--workers", "1", "--json", "--whole-trace"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert "search_window" not in doc and doc["monthly"]["trace_seconds"] == read_request_trace(trace).seconds
