"""Ranked's byte-by-byte selection: values that share their top bytes, ranks at the edge of a bucket, subnormals
next to zeros, huge values, equal values, unselected entries of any content; every path of the search."""

from __future__ import annotations

import math
import struct
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastscale.infra.analysis.simulate.requests import results
from fastscale.infra.analysis.simulate.requests.results import Latency, Ranked


def of_key(key: int) -> float:
    return struct.unpack("<d", struct.pack("<q", key))[0]


# Keys (bit patterns) a few apart around the edges where a byte rolls over (…FF to …00 of the byte above), so
# that buckets share all but their last bytes and a rank often falls on a bucket's first or last value.
EDGES = [0, 1, 0xFF, 0x100, 0xFFFF, 0x1_0000, 0xFF_FFFF, 0x100_0000, 0x3FF0_0000_0000_0000, 0x3FEF_FFFF_FFFF_FFFF,
         0x40FF_FF00_0000_0000, 0x7EFF_FFFF_FFFF_FFFF, 0x7F00_0000_0000_0000]
NEAR_EDGE = st.builds(lambda edge, offset: of_key(max(edge + offset, 0)), st.sampled_from(EDGES), st.integers(-3, 3))
VALUE = st.one_of(
    NEAR_EDGE,
    st.just(0.0),
    st.integers(1, 1 << 12).map(of_key),  # subnormals next to zero
    st.floats(min_value=1e300, max_value=1e305),  # huge (a hundred of them still sum to a float)
    st.just(math.inf),
    st.floats(min_value=0.0, max_value=100.0),
)
# What an entry that is not selected holds: anything, as the replay leaves NaN for a request never served.
ANY = st.one_of(st.just(math.nan), st.floats(allow_nan=True), VALUE)


def limits(chosen: list[float]) -> list[float]:
    near = [math.nextafter(v, d) for v in chosen[:4] for d in (0.0, math.inf)]
    return [0.0, -0.0, -1.0, math.inf, math.nan, 1e-320, 2.0, *chosen[:4], *near]


def check(column: list[float], selected: bytes) -> None:
    chosen = [v for v, s in zip(column, selected, strict=True) if s]
    ranked = Ranked(array("d", column), selected)
    assert len(ranked) == len(chosen)
    assert ranked.latency() == Latency.of(list(chosen))
    assert [ranked.nth(k) for k in range(1, len(chosen) + 1)] == sorted(chosen)
    for limit in limits(chosen):
        assert ranked.count_over(limit) == sum(1 for v in chosen if v > limit), limit


# RUN: the bucket sorted at once (1: descend to the last byte); DENSE: 0 counts each digit with its own pass,
# a large one all digits at once; SAMPLE: 1 guesses well, 3 roughly, a huge stride not at all.
KNOBS = st.tuples(st.sampled_from([1, 2, 5, results.RUN]), st.sampled_from([0, 3, results.DENSE]),
                  st.sampled_from([1, 3, 1 << 30]))


def with_knobs(knobs: tuple[int, int, int]) -> pytest.MonkeyPatch:
    patch = pytest.MonkeyPatch()
    for name, value in zip(("RUN", "DENSE", "SAMPLE"), knobs, strict=True):
        patch.setattr(results, name, value)
    return patch


@settings(max_examples=200, deadline=None)
@given(data=st.data(), knobs=KNOBS)
def test_ranked_is_one_sorted_list_at_every_edge(data, knobs):
    n = data.draw(st.integers(0, 90))
    selected = bytes(data.draw(st.lists(st.sampled_from([1, 1, 1, 0]), min_size=n, max_size=n)))
    column = [data.draw(VALUE if s else ANY) for s in selected]
    patch = with_knobs(knobs)
    try:
        check(column, selected)
    finally:
        patch.undo()


@settings(max_examples=60, deadline=None)
@given(value=VALUE, n=st.integers(1, 70), unselected=st.integers(0, 5), knobs=KNOBS)
def test_equal_values_rank_as_that_value(value, n, unselected, knobs):
    column = [value] * n + [math.nan] * unselected
    patch = with_knobs(knobs)
    try:
        check(column, bytes([1] * n + [0] * unselected))
    finally:
        patch.undo()


@pytest.mark.parametrize("knobs", [(1, 0, 1), (2, 0, 1 << 30), (results.RUN, results.DENSE, results.SAMPLE)])
def test_a_bucket_whose_last_digit_is_ff_is_told_from_the_entries_outside_it(knobs):
    # Keys …FF (the digit that also marks entries outside a bucket), beside unselected entries whose same byte
    # is not FF, and selected values a bucket away.
    inside = [of_key(0x3FF0_0000_0000_00FF)] * 3 + [of_key(0x3FF0_0000_0000_01FF)] * 2 + [1.0, 2.0]
    column = [v for value in inside for v in (value, of_key(0x3FF0_0000_0000_0012))]
    patch = with_knobs(knobs)
    try:
        check(column, bytes([1, 0] * len(inside)))
    finally:
        patch.undo()


@pytest.mark.parametrize("run", [1, results.RUN])
@pytest.mark.parametrize("negative", [-0.0, -1e-300, -5.0])
def test_a_negative_value_is_refused(run, negative, monkeypatch):
    monkeypatch.setattr(results, "RUN", run)
    with pytest.raises(ValueError, match=r"at or above \+0\.0"):
        Ranked(array("d", [1.0, 0.0, negative, 3.0]), bytes([1, 1, 1, 1]))
    Ranked(array("d", [1.0, negative, 3.0]), bytes([1, 0, 1]))  # not selected: not ranked


def test_a_week_sized_column_counts_by_passes_and_gives_the_sorted_figures():
    # 300,000 values in few distinct top bytes (most share one), selected but every fifth: the buckets are
    # large enough that they are counted one pass per digit, guided by the sample.
    import random

    rng = random.Random(7)
    column = [rng.lognormvariate(-1.0, 0.8) if i % 97 else rng.choice([0.0, 2.5, 1e-310]) for i in range(300_000)]
    selected = bytes(1 if i % 5 else 0 for i in range(300_000))
    chosen = sorted(v for v, s in zip(column, selected, strict=True) if s)
    ranked = Ranked(array("d", column), selected)
    assert ranked.root.size > results.DENSE  # the path this test is for
    assert ranked.latency() == Latency.of(list(chosen))
    for k in (1, 2, 1000, len(chosen) // 3, len(chosen) - 1, len(chosen)):
        assert ranked.nth(k) == chosen[k - 1]
    for limit in (0.0, 1e-310, chosen[len(chosen) // 2], 2.5, 60.0):
        assert ranked.count_over(limit) == sum(1 for v in chosen if v > limit)

