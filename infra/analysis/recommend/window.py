"""A long trace searched on a sample of its hours, and what that shortcut got wrong, measured on the whole trace.

A week of traffic is millions of requests: every candidate replayed on all of it would take hours. So when a
trace holds more than :data:`WHOLE_TRACE_MAX_REQUESTS` requests, ``recommend`` searches on a sample of
:data:`SAMPLE_SLICES` of its hours, then replays the chosen settings on the whole trace, as ``simulate --requests``
would, and reports both: the error of the shortcut on the monthly cost, the TTFT and end-to-end p99 and the share
of rejected requests, and whether the SLO holds on the whole trace. ``recommend --whole-trace`` searches on every
request instead.

The sample is stratified by load: the trace's whole hours are ranked by the prompt and output tokens that arrive
in them and cut into :data:`SAMPLE_SLICES` groups of as many hours each; the middle hour of each group is taken,
and the hours are replayed one after the other from the quietest to the busiest, so the load climbs as it does in
a day instead of jumping between a night and a peak (a jump would leave the new load waiting for copies to start,
which the trace itself never does). Each hour stands for as many hours of the trace, so the sample's mean cost per
hour estimates the whole trace's, quiet hours (and scale to zero) included, and its latencies are those of
requests at every level of load. A trace shorter than ``2 x SAMPLE_SLICES`` hours is cut into slices of whole
minutes instead, each ``1 / (2 x SAMPLE_SLICES)`` of the trace rounded down to a minute. All of this is
fastscale's choice of shortcut, not a property of any workload: the measured error says how far it was off on the
trace at hand (``bench/README.md``: on a week of 3,000,000 requests, the busiest hour alone overstated the monthly
cost by 57.5%, this sample understated it by 1.6%).
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
from fastscale.infra.analysis.simulate.requests.trace import TOKEN_TYPECODE, RequestTrace
from fastscale.infra.analysis.simulate.requests.workload import workload_config
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.resolved import resolve

#: A trace with more requests than this is searched on a sample of its hours (fastscale's choice: a one-hour trace
#: at about 50 requests per second is still searched whole, in minutes on two cores).
WHOLE_TRACE_MAX_REQUESTS = 200_000
#: Slices sampled (fastscale's choice): on a week, 8 hours hold about 4.6% of the requests, 3.5 times the
#: busiest hour's, and the search takes minutes on two cores (bench/README.md).
SAMPLE_SLICES = 8
#: Length of a slice: one hour, as long as the traces recommend was built on.
SLICE_SECONDS = 3600
#: A shorter trace's slices are whole minutes.
STEP_SECONDS = 60


@dataclass(frozen=True)
class SearchWindow:
    """The part of a trace the search ran on: the slices ``[start, start + slice_seconds)`` of the whole trace
    at ``starts``, replayed one after the other in that order (the quietest first)."""

    starts: tuple[int, ...]
    slice_seconds: int
    trace: RequestTrace  # the slices' requests, times from the window's start
    whole: RequestTrace
    slice_requests: tuple[int, ...]
    slice_tokens: tuple[int, ...]
    slices_in_trace: int

    @property
    def seconds(self) -> int:
        return len(self.starts) * self.slice_seconds

    def to_dict(self) -> dict[str, Any]:
        return {
            "slices": [{"start_second": start, "requests": n, "tokens": tokens}
                       for start, n, tokens in zip(self.starts, self.slice_requests, self.slice_tokens, strict=True)],
            "slice_seconds": self.slice_seconds,
            "seconds": self.seconds,
            "requests": len(self.trace),
            "whole_trace_requests": len(self.whole),
            "whole_trace_seconds": self.whole.seconds,
            "whole_trace_slices": self.slices_in_trace,
            "chosen_by": f"the trace's {self.slices_in_trace} whole slices ranked by the prompt and output tokens "
                         f"arriving, cut into {len(self.starts)} equal groups: the middle slice of each, quietest first",
        }


def sample_window(trace: RequestTrace, slices: int | None = None) -> SearchWindow | None:
    """A stratified sample of ``slices`` (default :data:`SAMPLE_SLICES`) slices of the trace, the quietest first
    (see the module's text); None when the trace is short enough to search whole, or too short to be sampled
    (under ``2 x slices`` minutes)."""
    slices = slices or SAMPLE_SLICES
    if len(trace) <= WHOLE_TRACE_MAX_REQUESTS:
        return None
    length = min(SLICE_SECONDS, trace.seconds // (2 * slices) // STEP_SECONDS * STEP_SECONDS)
    if length < STEP_SECONDS:
        return None
    count = trace.seconds // length  # whole slices only: a last, partial one is never taken
    arrivals, prompts, outputs = trace.arrivals, trace.input_tokens, trace.output_tokens
    bounds = [bisect.bisect_left(arrivals, k * length) for k in range(count + 1)]  # slice k: bounds[k:k + 2]
    tokens = [sum(prompts[lo:hi]) + sum(outputs[lo:hi]) for lo, hi in zip(bounds, bounds[1:])]
    ranked = sorted(range(count), key=lambda k: (tokens[k], k))
    picks = [ranked[(2 * j + 1) * count // (2 * slices)] for j in range(slices)]
    times = array("d")
    inputs, outs = array(TOKEN_TYPECODE), array(TOKEN_TYPECODE)
    requests = []
    for j, k in enumerate(picks):
        start, lo, hi = k * length, bounds[k], bounds[k + 1]
        shift = j * length - start
        times.extend(a + shift for a in arrivals[lo:hi])
        inputs.extend(iter(prompts[lo:hi]))  # any sequence of ints, an array of any type code included
        outs.extend(iter(outputs[lo:hi]))
        requests.append(hi - lo)
    part = RequestTrace(arrivals=times, input_tokens=inputs, output_tokens=outs, source=trace.source,
                        format=trace.format)
    return SearchWindow(tuple(k * length for k in picks), length, part, trace, tuple(requests),
                        tuple(tokens[k] for k in picks), count)


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
