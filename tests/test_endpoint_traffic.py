"""Traces built from a live endpoint's recorded traffic, without AWS: data capture lines read into requests
(token counts from the payloads, estimates, assumptions), malformed lines skipped and counted, arrivals rebuilt
from CloudWatch counts, the window and the options."""

from __future__ import annotations

import base64
import datetime as dt
import json

import pytest

from fastscale.infra.analysis import endpoint_traffic as live
from fastscale.infra.analysis.endpoint_traffic.build import MAX_TRACE_REQUESTS
from fastscale.infra.analysis.simulate.requests.trace import parse_request_trace
from fastscale.infra.config import parse_config
from tests.traffic_support import NOW, START, chat, record, tgi

WINDOW = live.Window.ending(NOW, dt.timedelta(hours=1))
DEFAULT = live.DEFAULT_TOKENS


def parse(line: str) -> live.capture.CaptureRecord:
    out = live.parse_record(line.encode(), DEFAULT)
    assert not isinstance(out, str), out
    return out


# --------------------------------------------------------------------------------------------- one record


@pytest.mark.parametrize("encoding", ["JSON", "BASE64"])
def test_usage_counts_are_taken_as_the_server_counted_them(encoding):
    rec = parse(record(START, *chat("hi " * 100, "ok " * 20, usage=(321, 45)), encoding=encoding))
    assert (rec.prompt, rec.output) == (321, 45)
    assert (rec.prompt_how, rec.output_how) == (live.capture.COUNTED, live.capture.COUNTED)
    assert rec.at == START.timestamp() and rec.fraction is False


def test_a_usage_count_past_the_limit_is_not_taken_but_estimated():
    rec = parse(record(START, *chat("x" * 4000, "y" * 800, usage=(10**4000, 100_000_001))))
    assert (rec.prompt, rec.output) == (1000, 200)
    assert rec.prompt_how == rec.output_how == live.capture.ESTIMATED


@pytest.mark.parametrize("encoding", ["JSON", "BASE64"])
def test_without_usage_tokens_are_estimated_from_the_text_at_four_characters_per_token(encoding):
    prompt, answer = "x" * 4000, "y" * 800  # 1000 and 200 tokens at 4 characters per token
    rec = parse(record(START, *chat(prompt, answer), encoding=encoding))
    assert (rec.prompt, rec.output) == (1000, 200)
    assert rec.prompt_how == rec.output_how == live.capture.ESTIMATED
    assert live.CHARS_PER_TOKEN == 4.0


def test_tgi_generated_tokens_count_the_output_and_the_prompt_text_is_estimated():
    rec = parse(record(START, *tgi("z" * 400, "w" * 4000, generated=77)))
    assert (rec.prompt, rec.output) == (100, 77)
    assert (rec.prompt_how, rec.output_how) == (live.capture.ESTIMATED, live.capture.COUNTED)


def test_a_streamed_response_counts_in_its_last_event():
    events = [{"choices": [{"delta": {"content": "a" * 40}}]}, {"choices": [{"delta": {"content": "b" * 40}}]},
              {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 9}}]
    stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    rec = parse(record(START, {"messages": [{"role": "user", "content": "q" * 80}]}, stream))
    assert (rec.prompt, rec.output) == (12, 9)
    tokens = "".join(f"data: {json.dumps({'token': {'text': 'ab', 'special': False}})}\n\n" for _ in range(30))
    rec = parse(record(START, {"inputs": "q" * 8}, tokens))
    assert (rec.prompt, rec.output) == (2, 15)  # 60 characters of streamed token text


def test_csv_payloads_and_unknown_json_are_estimated_from_their_whole_text():
    rec = parse(record(START, "1,2,3,4,5,6,7,8", "0.25", encoding="CSV"))
    assert (rec.prompt, rec.output) == (4, 1)
    rec = parse(record(START, {"features": "f" * 396}, {"score": 1}))
    assert rec.prompt == round(len(json.dumps({"features": "f" * 396})) / 4)


