"""Traffic profiles: spike, ramp and CSV traces, and the errors a user gets for malformed ones."""

from __future__ import annotations

import pytest

from fastscale.infra.analysis.simulate import TrafficError, parse_trace, ramp, read_trace, spike


def test_spike_holds_then_returns_to_base():
    t = spike("2:10@5+3", duration=12, default_window=3600, service_time=10)
    assert t.demand == (2, 2, 2, 2, 2, 10, 10, 10, 2, 2, 2, 2)
    assert t.spike_at == 5 and t.peak == 10 and t.seconds == 12


def test_spike_without_hold_lasts_to_the_end_and_default_window_applies():
    t = spike("0:4@60", duration=None, default_window=600, service_time=10)
    assert t.seconds == 600
    assert t.demand[59] == 0 and t.demand[60] == 4 and t.demand[-1] == 4


def test_ramp_is_linear_between_start_and_end():
    t = ramp("0:10@10-20", duration=30, default_window=3600, service_time=10)
    assert t.demand[9] == 0 and t.demand[15] == pytest.approx(5) and t.demand[20] == 10 and t.demand[29] == 10


@pytest.mark.parametrize(
    ("text", "needle"),
    [("10", "expected BASE:PEAK@T"), ("0:5@100", "after the 50 s window"), ("0:5@1+0", "HOLD must be at least 1")],
)
def test_bad_spikes_say_what_to_write(text, needle):
    with pytest.raises(TrafficError, match=needle):
        spike(text, duration=50, default_window=50, service_time=10)


def test_bad_ramp():
    with pytest.raises(TrafficError, match="END .* must be after START"):
        ramp("0:5@30-10", duration=None, default_window=100, service_time=10)


def test_window_has_an_upper_bound():
    with pytest.raises(TrafficError, match="one week"):
        spike("0:1@1", duration=10**9, default_window=10, service_time=10)


def test_concurrency_trace_one_row_per_second():
    t = parse_trace("concurrency\n1\n2\n3\n", "t.csv", duration=None, service_time=None, default_service_time=10)
    assert t.demand == (1, 2, 3) and t.kind == "trace" and t.service_time_seconds == 10


def test_trace_with_seconds_holds_values_between_rows():
    t = parse_trace("second,concurrency\n0,1\n3,4\n5,0\n", "t.csv", duration=8, service_time=None, default_service_time=10)
    assert t.demand == (1, 1, 1, 4, 4, 0, 0, 0)


def test_rps_trace_becomes_concurrency_with_the_service_time():
    t = parse_trace("rps,second\n2,0\n", "t.csv", duration=3, service_time=5, default_service_time=10)
    assert t.demand == (10, 10, 10)  # 2 requests/s x 5 s each = 10 in flight
    with pytest.raises(TrafficError, match="--service-time"):
        parse_trace("rps\n2\n", "t.csv", duration=None, service_time=None, default_service_time=10)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("", "empty"),
        ("users\n1\n", "line 1: the header must name one value column"),
        ("concurrency,rps\n1,1\n", "line 1"),
        ("concurrency\n1\nx\n", r"line 3: concurrency \(column 1\) is not a number"),
        ("concurrency\n-1\n", "line 2: concurrency must be a finite number >= 0"),
        ("concurrency\nnan\n", "line 2"),
        ("second,concurrency\n5,1\n3,1\n", "line 3: seconds must start at 0 or later and increase"),
        ("second,concurrency\n1.5,1\n", r"line 2: second \(column 1\) is not a whole number"),
        ("second,concurrency\n1\n", "line 2: 1 values for 2 columns"),
        ("concurrency\n", "no rows"),
    ],
)
def test_malformed_traces_name_the_line(text, needle):
    with pytest.raises(TrafficError, match=needle):
        parse_trace(text, "t.csv", duration=None, service_time=None, default_service_time=10)


def test_read_trace_from_a_file(tmp_path):
    path = tmp_path / "trace.csv"
    path.write_text("\ufeffconcurrency\n1\n2\n")  # a byte-order mark from a spreadsheet export is fine
    assert read_trace(path, duration=None, service_time=None, default_service_time=10).demand == (1, 2)
    with pytest.raises(TrafficError, match="not found"):
        read_trace(tmp_path / "missing.csv", duration=None, service_time=None, default_service_time=10)
    with pytest.raises(TrafficError, match="cannot read"):
        read_trace(tmp_path, duration=None, service_time=None, default_service_time=10)


@pytest.mark.parametrize("text", [
    "AWS_SECRET_ACCESS_KEY=wJalrFAKEsecret\0HOME=/root\0",
    "concurrency\nwJalrFAKEsecret\n",
    "second,concurrency\nwJalrFAKEsecret,1\n",
    "second,concurrency\n0,1\n-5,1\n",
])
def test_no_error_repeats_what_the_trace_holds(text):
    with pytest.raises(TrafficError) as failed:
        parse_trace(text, "t.csv", duration=None, service_time=None, default_service_time=10)
    assert "wjalr" not in str(failed.value).lower() and "-5" not in str(failed.value)
