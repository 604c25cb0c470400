"""Request statistics in bounded memory: the same figures as one sorted list, the mean correctly rounded."""

from __future__ import annotations

import math
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastscale.infra.analysis.simulate.requests import results
from fastscale.infra.analysis.simulate.requests.results import (
    NO_CAPACITY,
    SERVED,
    TIMED_OUT,
    Latency,
    Ranked,
    RequestStats,
)

# Latencies: zeros (a request that waited 0 s), a few shared values (repeats within and across runs), any other
# value from the smallest subnormal up to far more seconds than a trace spans.
LATENCY = st.one_of(
    st.just(0.0),
    st.sampled_from([1.5, 2.0, 1e-300, 5e-324]),
    st.floats(min_value=0.0, max_value=1e15),
    st.floats(min_value=0.0, max_value=100.0),
)
# Values read at once: 1 (a run per value), small runs, and the default (a single run for these columns).
RUNS = st.sampled_from([1, 2, 3, 7, results.RUN])
OUTCOMES = st.sampled_from([SERVED, SERVED, SERVED, NO_CAPACITY, TIMED_OUT, 0])


def ranked(column: list[float], status: bytearray, run: int) -> Ranked:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(results, "RUN", run)
        return Ranked(array("d", column), status.translate(results._SERVED_MASK))


@settings(max_examples=150, deadline=None)
@given(data=st.data(), run=RUNS)
def test_ranked_gives_what_latency_of_gives_on_the_selected_values(data, run):
    column = data.draw(st.lists(LATENCY, max_size=120))
    status = bytearray(data.draw(st.lists(OUTCOMES, min_size=len(column), max_size=len(column))))
    chosen = [v for v, s in zip(column, status, strict=True) if s == SERVED]
    r = ranked(column, status, run)
    assert len(r) == len(chosen)
    assert r.latency() == Latency.of(list(chosen))  # every figure, the mean to the last bit
    assert [r.nth(k) for k in range(1, len(chosen) + 1)] == sorted(chosen)
    limit = data.draw(st.sampled_from([0.0, 1.5, 60.0, *chosen[:3]]))
    assert r.count_over(limit) == sum(1 for v in chosen if v > limit)


@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.floats(min_value=0.0, max_value=1e6), min_size=1, max_size=200), run=RUNS)
def test_the_mean_is_the_correctly_rounded_sum_over_the_count(values, run):
    status = bytearray([SERVED] * len(values))
    mean = math.fsum(values) / len(values)
    assert ranked(values, status, run).latency().mean == mean
    assert Latency.of(list(values)).mean == mean


@pytest.mark.parametrize("run", [1, 3, results.RUN])
def test_the_mean_does_not_depend_on_the_order_of_the_sum(run):
    # Summed in ascending order one float at a time, ten 0.1 s make 0.9999999999999999 (a mean of
    # 0.09999999999999999); their exact sum rounds to 1.0.
    values = [0.1] * 10
    assert sum(values) != 1.0
    assert ranked(values, bytearray([SERVED] * 10), run).latency().mean == 0.1
    assert Latency.of(values).mean == 0.1


def test_no_selected_value_gives_no_figures():
    r = ranked([1.0, 2.0], bytearray([TIMED_OUT, NO_CAPACITY]), 1)
    assert len(r) == 0 and r.count_over(0.0) == 0
    assert r.latency() == Latency(None, None, None, None) == Latency.of([])


def test_all_zeros_rank_as_zeros():
    r = ranked([0.0] * 5, bytearray([SERVED] * 5), 2)
    assert r.latency() == Latency(0.0, 0.0, 0.0, 0.0) and r.count_over(0.0) == 0


@settings(max_examples=60, deadline=None)
@given(data=st.data(), run=RUNS)
def test_request_stats_count_and_rank_each_column_as_one_sorted_list(data, run):
    n = data.draw(st.integers(0, 80))
    columns = [data.draw(st.lists(LATENCY, min_size=n, max_size=n)) for _ in range(3)]
    status = bytearray(data.draw(st.lists(OUTCOMES, min_size=n, max_size=n)))
    timeout = data.draw(st.sampled_from([0.0, 1.5, 60.0]))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(results, "RUN", run)
        stats = RequestStats.of(status, *(array("d", c) for c in columns), timeout)
    served = [i for i, s in enumerate(status) if s == SERVED]
    ttft, e2e, wait = ([c[i] for i in served] for c in columns)
    assert (stats.requests, stats.served, stats.no_capacity, stats.timed_out) == (
        n, len(served), status.count(NO_CAPACITY), status.count(TIMED_OUT))
    assert stats.over_timeout_end_to_end == sum(1 for v in e2e if v > timeout)
    assert (stats.ttft, stats.e2e, stats.queue) == (Latency.of(ttft), Latency.of(e2e), Latency.of(wait))