def test_a_request_only_capture_or_an_undecodable_payload_takes_the_stated_profile():
    rec = parse(record(START, *chat("p" * 40, "unused")[:1]))  # no endpointOutput: Input capture only
    assert (rec.output, rec.output_how) == (DEFAULT.output, live.capture.ASSUMED)
    line = json.loads(record(START, *chat("p" * 40, "a" * 40), encoding="BASE64"))
    line["captureData"]["endpointInput"]["data"] = "***not base64***"
    rec = parse(json.dumps(line))
    assert (rec.prompt, rec.prompt_how) == (DEFAULT.prompt, live.capture.ASSUMED)
    assert rec.output_how == live.capture.ESTIMATED


def test_fractions_of_a_second_are_kept():
    rec = parse(record(START + dt.timedelta(milliseconds=250), *chat("a", "b"), whole_seconds=False))
    assert rec.fraction and rec.at == START.timestamp() + 0.25


@pytest.mark.parametrize(("line", "reason"), [
    ("{not json", "not JSON"),
    ("[1, 2]", "no captureData"),
    (json.dumps({"eventMetadata": {"inferenceTime": "2026-01-01T11:00:00Z"}}), "no captureData"),
    (json.dumps({"captureData": {}, "eventMetadata": {"inferenceTime": "yesterday"}}),
     "no readable eventMetadata.inferenceTime"),
    (json.dumps({"captureData": {}, "eventMetadata": {}}), "no readable eventMetadata.inferenceTime"),
])
def test_lines_that_are_not_capture_records_say_why(line, reason):
    assert live.parse_record(line.encode(), DEFAULT) == reason


def test_malformed_lines_are_counted_with_where_the_first_is_and_never_their_content():
    secret = "SECRET-PROMPT-TEXT"
    lines = [record(START + dt.timedelta(seconds=i), *chat("a" * 8, "b" * 8)) for i in range(3)]
    lines[1:1] = [f"{{{secret}", f"{{{secret}", "", json.dumps({"captureData": {"x": secret}, "eventMetadata": {}})]
    tally = live.CaptureTally(WINDOW, DEFAULT)
    tally.read(live.split_lines([("\n".join(lines)).encode()], 1 << 20), "cap/file.jsonl", 1 << 20)
    assert len(tally) == 3 and tally.lines == 6 and sum(tally.skipped.values()) == 3
    summary = tally.skipped_summary()
    assert summary == ("3 of 6 captured lines skipped: 2 not JSON (first: cap/file.jsonl, line 2); "
                       "1 no readable eventMetadata.inferenceTime (first: cap/file.jsonl, line 5)")
    assert secret not in summary


def test_lines_are_split_from_chunks_and_an_overlong_line_is_dropped_as_it_streams():
    chunks = [b"ab", b"c\nde", b"f\r\n", b"x" * 50, b"y" * 50, b"\nlast"]
    assert list(live.split_lines(chunks, 10)) == [b"abc", b"def", None, b"last"]
    assert list(live.split_lines([b"0123456789ABC"], 10)) == [None]
    tally = live.CaptureTally(WINDOW, DEFAULT)
    tally.read(live.split_lines([b"x" * 64 + b"\n"], 16), "f", 16)
    assert dict(tally.skipped) == {"longer than 16 bytes": 1}


def test_requests_outside_the_window_are_left_out():
    tally = live.CaptureTally(WINDOW, DEFAULT)
    lines = [record(at, *chat("a", "b")) for at in (WINDOW.start - dt.timedelta(seconds=1), WINDOW.start,
                                                    WINDOW.end - dt.timedelta(seconds=1), WINDOW.end)]
    tally.read((line.encode() for line in lines), "f", 1 << 20)
    assert len(tally) == 2 and tally.outside == 2


# --------------------------------------------------------------------------------------------- traces


