"""A long trace searched on its busiest hour, and what that shortcut got wrong, measured on the whole trace.

A week of traffic is millions of requests: every candidate replayed on all of it would take hours. So when a
trace holds more than :data:`WHOLE_TRACE_MAX_REQUESTS` requests, ``recommend`` searches on its busiest window of
:data:`WINDOW_SECONDS` (the most prompt and output tokens arriving, windows starting on whole minutes), then
replays the chosen settings on the whole trace, as ``simulate --requests`` would, and reports both: the error
of the shortcut on the monthly cost, the TTFT and end-to-end p99 and the share of rejected requests, and
whether the SLO holds on the whole trace. ``recommend --whole-trace`` searches on every request instead.

The busiest hour is the hardest on latency, so settings that meet the SLO there usually meet it over the
week; its cost, scaled to a month, is that of a month of busiest hours, so the monthly cost it shows is high.
Both are fastscale's choice of shortcut, not a property of any workload: the measured error says how far it was
off on the trace at hand.
"""

from __future__ import annotations

import bisect
import dataclasses
from array import array
from dataclasses import dataclass
from typing import Any

from fastscale.infra.analysis.recommend.baseline import evaluate_baseline, monthly_factor
from fastscale.infra.analysis.recommend.evaluation import Outcome, evaluate
from fastscale.infra.analysis.recommend.front import Recommendation
from fastscale.infra.analysis.recommend.search import Search
from fastscale.infra.analysis.recommend.settings import candidate_config
from fastscale.infra.analysis.simulate.build import select_workloads
from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.params import load_params as load_simulate_params
from fastscale.infra.analysis.simulate.requests.rates import Profile, service_rates
from fastscale.infra.analysis.simulate.requests.replay import workload_config
from fastscale.infra.analysis.simulate.requests.trace import RequestTrace
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.resolved import resolve

#: A trace with more requests than this is searched on its busiest window (fastscale's choice: a one-hour trace
#: at about 50 requests per second is still searched whole, in minutes on two cores).
WHOLE_TRACE_MAX_REQUESTS = 200_000
#: Length of the window searched (fastscale's choice): one hour, as long as the traces recommend was built on.
WINDOW_SECONDS = 3600
#: Windows start on whole minutes.
STEP_SECONDS = 60


@dataclass(frozen=True)
class SearchWindow:
    """The part of a trace the search ran on: ``[start, start + seconds)`` of the whole trace."""

    start: int
    seconds: int
    trace: RequestTrace  # the window's requests, times from the window's start
    whole: RequestTrace

    def to_dict(self) -> dict[str, Any]:
        return {
            "start_second": self.start,
            "seconds": self.seconds,
            "requests": len(self.trace),
            "whole_trace_requests": len(self.whole),
            "whole_trace_seconds": self.whole.seconds,
            "chosen_by": "the most prompt and output tokens arriving",
        }


