"""Reading a live endpoint's traffic from moto: data capture files in AWS's documented layout (JSON and BASE64,
with and without usage counts, malformed lines), CloudWatch metrics sent with put_metric_data and read back with
get_metric_data, the choice between them, the read limits, and nothing but reads."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from fastscale.infra.analysis import endpoint_traffic as live
from fastscale.infra.aws.clients import AwsError
from fastscale.infra.aws.traffic import ReadLimits, capture_setup, read_traffic
from tests.traffic_support import (
    NOW,
    START,
    call_log,
    capture_key,
    chat,
    endpoint,
    only_reads,
    per_minute,
    put_capture,
    put_metric,
    record,
    tgi,
    variant_dims,
)

NAME = "sdk-chat"
HOUR = dt.timedelta(hours=1)


def target(name: str = NAME, component: str | None = None, components: int = 0) -> live.LiveTarget:
    return live.LiveTarget(name, component, "chat", None, components)


def read(aws, since=HOUR, **kwargs) -> live.EndpointTrace:
    return read_traffic(kwargs.pop("target", target()), region="us-east-1", since=since, now=NOW, clients=aws, **kwargs)


def captured(n: int, start: dt.datetime = START, step: float = 6.0, **kw) -> list[str]:
    """``n`` requests, alternately JSON and BASE64, every other one with usage counts."""
    out = []
    for i in range(n):
        at = start + dt.timedelta(seconds=i * step)
        out.append(record(at, *chat("p" * 400, "o" * 80, usage=(120, 30) if i % 2 else None),
                          encoding="BASE64" if i % 3 else "JSON", event=i, **kw))
    return out


def test_data_capture_gives_one_request_per_captured_record(aws):
    endpoint(aws["sagemaker"], NAME)
    first, second = captured(300), captured(300, START + dt.timedelta(minutes=30))
    put_capture(aws["s3"], {capture_key(NAME, START, "a"): first, capture_key(NAME, START, "b"): second})
    with call_log(aws) as made:
        built = read(aws)
    assert only_reads(made), made
    assert set(made) == {"DescribeEndpoint", "DescribeEndpointConfig", "ListObjectsV2", "GetObject"}
    assert built.source == live.DATA_CAPTURE and len(built.trace) == 600
    counted = built.trace.input_tokens.count(120)
    assert counted == 300 and built.trace.input_tokens.count(100) == 300  # 400 characters / 4
    assert sorted(set(built.trace.output_tokens)) == [20, 30]
    assert built.trace.arrivals[0] == 0.5 and built.trace.arrivals[-1] == round(1800 + 299 * 6 + 0.5, 3)
    assert "prompt tokens: 300 counted by the server, 300 estimated at 4 characters per token" in built.notes


def test_tgi_payloads_and_malformed_lines_are_counted_without_a_traceback(aws):
    endpoint(aws["sagemaker"], NAME)
    good = [record(START + dt.timedelta(seconds=i), *tgi("t" * 40, "g" * 40, generated=64), encoding="BASE64")
            for i in range(20)]
    bad = ["{broken", json.dumps({"captureData": {}, "eventMetadata": {"inferenceTime": "later"}}), "\x00\x01"]
    put_capture(aws["s3"], {capture_key(NAME, START): good[:10] + bad + good[10:]})
    built = read(aws)
    assert len(built.trace) == 20 and set(built.trace.output_tokens) == {64} and built.skipped_lines == 3
    skipped = next(n for n in built.notes if "skipped" in n)
    assert skipped.startswith("3 of 23 captured lines skipped: 2 not JSON (first: ")
    assert "line 11" in skipped and "broken" not in skipped


def test_capture_files_are_read_hour_by_hour_under_the_endpoint_and_variant(aws):
    endpoint(aws["sagemaker"], NAME)
    other = capture_key("another-endpoint", START)
    earlier = capture_key(NAME, START - dt.timedelta(hours=2))
    put_capture(aws["s3"], {capture_key(NAME, START): captured(5), other: captured(7), earlier: captured(9)})
    assert len(read(aws).trace) == 5


def test_a_sampled_capture_stands_for_all_the_traffic(aws):
    endpoint(aws["sagemaker"], NAME, sampling=25)
    put_capture(aws["s3"], {capture_key(NAME, START): captured(40, step=60)})
    built = read(aws)
    assert len(built.trace) == 160 and any("samples 25% of the requests" in n for n in built.notes)


def test_without_data_capture_the_trace_comes_from_cloudwatch(aws):
    endpoint(aws["sagemaker"], NAME, capture=False)
    cw = aws["cloudwatch"]
    counts = [5 + i % 7 for i in range(60)]
    put_metric(cw, "Invocations", per_minute(counts), variant_dims(NAME))
    put_metric(cw, "ModelLatency", per_minute([2_500_000] * 60), variant_dims(NAME))
    busy = [(START + dt.timedelta(seconds=10 * k), 4.0 if k % 6 == 5 else 0.0) for k in range(360)]
    put_metric(cw, "ConcurrentRequestsPerModel", busy, variant_dims(NAME))
    with call_log(aws) as made:
        built = read(aws, tokens=live.TokenProfile(700, 90, "--tokens"))
    assert only_reads(made) and set(made) == {"DescribeEndpoint", "GetMetricData"}
    assert built.source == live.METRICS and len(built.trace) == sum(counts)
    assert all(a % 60 >= 50 for a in built.trace.arrivals)  # the sixth 10-second period of each minute
    assert set(built.trace.input_tokens) == {700} and set(built.trace.output_tokens) == {90}
    assert built.model_latency_s == pytest.approx(2.5)
    assert "data capture is off on sdk-chat: the trace comes from CloudWatch metrics" in built.notes


def test_beyond_three_hours_the_minutes_are_spread_evenly(aws):
    endpoint(aws["sagemaker"], NAME, capture=False)
    start = NOW.replace(second=0) - dt.timedelta(hours=5)
    put_metric(aws["cloudwatch"], "Invocations", per_minute([6] * 300, start), variant_dims(NAME))
    built = read(aws, since=dt.timedelta(hours=5))
    assert len(built.trace) == 1800
    assert any("beyond CloudWatch's retention of 10-second datapoints" in n for n in built.notes)


def test_an_inference_component_is_read_by_its_own_dimension(aws):
    endpoint(aws["sagemaker"], NAME, capture=False)
    put_metric(aws["cloudwatch"], "Invocations", per_minute([3] * 60),
               [{"Name": "InferenceComponentName", "Value": "demo-qwen"}])
    put_metric(aws["cloudwatch"], "Invocations", per_minute([50] * 60), variant_dims(NAME))
    built = read(aws, target=target(component="demo-qwen", components=2))
    assert len(built.trace) == 180 and built.component == "demo-qwen"


def test_capture_that_cannot_name_the_component_falls_back_to_its_metrics(aws):
    endpoint(aws["sagemaker"], NAME)
    put_capture(aws["s3"], {capture_key(NAME, START): captured(50)})
    put_metric(aws["cloudwatch"], "Invocations", per_minute([1] * 60),
               [{"Name": "InferenceComponentName", "Value": "demo-qwen"}])
    built = read(aws, target=target(component="demo-qwen", components=2))
    assert built.source == live.METRICS and len(built.trace) == 60
    assert any("records do not name the inference component" in n for n in built.notes)
    alone = read(aws, target=target(component="demo-qwen", components=1))
    assert alone.source == live.DATA_CAPTURE and len(alone.trace) == 50


def test_capture_on_but_empty_window_falls_back_to_metrics_and_says_so(aws):
    endpoint(aws["sagemaker"], NAME)
    put_metric(aws["cloudwatch"], "Invocations", per_minute([2] * 60), variant_dims(NAME))
    missing = read(aws)  # the capture bucket does not exist
    assert missing.source == live.METRICS and len(missing.trace) == 120
    assert any("cannot be read (" in n and "NoSuchBucket" in n and n.endswith("read from CloudWatch instead")
               for n in missing.notes)
    put_capture(aws["s3"], {capture_key(NAME, START - dt.timedelta(hours=3)): captured(3)})  # only older files
    built = read(aws)
    assert built.source == live.METRICS and len(built.trace) == 120
    assert any(n.startswith("no captured request of sdk-chat") and n.endswith("read from CloudWatch instead")
               for n in built.notes)


def test_nothing_recorded_is_no_traffic_and_an_unknown_endpoint_is_aws_s_answer(aws):
    endpoint(aws["sagemaker"], NAME, capture=False)
    with pytest.raises(live.NoTrafficError, match="no Invocations of sdk-chat"):
        read(aws)
    with pytest.raises(AwsError, match="Could not find endpoint"):
        read(aws, target=target("nope"))


def test_read_limits_end_the_trace_at_the_last_whole_hour_and_say_so(aws):
    endpoint(aws["sagemaker"], NAME)
    hours = [START - dt.timedelta(hours=2), START - dt.timedelta(hours=1), START]
    put_capture(aws["s3"], {capture_key(NAME, h, str(i)): captured(10, h, step=60) for h in hours for i in range(2)})
    built = read(aws, since=3 * HOUR, limits=ReadLimits(capture_objects=5))
    assert len(built.trace) == 40 and built.window.end == START
    assert built.limits == ("read limit reached (more than 5 capture files): the trace ends at 2026-01-01T11:00:00Z, "
                            "where the unread capture files begin",)
    by_requests = read(aws, since=3 * HOUR, limits=ReadLimits(capture_requests=30))
    assert len(by_requests.trace) == 20 and "more than 30 requests" in by_requests.limits[0]
    with pytest.raises(live.NoTrafficError):  # every line is longer than 100 bytes: skipped, and no metrics either
        read(aws, since=3 * HOUR, limits=ReadLimits(line_bytes=100))


def test_metric_datapoints_are_capped(aws):
    endpoint(aws["sagemaker"], NAME, capture=False)
    put_metric(aws["cloudwatch"], "Invocations", per_minute([1] * 60), variant_dims(NAME))
    built = read(aws, limits=ReadLimits(metric_datapoints=20))
    assert len(built.trace) == 20
    assert "read limit reached: 20 datapoints of Invocations at 60 s; the trace ends at the last one read" in built.limits


def test_capture_setup_reads_the_summary_and_the_configuration():
    summary = {"DataCaptureConfig": {"EnableCapture": True, "CaptureStatus": "Started", "CurrentSamplingPercentage": 5,
                                     "DestinationS3Uri": "s3://b/p/"}}
    config = {"DataCaptureConfig": {"InitialSamplingPercentage": 50, "CaptureOptions": [{"CaptureMode": "Input"}]}}
    setup = capture_setup(summary, config)
    assert setup is not None and setup.sampling == 5 and setup.captures_input and not setup.captures_output
    assert setup.bucket_and_prefix == ("b", "p")
    stopped = {"DataCaptureConfig": {**summary["DataCaptureConfig"], "CaptureStatus": "Stopped"}}
    assert capture_setup(stopped, config) is None
    assert capture_setup({}, None) is None