def _tally(times: list[dt.datetime], whole: bool = True) -> live.CaptureTally:
    tally = live.CaptureTally(WINDOW, DEFAULT)
    lines = [record(at, *chat("p" * 400, "o" * 40, usage=(100 + i, 10 + i)), whole_seconds=whole)
             for i, at in enumerate(times)]
    tally.read((line.encode() for line in lines), "f", 1 << 20)
    return tally


def _capture_trace(tally: live.CaptureTally, sampling: float = 100) -> live.EndpointTrace:
    return live.from_capture(tally, endpoint="ep", component=None, region="us-east-1", destination="s3://b/p",
                             sampling=sampling)


def test_whole_second_arrivals_are_spaced_evenly_within_their_second():
    second = START + dt.timedelta(seconds=30)
    built = _capture_trace(_tally([second, second, second, second + dt.timedelta(seconds=2)]))
    assert built.trace.arrivals == (30.167, 30.5, 30.833, 32.5)  # 30 + 1/6, 3/6, 5/6; alone: mid-second
    assert built.trace.input_tokens == (100, 101, 102, 103) and built.trace.output_tokens == (10, 11, 12, 13)
    assert any("spaced evenly within it" in n for n in built.notes)
    assert built.source == live.DATA_CAPTURE and built.trace.format == live.DATA_CAPTURE


def test_times_with_fractions_are_kept_as_they_are():
    built = _capture_trace(_tally([START + dt.timedelta(seconds=1.25), START + dt.timedelta(seconds=1.75)], whole=False))
    assert built.trace.arrivals == (1.25, 1.75)
    assert not any("spaced evenly" in n for n in built.notes)


def test_a_sample_stands_for_the_whole_traffic():
    times = [START + dt.timedelta(seconds=10 * i) for i in range(10)]
    built = _capture_trace(_tally(times), sampling=20)
    assert len(built.trace) == 50  # each captured request stands for 100 / 20 = 5
    assert built.trace.arrivals[:6] == (0.5, 2.5, 4.5, 6.5, 8.5, 10.5)
    assert built.trace.input_tokens[:6] == (100,) * 5 + (101,)
    assert any("samples 20% of the requests" in n for n in built.notes)
    thirds = _capture_trace(_tally(times), sampling=30)
    assert len(thirds.trace) == 33  # 10 x 3.33..., the remainder carried from one request to the next


def test_token_sources_are_stated():
    tally = live.CaptureTally(WINDOW, DEFAULT)
    lines = [record(START, *chat("p" * 40, "o" * 40, usage=(5, 6))), record(START, *chat("p" * 40, "o" * 40)),
             record(START, *chat("p" * 40, "o")[:1])]
    tally.read((line.encode() for line in lines), "f", 1 << 20)
    notes = _capture_trace(tally).notes
    assert "prompt tokens: 1 counted by the server, 2 estimated at 4 characters per token" in notes
    assert ("output tokens: 1 counted by the server, 1 estimated at 4 characters per token, 1 assumed") in notes
    assert any("1000 prompt and 250 output tokens (fastscale's default" in n for n in notes)


def test_no_captured_request_is_no_traffic():
    with pytest.raises(live.NoTrafficError, match="no captured request of ep"):
        _capture_trace(live.CaptureTally(WINDOW, DEFAULT))


def minute_series(counts: list[int], name: str = "Invocations") -> live.Series:
    return live.Series(name, "Sum", 60, tuple((START + dt.timedelta(minutes=i), float(n)) for i, n in enumerate(counts)))


