"""The current config as the baseline, monthly costs, and why the chosen settings win.

The baseline is the file as it is, replayed on the same trace with the same engine, routing, time-out and rates
as every candidate (:func:`~fastscale.infra.analysis.simulate.requests.rates.service_rates` of its own shape), to
the end (its share of rejected requests is exact, not a lower bound). Its row shows the current values of every
setting the search varies.

A month is :data:`HOURS_PER_MONTH` hours, ``estimate``'s month (``cost.hours_per_month`` in
``infra/analysis/estimate_params.json``, with its source: AWS's 730-hour pricing convention): a cost over the
trace becomes a monthly cost as if the trace repeated all month, ``x 730 h / trace hours``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastscale.infra.analysis.estimate.params import load_params as load_estimate_params
from fastscale.infra.analysis.recommend.evaluation import Outcome, evaluate
from fastscale.infra.analysis.recommend.search import Candidate, Search
from fastscale.infra.analysis.simulate.build import SimulateInputError, select_workloads
from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.params import load_params as load_simulate_params
from fastscale.infra.analysis.simulate.requests.rates import Profile, copy_accelerators, service_rates
from fastscale.infra.analysis.simulate.requests.trace import RequestInputError
from fastscale.infra.analysis.simulate.requests.workload import workload_config
from fastscale.infra.base import catalog
from fastscale.infra.config import FastscaleConfig, parse_path
from fastscale.infra.model.resolved import resolve

#: Hours in a month of on-demand instance use: the estimate's.
HOURS_PER_MONTH = load_estimate_params().cost.hours_per_month.value


def monthly_factor(trace_seconds: int) -> float:
    """What a cost over a trace of ``trace_seconds`` is multiplied by to be a month's."""
    return HOURS_PER_MONTH * 3600 / max(1, trace_seconds)


def monthly_scaling(trace_seconds: int) -> str:
    """The scaling, said: ``x 730 h / 1.00 h (the trace's 3600 s)``."""
    return f"x {HOURS_PER_MONTH:g} h / {trace_seconds / 3600:.2f} h (the trace's {trace_seconds} s, repeated all month)"


def current_value(config: FastscaleConfig, path: str) -> Any:
    """The loaded config's value at ``path`` (``endpoints[0].autoscaling.metric``), defaults included."""
    node: Any = config
    for part in parse_path(path):
        if isinstance(part, int):
            node = node[part] if isinstance(node, (list, tuple)) and part < len(node) else None
        else:
            node = getattr(node, part, None)
        if node is None:
            return None
    return node


@dataclass(frozen=True)
class Baseline:
    """The current config on the trace: its outcome (``None`` when it cannot be simulated, with ``error``)."""

    settings: dict[str, Any]  # the current values of every setting the search varies
    outcome: Outcome | None
    error: str | None = None

    def meets(self, ttft_p99: float, max_rejected: float) -> bool:
        o = self.outcome
        return (o is not None and o.error is None and o.ttft_p99_s is not None and o.ttft_p99_s <= ttft_p99
                and o.rejected_fraction <= max_rejected)

    def misses(self, ttft_p99: float, max_rejected: float) -> str:
        """Why it misses the SLO, in a few words ("" when it meets it)."""
        o = self.outcome
        if o is None or o.error is not None:
            return f"cannot be simulated ({self.error or (o.error if o else '')})"
        why = []
        if o.rejected_fraction > max_rejected:
            why.append(f"rejects {o.rejected_fraction:.2%} of the requests")
        if o.ttft_p99_s is None:
            why.append("serves no request")
        elif o.ttft_p99_s > ttft_p99:
            why.append(f"reaches a TTFT p99 of {o.ttft_p99_s:.2f} s")
        return " and ".join(why)


def evaluate_baseline(
    search: Search, config: FastscaleConfig, profile: Profile | None = None, params: SimulateParams | None = None,
) -> Baseline:
    """The file as it is, on the search's trace, simulated as a candidate is (to the end)."""
    params = params or load_simulate_params()
    keys: dict[str, None] = {}
    for c in search.candidates:
        keys.update(dict.fromkeys(c.settings))
    settings = {k: current_value(config, k) for k in keys}
    try:
        stack = resolve(config)
        selection = select_workloads(stack, search.endpoint, search.component, sim=params)
        if not selection.workloads:
            raise SimulateInputError("; ".join(selection.skipped) or "nothing to simulate")
        workload = selection.workloads[0]
        ep, w = workload_config(stack, workload)
        rates = service_rates(ep, w, workload.capacity, params, profile,
                              mean_request_tokens=search.trace.mean_request_tokens,
                              mean_context_tokens=search.trace.mean_context_tokens)
    except (SimulateInputError, RequestInputError) as exc:
        return Baseline(settings, None, str(exc))
    spec = catalog.get(ep.instance_type)
    per_instance = 1
    if w.is_component and spec is not None:
        per_instance = max(1, spec.accelerator_count // max(1, copy_accelerators(ep, w)))
    as_is = Candidate(-1, {}, ep.instance_type, per_instance, rates)
    outcome = evaluate(search, as_is, params)
    return Baseline(settings, dataclasses.replace(outcome, candidate=dataclasses.replace(as_is, settings=settings)))


def verdict(
    choice: Outcome | None, baseline: Baseline | None, meeting: Sequence[Outcome], ttft_p99: float, max_rejected: float,
    factor: float,
) -> tuple[str | None, bool]:
    """(one sentence on why the choice wins, whether to keep the current config instead), given the
    candidates that meet the SLO (``meeting``) and the monthly factor."""
    slo = f"the SLO (TTFT p99 <= {ttft_p99:g} s" + (f", at most {max_rejected:.2%} rejected)" if max_rejected else ")")
    if choice is None:
        if baseline is not None and baseline.meets(ttft_p99, max_rejected):
            assert baseline.outcome is not None
            return (f"no candidate searched meets {slo}, but the current settings do, at "
                    f"{_usd(baseline.outcome.cost_usd * factor)}/month: keep them", True)
        return None, False
    choice_month = choice.cost_usd * factor
    if baseline is None:
        return f"cheapest meeting {slo}: {_usd(choice_month)}/month", False
    o = baseline.outcome
    if baseline.meets(ttft_p99, max_rejected):
        assert o is not None
        current = o.cost_usd * factor
        if current <= choice_month:
            return (f"the current settings already meet {slo} at {_usd(current)}/month, no more than the cheapest "
                    f"candidate ({_usd(choice_month)}/month): keep them", True)
        return (f"cheapest meeting {slo}: {_usd(choice_month)}/month vs the current {_usd(current)}/month, which "
                f"meets it too: {_usd(current - choice_month)}/month less", False)
    misses = baseline.misses(ttft_p99, max_rejected)
    costs = "" if o is None or not math.isfinite(o.cost_usd) else f" {_usd(o.cost_usd * factor)}/month"
    lead = (f"the only settings searched that meet {slo}" if len(meeting) == 1
            else f"cheapest of the {len(meeting)} candidates meeting {slo}")
    return f"{lead}: {_usd(choice_month)}/month vs the current{costs}, which {misses}", False


def _usd(x: float) -> str:
    return f"${x:,.0f}" if abs(x) >= 100 else f"${x:,.2f}"
