"""The Pareto front of cost against TTFT p99, and the choice under the SLO.

Among the outcomes of :mod:`~fastscale.infra.analysis.recommend.evaluation` that reject at most ``--max-rejected``
of the requests, the front keeps each candidate no other beats on both cost and TTFT p99; the choice is the
cheapest point of the front within ``--ttft-p99``, or a reason why there is none. The current config, when
given (:mod:`~fastscale.infra.analysis.recommend.baseline`), comes first, every cost also per month, and one
sentence says why the choice wins. The chosen settings are written by
:mod:`~fastscale.infra.analysis.recommend.settings`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastscale.infra.analysis.recommend.baseline import (
    HOURS_PER_MONTH,
    Baseline,
    monthly_factor,
    monthly_scaling,
    verdict,
)
from fastscale.infra.analysis.recommend.evaluation import Outcome
from fastscale.infra.analysis.recommend.search import RecommendInputError, Search


@dataclass(frozen=True)
class Recommendation:
    search: Search
    outcomes: tuple[Outcome, ...]
    pareto: tuple[Outcome, ...]
    choice: Outcome | None
    reason: str | None
    ttft_p99_slo: float
    max_rejected: float
    failed: tuple[Outcome, ...] = field(default=())
    baseline: Baseline | None = None
    #: One sentence: why the choice wins (against the current config), or why the current config stays.
    why: str | None = None
    #: The current config already meets the SLO for no more than the choice (or none does but it): keep it.
    keep_current: bool = False

    @property
    def monthly_factor(self) -> float:
        return monthly_factor(self.search.trace.seconds)

    def monthly(self, o: Outcome) -> float:
        return o.cost_usd * self.monthly_factor

    def _row(self, o: Outcome) -> dict[str, Any]:
        row = o.to_dict()
        row["monthly_cost_usd"] = round(self.monthly(o), 2) if math.isfinite(o.cost_usd) else None
        row["meets_slo"] = (o.error is None and o.ttft_p99_s is not None and o.ttft_p99_s <= self.ttft_p99_slo
                            and o.rejected_fraction <= self.max_rejected)
        return row

    def _baseline_dict(self) -> dict[str, Any] | None:
        b = self.baseline
        if b is None:
            return None
        if b.outcome is None:
            return {"settings": b.settings, "error": b.error, "meets_slo": False}
        row = self._row(b.outcome)
        row.pop("candidate", None)
        return {**row, "error": b.outcome.error}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "baseline": self._baseline_dict(),
            "choice": None if self.choice is None else self._row(self.choice),
            "why": self.why,
            "keep_current": self.keep_current,
            "pareto": [self._row(o) for o in self.pareto],
            "monthly": {"hours_per_month": HOURS_PER_MONTH, "trace_seconds": self.search.trace.seconds,
                        "factor": round(self.monthly_factor, 6), "scaling": monthly_scaling(self.search.trace.seconds)},
            "slo": {"ttft_p99_s": self.ttft_p99_slo, "max_rejected_fraction": self.max_rejected},
            "workload": {"endpoint": self.search.endpoint, "component": self.search.component,
                         "path": self.search.workload_path},
            "trace": self.search.trace.to_dict(),
            "candidates": len(self.outcomes),
            "candidates_failed": len(self.failed),
            "candidates_stopped_early": sum(1 for o in self.outcomes if o.stopped_early),
            "notes": list(self.search.notes),
        }
        if self.choice is None:
            out["reason"] = self.reason
        return out


def pareto_front(outcomes: Iterable[Outcome], max_rejected: float) -> tuple[Outcome, ...]:
    """Cost against TTFT p99 among candidates that reject at most ``max_rejected`` of the requests: no candidate
    on the front is cheaper-or-equal and faster-or-equal than another with one strictly better. One candidate
    per point (the lowest index), cheapest first."""
    eligible = [o for o in outcomes if o.error is None and o.ttft_p99_s is not None and math.isfinite(o.cost_usd)
                and o.rejected_fraction <= max_rejected]
    eligible.sort(key=lambda o: (o.cost_usd, o.ttft_p99_s, o.candidate.index))
    front: list[Outcome] = []
    best = math.inf
    for o in eligible:
        assert o.ttft_p99_s is not None
        if o.ttft_p99_s < best:
            front.append(o)
            best = o.ttft_p99_s
    return tuple(front)


def choose(front: Sequence[Outcome], ttft_p99: float) -> Outcome | None:
    """The cheapest point of the front whose TTFT p99 is within the SLO (the cheapest of every eligible candidate:
    any cheaper one meeting the SLO would be on the front before it)."""
    return next((o for o in front if o.ttft_p99_s is not None and o.ttft_p99_s <= ttft_p99), None)


def recommend(
    search: Search, outcomes: Sequence[Outcome], ttft_p99: float, max_rejected: float, baseline: Baseline | None = None,
) -> Recommendation:
    if not ttft_p99 > 0:
        raise RecommendInputError(f"the TTFT p99 SLO must be above 0 seconds, not {ttft_p99:g}", "--ttft-p99")
    if not 0 <= max_rejected <= 1:
        raise RecommendInputError(f"--max-rejected is a fraction from 0 to 1, not {max_rejected:g}", "--max-rejected")
    if any(o.stopped_early and o.rejected_fraction <= max_rejected for o in outcomes):
        # Stopped under a stricter --max-rejected than this one: such a candidate might be eligible here.
        raise ValueError("outcomes stopped early under a smaller max_rejected: evaluate them with this one")
    front = pareto_front(outcomes, max_rejected)
    choice = choose(front, ttft_p99)
    reason = None
    if choice is None:
        if not front:
            least = min((o.rejected_fraction for o in outcomes if o.error is None), default=None)
            reason = (f"every candidate rejected more than {max_rejected:.2%} of the requests"
                      + (f" (the fewest: {least:.2%})" if least is not None else "")
                      + ": raise --max-rejected, add instance types, or lower the traffic")
        else:
            fastest = front[-1]
            reason = (f"no candidate has a TTFT p99 within {ttft_p99:g} s: the fastest reaches "
                      f"{fastest.ttft_p99_s:.2f} s at ${fastest.cost_usd:,.2f} over the trace; relax the SLO or try "
                      "faster instance types (--instance-types)")
    failed = tuple(o for o in outcomes if o.error is not None)
    meeting = [o for o in outcomes if o.error is None and o.ttft_p99_s is not None and math.isfinite(o.cost_usd)
               and o.rejected_fraction <= max_rejected and o.ttft_p99_s <= ttft_p99]
    why, keep = verdict(choice, baseline, meeting, ttft_p99, max_rejected, monthly_factor(search.trace.seconds))
    return Recommendation(search, tuple(outcomes), front, choice, reason, ttft_p99, max_rejected, failed, baseline,
                          why, keep)
