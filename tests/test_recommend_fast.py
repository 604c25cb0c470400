"""`recommend`'s shortcuts change no result: candidates that differ only in their minimum share one simulation
when the minimum never bound, and a candidate stops once it has failed more requests than --max-rejected
allows. The reference is the slow path: every candidate simulated on its own, to the end (``evaluate``)."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastscale.infra.analysis.recommend.evaluation import (
    evaluate,
    evaluate_all,
    evaluate_group,
    failure_limit,
    minimum_groups,
)
from fastscale.infra.analysis.recommend.front import recommend
from fastscale.infra.analysis.recommend.search import build_search
from fastscale.infra.analysis.recommend.settings import apply_to_text
from fastscale.infra.analysis.simulate.engine import simulate
from fastscale.infra.analysis.simulate.params import load_params
from fastscale.infra.analysis.simulate.requests.replay import RequestLoad
from fastscale.infra.analysis.simulate.requests.trace import read_request_trace
from fastscale.infra.config import load_config, parse_config, safe_yaml
from fastscale.infra.model.resolved import resolve
from fastscale.infra.rules import has_errors, run_rules
from tests.conftest import ROOT
from tests.test_recommend import small_trace

pytestmark = pytest.mark.slow  # searches and replays the bundled hour-long trace: `make test` runs it, `make test-fast` does not

ZERO = ROOT / "examples" / "scale-to-zero-short-tail.yaml"
QWEN = ROOT / "examples" / "qwen3-8b.yaml"
HOUR = ROOT / "examples" / "requests-1h-synthetic.csv"


def _search(path, trace, types):
    return build_search(resolve(load_config(path)), safe_yaml.load(path.read_text()).data, trace, instance_types=types)


@pytest.fixture(scope="module")
def hour():
    """The example's real one-hour trace (12,044 requests) on one instance type: 108 candidates, each also
    simulated alone to the end."""
    search = _search(ZERO, read_request_trace(HOUR), ["ml.g5.xlarge"])
    params = load_params()
    return search, [evaluate(search, c, params) for c in search.candidates]


@pytest.fixture(scope="module")
def quarter():
    """A quarter of an hour that starts idle: a minimum of 1 or 2 binds from the first second."""
    search = _search(ZERO, small_trace(), ["ml.g5.xlarge", "ml.g6e.xlarge"])
    params = load_params()
    return search, [evaluate(search, c, params) for c in search.candidates]


def _same_as_alone(fast, slow, max_rejected):
    assert len(fast) == len(slow)
    for f, s in zip(fast, slow, strict=True):
        assert f.candidate.index == s.candidate.index
        if f.stopped_early:
            # Stopped only when the whole run fails more than allowed, and never reports more failures than it had.
            assert max_rejected is not None and s.rejected_fraction > max_rejected
            assert max_rejected < f.rejected_fraction <= s.rejected_fraction
        else:
            assert f.to_dict() == s.to_dict() and f.error == s.error


@pytest.mark.parametrize("fixture", [pytest.param("hour", marks=pytest.mark.slow), "quarter"])
def test_every_outcome_is_what_the_candidate_alone_gives(fixture, request):
    search, slow = request.getfixturevalue(fixture)
    fast = evaluate_all(search, workers=1)
    _same_as_alone(fast, slow, None)
    assert not any(o.stopped_early for o in fast)


@pytest.mark.parametrize("fixture", [pytest.param("hour", marks=pytest.mark.slow), "quarter"])
def test_stopping_early_changes_neither_the_front_nor_the_choice(fixture, request):
    search, slow = request.getfixturevalue(fixture)
    rejected = sorted({o.rejected_fraction for o in slow if o.error is None})
    # 0, and a limit exactly at a candidate's rejected fraction (the boundary is within the SLO).
    for max_rejected in (0.0, rejected[len(rejected) // 2]):
        fast = _fast(search, workers=2, max_rejected=max_rejected)
        _same_as_alone(fast, slow, max_rejected)
        for slo in (0.5, 2.0, 5.0, 30.0, 60.0):
            a = recommend(search, fast, slo, max_rejected).to_dict()
            b = recommend(search, slow, slo, max_rejected).to_dict()
            for key in ("choice", "pareto", "reason"):
                assert a.get(key) == b.get(key), (max_rejected, slo, key)


@pytest.mark.slow
def test_the_hour_shares_and_stops_a_lot(hour):
    """What makes the search fast on the real trace: runs are shared, and some stop. (Fewer stop than when a copy
    ran target / 0.8 requests at once: with the slots its KV cache holds, fewer candidates fail early.)"""
    search, _ = hour
    fast = _fast(search, workers=2, max_rejected=0.0)
    assert sum(o.stopped_early for o in fast) >= len(fast) // 10
    doc = recommend(search, fast, 5.0, 0.0).to_dict()
    assert doc["candidates_stopped_early"] == sum(o.stopped_early for o in fast) and doc["candidates"] == len(fast)
    groups = minimum_groups(search)
    assert len(groups) == len(search.candidates) // 3 and all(len(g) == 3 for g in groups)


def test_a_minimum_that_binds_is_simulated_on_its_own(quarter):
    """The quarter-hour starts idle: minimums of 1 and 2 start copies the minimum of 0 does not, so sharing the
    highest minimum's run would give the lower ones a wrong cost; the group must simulate each."""
    search, slow = quarter
    params = load_params()
    group = next(g for g in minimum_groups(search) if len({slow[i].cost_usd for i in g}) > 1)
    assert [o.to_dict() for o in evaluate_group(search, [search.candidates[i] for i in group], params)] == [
        slow[i].to_dict() for i in group]