def busiest_window(trace: RequestTrace, seconds: int | None = None) -> SearchWindow | None:
    """The window of ``seconds`` (starting on a whole minute) in which the most prompt and output tokens arrive,
    the earliest of equals (default :data:`WINDOW_SECONDS`); None when the trace is short enough to search whole."""
    seconds = seconds or WINDOW_SECONDS
    if len(trace) <= WHOLE_TRACE_MAX_REQUESTS or trace.seconds <= seconds:
        return None
    arrivals, prompts, outputs = trace.arrivals, trace.input_tokens, trace.output_tokens
    per_step = [0] * (trace.seconds // STEP_SECONDS + 1)
    for a, p, o in zip(arrivals, prompts, outputs, strict=True):
        per_step[int(a // STEP_SECONDS)] += p + o
    width = max(1, seconds // STEP_SECONDS)
    total = sum(per_step[:width])
    best, first = total, 0
    for k in range(1, len(per_step) - width + 1):
        total += per_step[k + width - 1] - per_step[k - 1]
        if total > best:
            best, first = total, k
    start = first * STEP_SECONDS
    lo, hi = bisect.bisect_left(arrivals, start), bisect.bisect_left(arrivals, start + seconds)
    part = RequestTrace(
        arrivals=array("d", [a - start for a in arrivals[lo:hi]]),
        input_tokens=prompts[lo:hi],
        output_tokens=outputs[lo:hi],
        source=trace.source,
        format=trace.format,
    )
    return SearchWindow(start, seconds, part, trace)


@dataclass(frozen=True)
class WindowCheck:
    """The chosen settings on the window (what the search saw) and on the whole trace."""

    window: SearchWindow
    searched: Outcome
    whole: Outcome

    def monthly(self) -> tuple[float, float]:
        """(monthly cost from the window, from the whole trace)."""
        return (self.searched.cost_usd * monthly_factor(self.window.trace.seconds),
                self.whole.cost_usd * monthly_factor(self.window.whole.seconds))

    def errors(self) -> dict[str, float | None]:
        """The window's figure against the whole trace's: relative for cost and p99s, in points for rejections."""
        window_month, whole_month = self.monthly()
        return {
            "monthly_cost": _relative(window_month, whole_month),
            "ttft_p99": _relative(self.searched.ttft_p99_s, self.whole.ttft_p99_s),
            "e2e_p99": _relative(self.searched.e2e_p99_s, self.whole.e2e_p99_s),
            "rejected_fraction_points": self.searched.rejected_fraction - self.whole.rejected_fraction,
        }

    def meets(self, ttft_p99: float, max_rejected: float) -> bool:
        o = self.whole
        return (o.error is None and o.ttft_p99_s is not None and o.ttft_p99_s <= ttft_p99
                and o.rejected_fraction <= max_rejected)

    def to_dict(self, ttft_p99: float, max_rejected: float) -> dict[str, Any]:
        window_month, whole_month = self.monthly()
        return {
            "window": self.window.to_dict(),
            "on_window": {**self.searched.to_dict(), "monthly_cost_usd": round(window_month, 2)},
            "on_whole_trace": {**self.whole.to_dict(), "monthly_cost_usd": round(whole_month, 2),
                               "meets_slo": self.meets(ttft_p99, max_rejected)},
            "error": {k: None if v is None else round(v, 4) for k, v in self.errors().items()},
        }


def _relative(estimate: float | None, actual: float | None) -> float | None:
    if estimate is None or actual is None or not actual:
        return None
    return (estimate - actual) / actual


def on_whole_trace(
    search: Search, window: SearchWindow, result: Recommendation, config: FastscaleConfig,
    profile: Profile | None = None, params: SimulateParams | None = None,
) -> WindowCheck:
    """What the search recommends replayed on the whole trace, simulated to the end: the chosen settings (their
    config loaded, their rates worked out for the whole trace's mean request, as ``simulate --requests`` would),
    or the current config when it is the one to keep."""
    params = params or load_simulate_params()
    whole = dataclasses.replace(search, trace=window.whole)
    if result.keep_current and result.baseline is not None and result.baseline.outcome is not None:
        on_whole = evaluate_baseline(whole, config, profile, params).outcome
        assert on_whole is not None  # it was simulated on the window
        return WindowCheck(window, result.baseline.outcome, on_whole)
    assert result.choice is not None
    candidate = result.choice.candidate
    chosen = resolve(candidate_config(search.data, candidate.settings))
    [workload] = select_workloads(chosen, search.endpoint, search.component, sim=params).workloads
    ep, w = workload_config(chosen, workload)
    rates = service_rates(ep, w, workload.capacity, params, profile,
                          mean_request_tokens=window.whole.mean_request_tokens,
                          mean_context_tokens=window.whole.mean_context_tokens)
    return WindowCheck(window, result.choice, evaluate(whole, dataclasses.replace(candidate, rates=rates), params))