def test_metrics_give_each_minute_its_count_of_arrivals():
    counts = [0, 3, 10, 0, 7] + [1] * 55
    built = live.from_metrics(WINDOW, endpoint="ep", component=None, region="us-east-1",
                              invocations=minute_series(counts), tokens=DEFAULT)
    per_minute = [0] * 60
    for a in built.trace.arrivals:
        per_minute[int(a // 60)] += 1
    assert per_minute == counts
    assert set(built.trace.input_tokens) == {1000} and set(built.trace.output_tokens) == {250}
    again = live.from_metrics(WINDOW, endpoint="ep", component=None, region="us-east-1",
                              invocations=minute_series(counts), tokens=DEFAULT)
    assert again.trace == built.trace  # seeded: the same trace every run
    assert any("1000 prompt and 250 output tokens" in n for n in built.notes)


def test_ten_second_concurrency_places_each_minutes_requests_in_its_busy_periods():
    shape = tuple((START + dt.timedelta(seconds=10 * k), 6.0 if k % 6 == 2 else 0.0) for k in range(360))
    built = live.from_metrics(WINDOW, endpoint="ep", component=None, region="us-east-1",
                              invocations=minute_series([12] * 60),
                              concurrency=live.Series("ConcurrentRequestsPerModel", "Sum", 10, shape),
                              tokens=live.TokenProfile(50, 5, "--tokens"))
    assert len(built.trace) == 720
    assert all(20 <= a % 60 < 30 for a in built.trace.arrivals)  # all in the third 10-second period
    assert built.trace.input_tokens[0] == 50 and "shared among its 6 periods of 10 s" in " ".join(built.notes)


def test_ten_second_invocations_are_used_as_they_are():
    fine = tuple((START + dt.timedelta(seconds=10 * k), 2.0 if k == 7 else 0.0) for k in range(360))
    built = live.from_metrics(WINDOW, endpoint="ep", component=None, region="us-east-1",
                              invocations=minute_series([2] + [0] * 59),  # the minute sum: ignored
                              fine_invocations=live.Series("Invocations", "Sum", 10, fine), tokens=DEFAULT)
    assert len(built.trace) == 2 and all(70 <= a < 80 for a in built.trace.arrivals)


def test_model_latency_is_weighted_by_invocations_and_no_invocations_is_no_traffic():
    latency = live.Series("ModelLatency", "Average", 60, ((START, 1_000_000.0), (START + dt.timedelta(minutes=1), 4e6)))
    built = live.from_metrics(WINDOW, endpoint="ep", component=None, region="us-east-1",
                              invocations=minute_series([1, 3]), latency=latency, tokens=DEFAULT)
    assert built.model_latency_s == pytest.approx(3.25)
    with pytest.raises(live.NoTrafficError, match="no Invocations of ep / ic"):
        live.from_metrics(WINDOW, endpoint="ep", component="ic", region="us-east-1",
                          invocations=minute_series([0, 0]), tokens=DEFAULT)


def test_the_written_trace_reads_back_as_the_same_trace():
    built = _capture_trace(_tally([START + dt.timedelta(seconds=s) for s in (1, 1, 5, 3599)]))
    back = parse_request_trace(live.trace_csv(built.trace), "t.csv")
    assert (back.arrivals, back.input_tokens, back.output_tokens) == (
        built.trace.arrivals, built.trace.input_tokens, built.trace.output_tokens)


def test_a_built_trace_stops_at_its_request_limit_and_says_where():
    times = [START + dt.timedelta(seconds=10 * i) for i in range(10)]
    built = live.from_capture(_tally(times), endpoint="ep", component=None, region="us-east-1", destination="d",
                              sampling=10, most=35)
    assert len(built.trace) == 30 and built.limits == ("the trace stops at 35 requests, 30 s into the window",)
    metrics = live.from_metrics(WINDOW, endpoint="ep", component=None, region="us-east-1",
                                invocations=minute_series([20] * 60), tokens=DEFAULT, most=50)
    assert len(metrics.trace) == 40 and metrics.limits == ("the trace stops at 50 requests, 120 s into the window",)
    assert MAX_TRACE_REQUESTS == 2_000_000  # the default: about 660 MB as the simulation holds requests


# --------------------------------------------------------------------------------------------- options


def test_since_runs_from_a_minute_to_a_week():
    assert live.parse_since("1h30m") == dt.timedelta(minutes=90)
    assert live.parse_since("7d") == dt.timedelta(days=7)
    with pytest.raises(ValueError, match="longer than one week"):
        live.parse_since("8d")
    with pytest.raises(ValueError, match="shorter than one minute"):
        live.parse_since("30s")
    with pytest.raises(ValueError, match="not a duration"):
        live.parse_since("soon")


def test_tokens_option():
    assert live.parse_tokens("800:120") == live.TokenProfile(800, 120, "--tokens")
    assert live.parse_tokens("100000000:1").prompt == 100_000_000
    for bad in ("800", "a:b", "0:10", "10:-1", "100000001:1", "1:" + "9" * 4000, "9" * 5000 + ":1"):
        with pytest.raises(live.TrafficInputError) as caught:
            live.parse_tokens(bad)
        assert caught.value.option == "--tokens"


def test_the_window_is_whole_minutes_and_knows_cloudwatchs_retention():
    w = live.Window.ending(NOW, dt.timedelta(hours=3))
    assert (w.start, w.end) == (dt.datetime(2026, 1, 1, 9, 0, tzinfo=dt.UTC), dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC))
    assert w.within_high_resolution(NOW)
    assert not live.Window.ending(NOW, dt.timedelta(hours=3, minutes=2)).within_high_resolution(NOW)
    assert [h.hour for h in live.Window.ending(NOW, dt.timedelta(minutes=90)).hours()] == [10, 11]


# --------------------------------------------------------------------------------------------- which endpoint


def _config(components: int | None) -> object:
    ep: dict = {"name": "chat", "instance_type": "ml.g6.12xlarge", "instances": {"initial": 1, "min": 1, "max": 2}}
    image = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0"
    if components is None:
        ep["model"] = {"image": image}
    else:
        ep["inference_components"] = [{"name": f"ic{i}", "image": image, "resources": {"accelerators": 1, "memory_mb": 1024}}
                                      for i in range(components)]
    return parse_config({"project": "demo", "region": "us-east-1", "endpoints": [ep]})


def test_the_endpoint_is_named_as_in_aws_or_as_in_the_file():
    config = _config(None)
    for name in ("demo-chat", "chat"):
        t = live.live_target(config, name)
        assert (t.endpoint, t.component, t.config_endpoint, t.config_component) == ("demo-chat", None, "chat", None)
    other = live.live_target(config, "sdk-endpoint-1")
    assert (other.endpoint, other.config_endpoint) == ("sdk-endpoint-1", "chat")
    assert "sdk-endpoint-1 is not an endpoint of the file" in other.notes[0]
    with pytest.raises(live.TrafficInputError, match="not --endpoint 'other'") as caught:
        live.live_target(config, "chat", endpoint="other")
    assert caught.value.option == "--endpoint"
    with pytest.raises(live.TrafficInputError, match="hosts a single model"):
        live.live_target(config, "chat", component="x")


def test_a_component_is_read_under_its_name_in_aws():
    one = live.live_target(_config(1), "chat")
    assert (one.component, one.config_component, one.components_on_endpoint) == ("demo-ic0", "ic0", 1)
    with pytest.raises(live.TrafficInputError, match="hosts 2 inference components") as caught:
        live.live_target(_config(2), "chat")
    assert caught.value.option == "--component"
    chosen = live.live_target(_config(2), "chat", component="ic1")
    assert (chosen.component, chosen.components_on_endpoint) == ("demo-ic1", 2)
    with pytest.raises(live.TrafficInputError, match="no inference component 'nope'"):
        live.live_target(_config(2), "chat", component="nope")


def test_base64_helper_matches_what_capture_writes():
    line = json.loads(record(START, {"a": 1}, {"b": 2}, encoding="BASE64"))
    assert json.loads(base64.b64decode(line["captureData"]["endpointInput"]["data"])) == {"a": 1}