def test_the_engine_reports_a_binding_minimum():
    search = _search(ZERO, small_trace(), ["ml.g5.xlarge"])
    params = load_params()
    from fastscale.infra.analysis.recommend.evaluation import _spec

    c = next(c for c in search.candidates if c.settings[f"{search.workload_path}.copies.min"] == 2)
    spec = _spec(search, c, params)
    demand = [0.0] * 600
    idle = simulate(spec, demand)  # idle: the minimum of 2 holds the copies up
    assert idle.minimum_bound and idle.summary.peak_copies == 2
    busy = simulate(dataclasses.replace(spec, units_min=0, instances_min=0, scale_from_zero=None), [30.0] * 600)
    assert not busy.minimum_bound


def test_failure_limit_matches_the_fronts_check():
    for n in (1, 7, 100, 12044):
        for fraction in (0.0, 1 / n, 0.001, 0.01, 0.0123, 0.5, 1.0):
            k = failure_limit(n, fraction)
            assert k / n <= fraction and (k == n or (k + 1) / n > fraction)


def test_a_stopped_run_stops_where_the_limit_is_passed():
    trace = read_request_trace(HOUR)
    search = _search(ZERO, trace, ["ml.g5.xlarge"])
    params = load_params()
    from fastscale.infra.analysis.recommend.evaluation import _spec

    c = search.candidates[0]
    spec = _spec(search, c, params)
    load = RequestLoad(trace, c.rates, "least_outstanding_requests", 60.0, stop_after_failures=0)
    load.failed = 1  # as if one request had failed: the next second must stop the run
    with pytest.raises(Exception, match="1 requests failed by second 0") as info:
        load.step(0, [1])
    assert info.type.__name__ == "FailureLimitExceeded" and spec is not None


def test_outcomes_stopped_under_a_stricter_limit_are_refused(quarter):
    search, _ = quarter
    fast = evaluate_all(search, workers=1, max_rejected=0.0)
    assert any(o.stopped_early for o in fast)
    with pytest.raises(ValueError, match="smaller max_rejected"):
        recommend(search, fast, 5.0, 1.0)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 70), st.floats(0.05, 70))
def test_a_stricter_slo_never_gives_a_cheaper_choice_on_the_hour(hour, a, b):
    """On the real one-hour trace, through the fast path: the choice's cost never falls as the SLO tightens, it
    meets the SLO, the front is non-dominated, and the config written with the choice validates."""
    search, _ = hour
    fast = _fast(search, workers=2, max_rejected=0.0)
    strict, loose = sorted((a, b))
    tight = recommend(search, fast, strict, 0.0).choice
    easy = recommend(search, fast, loose, 0.0).choice
    if tight is not None:
        assert easy is not None and easy.cost_usd <= tight.cost_usd and tight.ttft_p99_s <= strict
    front = recommend(search, fast, loose, 0.0).pareto
    for x in front:
        for y in front:
            assert x is y or not (x.cost_usd <= y.cost_usd and x.ttft_p99_s <= y.ttft_p99_s)
    assert all(math.isfinite(o.cost_usd) for o in front)
    if easy is not None:
        written = apply_to_text(ZERO.read_text(), easy.candidate.settings, str(ZERO))
        assert written.comments_kept
        assert not has_errors(run_rules(parse_config(safe_yaml.load(written.text).data)))


_FAST: dict[tuple[int, int, float | None], tuple] = {}


def _fast(search, workers: int, max_rejected: float | None) -> tuple:
    """evaluate_all of the search, once per module for each argument set: several tests read the same outcomes
    (those on the hour read the two-worker run the test of stopping early checks against the candidates alone)."""
    key = (id(search), workers, max_rejected)
    if key not in _FAST:
        _FAST[key] = (search, evaluate_all(search, workers=workers, max_rejected=max_rejected))
    return _FAST[key][1]
