"""Every candidate of a search simulated, request by request, on all cores; and the two shortcuts.

A candidate is its whole config (:func:`~fastscale.infra.analysis.recommend.settings.candidate_config`) replayed
on the trace by :mod:`~fastscale.infra.analysis.simulate.requests.replay`; :class:`Outcome` keeps what the front
compares (cost, TTFT and end-to-end p99, the share of requests rejected). Two shortcuts change no outcome
(tests/test_recommend_fast.py holds them to the slow path):

- candidates that differ only in their minimum share one run when the minimum never bound
  (:func:`evaluate_group`, ``Result.minimum_bound`` in :mod:`~fastscale.infra.analysis.simulate.result`);
- with ``max_rejected`` a run stops once it failed more requests than that allows (:func:`failure_limit`); such a
  candidate can be neither on the front nor chosen.

Candidates run on all cores (``concurrent.futures.ProcessPoolExecutor``); each result lands at its
candidate's index and random routing is seeded the same for every candidate, so the outcome does not depend
on the number of workers. :mod:`~fastscale.infra.analysis.recommend.front` chooses among the outcomes.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from fastscale.infra.analysis.recommend.search import Candidate, Search
from fastscale.infra.analysis.recommend.settings import candidate_config
from fastscale.infra.analysis.simulate.build import SimulateInputError, Workload, select_workloads
from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.params import load_params as load_simulate_params
from fastscale.infra.analysis.simulate.requests.replay import FailureLimitExceeded, simulate_requests
from fastscale.infra.analysis.simulate.spec import SimSpec
from fastscale.infra.config import ConfigError
from fastscale.infra.model.resolved import resolve


@dataclass(frozen=True)
class Outcome:
    candidate: Candidate
    cost_usd: float
    ttft_p99_s: float | None
    e2e_p99_s: float | None
    rejected_fraction: float
    peak_copies: int
    peak_instances: int
    error: str | None = None
    #: The simulation stopped once more requests had failed than ``--max-rejected`` allows: the candidate cannot
    #: be chosen nor be on the front, its latencies and cost are unknown (None / inf) and ``rejected_fraction`` is
    #: what had failed by then (a lower bound).
    stopped_early: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.candidate.settings,
            "cost_usd": round(self.cost_usd, 4),
            "ttft_p99_s": None if self.ttft_p99_s is None else round(self.ttft_p99_s, 3),
            "e2e_p99_s": None if self.e2e_p99_s is None else round(self.e2e_p99_s, 3),
            "rejected_fraction": round(self.rejected_fraction, 6),
            "instance_type": self.candidate.instance_type,
            "copies_per_instance": self.candidate.copies_per_instance,
            "peak_copies": self.peak_copies,
            "peak_instances": self.peak_instances,
            "candidate": self.candidate.index,
        }


def failure_limit(requests: int, max_rejected: float) -> int:
    """The most failed requests a candidate may have and still count as ``rejected_fraction <= max_rejected``
    (computed the same way as the front's check, so the two never disagree at the boundary)."""
    k = min(requests, max(0, math.floor(max_rejected * requests)))
    while k < requests and (k + 1) / requests <= max_rejected:
        k += 1
    while k > 0 and k / requests > max_rejected:
        k -= 1
    return k


def evaluate(
    search: Search, candidate: Candidate, params: SimulateParams | None = None, max_rejected: float | None = None
) -> Outcome:
    """Simulate one candidate: its whole config, request by request.

    With ``max_rejected`` the simulation stops as soon as more requests failed than that fraction allows: such
    a candidate is never on the front nor chosen, whatever the rest of the trace does (``stopped_early``)."""
    spec = _spec(search, candidate, params)
    if isinstance(spec, Outcome):
        return spec
    return _simulate(search, candidate, spec, max_rejected)[0]


def _spec(search: Search, candidate: Candidate, params: SimulateParams | None) -> SimSpec | Outcome:
    """The candidate's simulation input, or its outcome when its config does not load."""
    try:
        config = candidate_config(search.data, candidate.settings)
        selection = select_workloads(resolve(config), search.endpoint, search.component, sim=params)
        if not selection.workloads:
            raise SimulateInputError("; ".join(selection.skipped))
        workload: Workload = selection.workloads[0]
        return workload.spec()
    except (ConfigError, SimulateInputError) as exc:
        return Outcome(candidate, math.inf, None, None, 1.0, 0, 0, error=str(exc))


def _simulate(
    search: Search, candidate: Candidate, spec: SimSpec, max_rejected: float | None
) -> tuple[Outcome, bool]:
    """(outcome, whether the minimum bound: see result.Result.minimum_bound)."""
    n = len(search.trace)
    limit = None if max_rejected is None or not n else failure_limit(n, max_rejected)
    try:
        run = simulate_requests(spec, search.trace, candidate.rates, search.routing, search.timeout,
                                stop_after_failures=limit)
    except FailureLimitExceeded as exc:
        return Outcome(candidate, math.inf, None, None, exc.failed / n, 0, 0, stopped_early=True), exc.minimum_bound
    except SimulateInputError as exc:
        return Outcome(candidate, math.inf, None, None, 1.0, 0, 0, error=str(exc)), True
    st, summary = run.stats, run.result.summary
    outcome = Outcome(
        candidate,
        cost_usd=summary.cost_usd if summary.cost_usd is not None else math.inf,
        ttft_p99_s=st.ttft.p99,
        e2e_p99_s=st.e2e.p99,
        rejected_fraction=st.rejected_fraction,
        peak_copies=summary.peak_copies,
        peak_instances=summary.peak_instances,
    )
    return outcome, run.result.minimum_bound


def _without_minimum(spec: SimSpec) -> SimSpec:
    return dataclasses.replace(spec, units_min=0, instances_min=0, scale_from_zero=None)


def evaluate_group(
    search: Search, candidates: Sequence[Candidate], params: SimulateParams | None = None,
    max_rejected: float | None = None,
) -> list[Outcome]:
    """Candidates that may differ only in their minimum, each with the outcome ``evaluate`` gives it.

    Highest minimum first: when a run's minimum never bound (``result.Result.minimum_bound``), a candidate whose
    simulation input is the same but for a lower minimum (copies and instances) follows the very same run, so
    its outcome is copied instead of simulated again. Anything else about the input that differs, or a minimum
    that bound, means a simulation of its own."""
    specs = [(c, _spec(search, c, params)) for c in candidates]
    done: list[Outcome] = []
    unbound: list[tuple[SimSpec, SimSpec, Outcome]] = []  # (spec, spec without minimum, outcome) never bound
    ready = [(c, s) for c, s in specs if isinstance(s, SimSpec)]
    done += [s for _, s in specs if isinstance(s, Outcome)]
    ready.sort(key=lambda cs: (-cs[1].units_min, -cs[1].instances_min, cs[0].index))
    for candidate, spec in ready:
        bare = _without_minimum(spec)
        same = next((o for s, b, o in unbound if b == bare and spec.units_min <= s.units_min
                     and spec.instances_min <= s.instances_min and o.candidate.rates == candidate.rates), None)
        if same is not None:
            done.append(dataclasses.replace(same, candidate=candidate))
            continue
        outcome, bound = _simulate(search, candidate, spec, max_rejected)
        done.append(outcome)
        if not bound:
            unbound.append((spec, bare, outcome))
    return sorted(done, key=lambda o: o.candidate.index)


def minimum_groups(search: Search) -> list[list[int]]:
    """Candidate indexes grouped by everything but their minimum (the settings that only set it and the
    starting count), in candidate order: the units ``evaluate_group`` shares work within."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for c in search.candidates:
        rest = tuple((k, v) for k, v in c.settings.items() if not k.endswith(_MINIMUM_KEYS))
        groups.setdefault((c.instance_type, rest), []).append(c.index)
    return list(groups.values())


_MINIMUM_KEYS = ("copies.min", "copies.initial", "instances.min", "instances.initial")


_WORKER: dict[str, Any] = {}


def _init_worker(search: Search) -> None:
    _WORKER["search"] = search
    _WORKER["params"] = load_simulate_params()


def _evaluate_many(groups: list[list[int]], max_rejected: float | None) -> list[Outcome]:
    search: Search = _WORKER["search"]
    out: list[Outcome] = []
    for group in groups:
        out += evaluate_group(search, [search.candidates[i] for i in group], _WORKER["params"], max_rejected)
    return out


def evaluate_all(
    search: Search, workers: int | None = None, progress: Callable[[int], None] | None = None,
    max_rejected: float | None = None,
) -> tuple[Outcome, ...]:
    """Every candidate, on ``workers`` processes (default: all cores); results in candidate order.

    Candidates that differ only in their minimum are simulated together (``evaluate_group``), so one run serves
    every lower minimum that would not change it. With ``max_rejected`` (the SLO's ``--max-rejected``) a
    candidate's simulation stops once it has failed more requests than that allows (``Outcome.stopped_early``).
    The front and the choice are the same as with every candidate simulated on its own to the end. When no
    candidate is within ``max_rejected`` at all, the stopped ones are simulated to the end, so the reason can
    name the fewest rejections any candidate reached."""
    n = len(search.candidates)
    results: list[Outcome | None] = [None] * n
    _evaluate_groups(search, minimum_groups(search), results, workers, progress, max_rejected)
    if max_rejected is not None and not any(
        o is not None and o.error is None and not o.stopped_early and o.rejected_fraction <= max_rejected for o in results
    ):
        again = [[o.candidate.index] for o in results if o is not None and o.stopped_early]
        _evaluate_groups(search, again, results, workers, None, None)
    assert all(r is not None for r in results)
    return tuple(r for r in results if r is not None)


def _evaluate_groups(
    search: Search, groups: list[list[int]], results: list[Outcome | None], workers: int | None,
    progress: Callable[[int], None] | None, max_rejected: float | None,
) -> None:
    n = len(groups)
    if not n:
        return
    workers = max(1, min(workers or os.cpu_count() or 1, n))
    if workers == 1:
        params = load_simulate_params()
        for group in groups:
            for outcome in evaluate_group(search, [search.candidates[i] for i in group], params, max_rejected):
                results[outcome.candidate.index] = outcome
            if progress:
                progress(len(group))
        return
    chunk = max(1, min(4, n // (workers * 8) or 1))
    batches = [groups[start:start + chunk] for start in range(0, n, chunk)]
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(search,)) as pool:
        futures: dict[Future[list[Outcome]], int] = {
            pool.submit(_evaluate_many, b, max_rejected): sum(len(g) for g in b) for b in batches}
        for future in _as_completed(futures):
            for outcome in future.result():
                results[outcome.candidate.index] = outcome
            if progress:
                progress(futures[future])


def _as_completed(futures: Iterable[Future[list[Outcome]]]) -> Iterable[Future[list[Outcome]]]:
    from concurrent.futures import as_completed

    return as_completed(futures)
