"""The request trace is columnar and read as it streams: arrays, not an object per request; bounded lines and size."""

from __future__ import annotations

from array import array

import pytest

from fastscale.infra.analysis.simulate.requests import trace as trace_mod
from fastscale.infra.analysis.simulate.requests.trace import RequestInputError, read_request_trace


def test_a_trace_file_reads_into_three_arrays_of_16_bytes_a_request(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("timestamp,input_tokens,output_tokens\n" + "".join(f"{i * 0.5},{100 + i},{10 + i}\n" for i in range(50)))
    t = read_request_trace(path)
    assert isinstance(t.arrivals, array) and isinstance(t.input_tokens, array) and isinstance(t.output_tokens, array)
    assert t.arrivals.itemsize + t.input_tokens.itemsize + t.output_tokens.itemsize == 16
    assert len(t) == 50 and t.arrivals[49] == 24.5 and t.input_tokens[49] == 149 and t.output_tokens[0] == 10


def test_lines_out_of_time_order_are_sorted_stably_and_times_start_at_the_earliest(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                    "2023-11-16 18:00:05.0000000,1,1\n"
                    "2023-11-16 18:00:02.0000000,2,2\n"
                    "2023-11-16 18:00:05.0000000,3,3\n"
                    "2023-11-16 18:00:01.5000000,4,4\n")
    t = read_request_trace(path)
    assert list(t.arrivals) == [0.0, 0.5, 3.5, 3.5]
    assert list(t.input_tokens) == [4, 2, 1, 3]  # the two requests at 18:00:05 keep the file's order
    assert list(t.output_tokens) == [4, 2, 1, 3]


def test_a_line_longer_than_the_limit_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(trace_mod, "MAX_LINE_CHARACTERS", 64)
    path = tmp_path / "t.csv"
    path.write_text("timestamp,input_tokens,output_tokens\n0,1,1\n" + "9" * 500 + ",1,1\n")
    with pytest.raises(RequestInputError, match=r"line 3: longer than 64 characters"):
        read_request_trace(path)


def test_a_file_over_the_size_limit_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_text("timestamp,input_tokens,output_tokens\n" + "".join(f"{i},1,1\n" for i in range(100)))
    monkeypatch.setattr(trace_mod, "MAX_REQUEST_TRACE_BYTES", 200)
    with pytest.raises(RequestInputError, match="larger than 200 bytes"):
        read_request_trace(path)


def test_a_file_that_grows_past_the_limit_while_read_is_stopped(tmp_path, monkeypatch):
    # The size on disk is checked first; the characters read are counted too, for a file that grows meanwhile.
    path = tmp_path / "t.csv"
    path.write_text("timestamp,input_tokens,output_tokens\n" + "".join(f"{i},1,1\n" for i in range(100)))
    monkeypatch.setattr(trace_mod, "_size_on_disk", lambda handle: 0)
    monkeypatch.setattr(trace_mod, "MAX_REQUEST_TRACE_BYTES", 200)
    with pytest.raises(RequestInputError, match="larger than 200 bytes"):
        read_request_trace(path)


def test_invalid_utf8_is_a_clear_error(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"timestamp,input_tokens,output_tokens\n0,1,1\n1,\xff,1\n")
    with pytest.raises(RequestInputError, match=r"cannot read the trace \(UnicodeDecodeError\)"):
        read_request_trace(path)


@pytest.mark.parametrize("seed", range(12))
def test_ranked_runs_give_exactly_what_one_sorted_list_gives(monkeypatch, seed):
    # Runs of 7 values (instead of 16,384) so that a few hundred values take every path: many runs, values
    # repeated across runs (a column where most requests waited 0 s, a value shared by several runs).
    import random

    from fastscale.infra.analysis.simulate.requests import results

    monkeypatch.setattr(results, "RUN", 7)
    rng = random.Random(seed)
    n = rng.choice([1, 6, 7, 8, 50, 333])
    column = [rng.choice([0.0, 0.0, 0.0, 1.5, rng.random() * 10, rng.expovariate(0.3)]) for _ in range(n)]
    status = bytearray(rng.choice([results.SERVED, results.SERVED, results.TIMED_OUT]) for _ in range(n))
    selected = status.translate(results._SERVED_MASK)
    chosen = [v for v, s in zip(column, status, strict=True) if s == results.SERVED]
    ranked = results.Ranked(array("d", column), selected)
    assert ranked.latency() == results.Latency.of(list(chosen))  # the mean to the last bit
    assert [ranked.nth(k) for k in range(1, len(chosen) + 1)] == sorted(chosen)
    assert ranked.count_over(1.5) == sum(1 for v in chosen if v > 1.5)
