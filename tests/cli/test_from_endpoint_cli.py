"""`simulate --from-endpoint` and `recommend --from-endpoint`: a trace built from a live endpoint's own traffic
(moto: an endpoint deployed as fastscale deploys it, data capture files in S3, CloudWatch datapoints), what was
assumed printed, --write-trace, only reads, and bad input (exit 2) or nothing to read (exit 1)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from tests.aws.factories import deploy_single_model, single_model_config
from tests.cli.support import run
from tests.cli.test_output_width import assert_fits
from tests.traffic_support import (
    DESTINATION,
    NOW,
    START,
    call_log,
    capture_key,
    chat,
    only_reads,
    per_minute,
    put_capture,
    put_metric,
    record,
    variant_dims,
)

CONFIG = single_model_config(model_size_gb=16)  # project demo, endpoint chat: demo-chat in AWS
LIVE = "demo-chat"
CAPTURE = {"EnableCapture": True, "InitialSamplingPercentage": 100, "DestinationS3Uri": DESTINATION,
           "CaptureOptions": [{"CaptureMode": "Input"}, {"CaptureMode": "Output"}]}


@pytest.fixture
def config_file(tmp_path, runtime, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runtime.use(now=lambda: NOW)
    path = tmp_path / "fastscale.yaml"
    path.write_text(yaml.safe_dump(CONFIG.model_dump(mode="json", exclude_defaults=True), sort_keys=False))
    return str(path)


def traffic(aws, *, capture: bool = True, requests: int = 240) -> None:
    """demo-chat deployed, and half an hour of its traffic: captured requests (JSON and BASE64, with and without
    usage counts) and the CloudWatch Invocations / ModelLatency of the same hour."""
    deploy_single_model(aws, config=CONFIG, data_capture=CAPTURE if capture else None)
    lines = [record(START + dt.timedelta(seconds=7.5 * i), *chat("p" * 2400, "o" * 600, usage=(500, 140) if i % 2 else None),
                    encoding="BASE64" if i % 2 else "JSON", event=i) for i in range(requests)]
    if capture:
        put_capture(aws["s3"], {capture_key(LIVE, START): lines + ["{ a malformed line"]})
    put_metric(aws["cloudwatch"], "Invocations", per_minute([8] * 30), variant_dims(LIVE))
    put_metric(aws["cloudwatch"], "ModelLatency", per_minute([9_000_000] * 30), variant_dims(LIVE))


def test_simulate_from_data_capture_prints_how_the_trace_was_built(aws, config_file, monkeypatch):
    traffic(aws)
    monkeypatch.setenv("COLUMNS", "80")
    with call_log(aws) as made:
        result = run("simulate", config_file, "--from-endpoint", LIVE, "--since", "1h")
    assert result.exit_code == 0, result.output
    assert only_reads(made), made
    assert_fits(result.stdout)
    out = " ".join(result.output.split())
    assert f"trace of {LIVE} (us-east-1) from data capture: 240 requests" in out
    assert "prompt tokens: 120 counted by the server, 120 estimated at 4 characters per token" in out
    assert "1 of 241 captured lines skipped: 1 not JSON" in out and "a malformed line" not in out
    assert "latency of served requests" in out and "240 of 240 requests served" in out


def test_the_written_trace_replays_exactly_as_the_live_one(aws, config_file, tmp_path):
    traffic(aws)
    live = run("simulate", config_file, "--from-endpoint", "chat", "--since", "1h", "--write-trace", "live.csv", "--json")
    assert live.exit_code == 0, live.output
    doc = json.loads(live.stdout)
    assert doc["endpoint_trace"]["source"] == "data capture" and doc["endpoint_trace"]["requests"] == 240
    written = (tmp_path / "live.csv").read_text().splitlines()
    assert written[0] == "timestamp,input_tokens,output_tokens" and len(written) == 241
    again = run("simulate", config_file, "--requests", "live.csv", "--json")
    assert again.exit_code == 0, again.output
    replayed = json.loads(again.stdout)["simulations"][0]["requests"]
    assert replayed == doc["simulations"][0]["requests"]


def test_simulate_from_metrics_with_stated_tokens_and_region(aws, config_file, runtime):
    traffic(aws, capture=False)
    regions = []

    def clients_for(stack):
        regions.append(stack.region)
        return aws

    runtime.use(aws_clients=clients_for)
    result = run("simulate", config_file, "--from-endpoint", LIVE, "--since", "1h", "--tokens", "600:80",
                 "--region", "us-west-2", "--json")
    assert result.exit_code == 0, result.output
    assert regions == ["us-west-2"]
    doc = json.loads(result.stdout)
    trace = doc["endpoint_trace"]
    assert trace["source"] == "CloudWatch metrics" and trace["requests"] == 240 and trace["region"] == "us-west-2"
    assert trace["model_latency_mean_s"] == 9.0
    assert "every request: 600 prompt and 80 output tokens (--tokens)" in trace["notes"]
    assert doc["simulations"][0]["trace"]["mean_input_tokens"] == 600


def _with_request_tokens(path: str, prompt: int, output: int) -> None:
    data = yaml.safe_load(Path(path).read_text())
    data["endpoints"][0]["model"].setdefault("serving", {})["request_tokens"] = {"prompt": prompt, "output": output}
    Path(path).write_text(yaml.safe_dump(data, sort_keys=False))


def test_metrics_tokens_come_from_the_config_then_from_tokens_then_the_stated_default(aws, config_file):
    traffic(aws, capture=False)
    default = json.loads(run("simulate", config_file, "--from-endpoint", LIVE, "--since", "1h", "--json").stdout)
    assert default["simulations"][0]["trace"]["mean_input_tokens"] == 1024
    assert any("1024 prompt and 256 output tokens (fastscale's default" in n for n in default["endpoint_trace"]["notes"])
    _with_request_tokens(config_file, 700, 90)
    stated = json.loads(run("simulate", config_file, "--from-endpoint", LIVE, "--since", "1h", "--json").stdout)
    assert stated["simulations"][0]["trace"]["mean_input_tokens"] == 700
    assert stated["simulations"][0]["trace"]["mean_output_tokens"] == 90
    assert ("every request: 700 prompt and 90 output tokens (endpoints[0].model.serving.request_tokens)"
            in stated["endpoint_trace"]["notes"])
    given = json.loads(run("simulate", config_file, "--from-endpoint", LIVE, "--since", "1h", "--tokens", "600:80",
                           "--json").stdout)
    assert given["simulations"][0]["trace"]["mean_input_tokens"] == 600  # --tokens wins over the config


@pytest.mark.parametrize(("args", "message"), [
    (("--since", "2h"), "--since only apply with --from-endpoint"),
    (("--write-trace", "t.csv"), "--write-trace only apply with --from-endpoint"),
    (("--from-endpoint", LIVE, "--requests", "x.csv"), "give one traffic profile, not --requests and --from-endpoint"),
    (("--from-endpoint", LIVE, "--duration", "60"), "--duration do not apply to --from-endpoint"),
    (("--from-endpoint", LIVE, "--since", "9d"), "longer than one week"),
    (("--from-endpoint", LIVE, "--since", "soon"), "not a duration"),
    (("--from-endpoint", LIVE, "--tokens", "many"), "is not PROMPT:OUTPUT tokens"),
    (("--from-endpoint", LIVE, "--region", "us-esat-1"), "not a region with SageMaker AI (did you mean"),
    (("--from-endpoint", "chat", "--endpoint", "other"), "not --endpoint 'other'"),
    (("--from-endpoint", "chat", "--component", "c"), "hosts a single model"),
])
def test_bad_options_exit_2_before_aws_is_read(aws, config_file, args, message):
    with call_log(aws) as made:
        result = run("simulate", config_file, *args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split()) and "Traceback" not in result.output
    assert made == []


def test_an_unknown_endpoint_or_a_window_without_traffic_exits_1(aws, config_file):
    unknown = run("simulate", config_file, "--from-endpoint", "nope")
    assert unknown.exit_code == 1 and "cannot read the traffic of nope in us-east-1" in unknown.output
    assert "Could not find endpoint" in unknown.output
    deploy_single_model(aws, config=CONFIG)
    idle = run("simulate", config_file, "--from-endpoint", LIVE, "--json")
    assert idle.exit_code == 1
    assert "CloudWatch recorded no Invocations of demo-chat" in json.loads(idle.stdout)["error"]


def test_recommend_needs_exactly_one_trace(aws, config_file):
    none = run("recommend", config_file, "--ttft-p99", "2")
    assert none.exit_code == 2 and "give --trace CSV or --from-endpoint NAME" in none.output
    both = run("recommend", config_file, "--ttft-p99", "2", "--trace", "t.csv", "--from-endpoint", LIVE)
    assert both.exit_code == 2 and "not both" in both.output


def test_recommend_from_a_deployed_endpoint_shows_the_current_config_first_and_monthly_costs(aws, config_file):
    """An endpoint deployed as fastscale deploys it, its traffic recorded as data capture files and CloudWatch
    metrics: a recommendation with no trace file, the current config as the baseline, costs per month."""
    traffic(aws)
    with call_log(aws) as made:
        result = run("recommend", config_file, "--from-endpoint", LIVE, "--since", "1h", "--ttft-p99", "5",
                     "--instance-types", "ml.g6.2xlarge", "--workers", "1", "--json")
    assert result.exit_code in (0, 1), result.output
    assert only_reads(made), made
    doc = json.loads(result.stdout)
    assert doc["endpoint_trace"]["source"] == "data capture" and doc["trace"]["requests"] == 240
    base = doc["baseline"]
    assert base["settings"]["endpoints[0].instance_type"] == "ml.g6.2xlarge"
    assert base["settings"]["endpoints[0].instances.max"] == 4
    assert base["settings"]["endpoints[0].model.autoscaling.target_concurrency"] == 4
    assert {"cost_usd", "monthly_cost_usd", "ttft_p99_s", "e2e_p99_s", "rejected_fraction", "meets_slo"} <= set(base)
    factor = doc["monthly"]["factor"]
    assert factor == pytest.approx(730 * 3600 / doc["trace"]["seconds"])
    for row in [base, *doc["pareto"]]:
        assert row["monthly_cost_usd"] == pytest.approx(row["cost_usd"] * factor, rel=1e-3)
    assert doc["why"]
    text = run("recommend", config_file, "--from-endpoint", LIVE, "--since", "1h", "--ttft-p99", "5",
               "--instance-types", "ml.g6.2xlarge", "--workers", "1")
    out = " ".join(text.output.split())
    assert "trace of demo-chat (us-east-1) from data capture" in out
    assert "│ now │" in text.output.replace("  ", " ") or "now" in out
    assert "per month: cost over the trace x 730 h / " in out and doc["why"] in out
