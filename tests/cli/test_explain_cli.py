"""`fastscale explain` end to end on recorded AWS answers: output, --json, exit codes, bad input."""

from __future__ import annotations

import json

import boto3
import pytest
import yaml
from botocore.stub import Stubber
from click.testing import CliRunner

from fastscale.cli.main import cli
from tests.cli.support import current_runtime
from tests.explain_stubs import CONFIG, EP, ICE_REASON, NOW, Recorded, at, component_desc, endpoint_desc


@pytest.fixture
def config_file(write_yaml):
    return str(write_yaml(CONFIG))


@pytest.fixture
def play(runtime):
    """Serve one recorded scenario to the command at NOW; fail if any queued answer was not asked for."""
    used = []

    def install(recorded: Recorded) -> None:
        clients, stubbers = recorded.queue()
        used.extend(stubbers)
        runtime.use(aws_clients=lambda config: clients)

    runtime.use(now=lambda: NOW)
    yield install
    for s in used:
        s.assert_no_pending_responses()


def run(*args):
    return CliRunner().invoke(cli, ["explain", *args], obj=current_runtime())


def test_healthy_endpoint_says_no_problem_found(play, config_file):
    play(Recorded.healthy_component())
    result = run(config_file, "--component", "qwen")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "inference component demo-qwen" in text
    assert "Successfully set desired copy count to 2" in text
    assert "metric ConcurrentRequestsPerCopy (Average): 12 datapoint(s), every 10 s, peak 6.2" in text
    assert "no problem found in 1 scalable target(s)" in text


def test_problem_is_exit_3_with_json_findings(play, config_file):
    rec = Recorded.healthy_component()
    rec.endpoint = endpoint_desc(EP, instances=1, desired=2, stages=[
        {"Status": "Creating", "StatusMessage": ICE_REASON, "StartTime": at(40)}])
    rec.component = component_desc(current=2, desired=3)
    play(rec)
    result = run(config_file, "--endpoint", "shared", "--component", "qwen", "--json")
    assert result.exit_code == 3, result.output
    payload = json.loads(result.stdout)
    assert payload["command"] == "explain" and payload["ok"] is False and payload["exit_code"] == 3
    assert payload["window"] == {"start": "2026-03-12T09:00:00Z", "end": "2026-03-12T12:00:00Z", "metric_period": 10}
    [target] = payload["targets"]
    assert target["resource_id"] == "inference-component/demo-qwen"
    assert [f["code"] for f in target["findings"]] == ["insufficient-capacity"]
    assert any(e["source"] == "sagemaker" and ICE_REASON in e["event"] for e in target["timeline"])


def test_human_findings_show_evidence_and_fix(play, config_file):
    rec = Recorded.healthy_component()
    rec.target["SuspendedState"]["DynamicScalingOutSuspended"] = True
    play(rec)
    result = run(config_file, "--component", "qwen", "--since", "3h")
    assert result.exit_code == 3
    text = " ".join(result.output.split())
    assert "✗ scaling-suspended" in text and "evidence:" in text and "fix:" in text
    assert "1 problem(s) found" in text


@pytest.mark.parametrize("args, message", [
    (("--since", "3 hours"), "is not a duration"),
    (("--since", "30d"), "15 days"),
    (("--endpoint", "nope"), "no endpoint 'nope'"),
    (("--endpoint", "chat", "--component", "qwen"), "no inference component 'qwen' in endpoint 'chat'"),
])
def test_bad_input_exits_2_before_any_aws_call(runtime, config_file, args, message):
    def no_aws(stack):
        raise AssertionError("AWS must not be asked")

    runtime.use(aws_clients=no_aws)
    result = run(config_file, *args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())


def test_aws_refusal_is_exit_1(runtime, config_file):
    aas = boto3.client("application-autoscaling", region_name="us-east-1", aws_access_key_id="x",
                       aws_secret_access_key="y")
    stub = Stubber(aas)
    stub.add_client_error("describe_scalable_targets", "AccessDeniedException",
                          "User is not authorized to perform: application-autoscaling:DescribeScalableTargets")
    stub.activate()
    runtime.use(aws_clients=lambda config: {"application-autoscaling": aas}, now=lambda: NOW)
    result = run(config_file, "--component", "qwen", "--json")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["ok"] is False and "not authorized" in payload["error"]
    stub.assert_no_pending_responses()


def test_help_documents_exit_codes_and_is_listed():
    text = " ".join(run("--help").output.split())
    assert "0 no problem found 3 problems found" in text and "1 AWS could not be read" in text
    assert "explain" in CliRunner().invoke(cli, ["--help"]).output


def test_ctrl_c_exits_130(runtime, config_file):
    aas = boto3.client("application-autoscaling", region_name="us-east-1", aws_access_key_id="x",
                       aws_secret_access_key="y")
    pressed = []

    def ctrl_c(**_):  # Ctrl-C while the first call is under way (before it is sent)
        pressed.append(1)
        raise KeyboardInterrupt

    aas.meta.events.register("provide-client-params.application-autoscaling.*", ctrl_c)
    runtime.use(aws_clients=lambda config: {"application-autoscaling": aas}, now=lambda: NOW)
    result = run(config_file, "--component", "qwen")
    assert pressed and result.exit_code == 130 and "nothing was changed" in result.output


# --- on an emulator: what it lacks is the emulator's, never "AWS's side"


def _emulator_config(write_yaml, url: str) -> str:
    from pathlib import Path

    config = yaml.safe_load((Path(__file__).parents[2] / "examples" / "emulator.yaml").read_text())
    return str(write_yaml({**config, "endpoint_url": url}))


def test_explain_reads_a_scaling_history_from_fastscales_emulator(write_yaml):
    from fastscale.infra.project.emulator import Emulator

    with Emulator(port=0) as emulator:
        result = CliRunner().invoke(cli, ["explain", _emulator_config(write_yaml, emulator.url), "--json"])
    # Nothing is deployed there: the diagnosis works (exit 3, the target is not registered), it does not fail.
    assert result.exit_code == 3, result.output
    doc = json.loads(result.output[result.output.index("{"):])
    assert doc["exit_code"] == 3 and "error" not in doc


def test_a_call_an_emulator_lacks_is_the_emulators_gap_not_an_aws_outage(write_yaml):
    import socket

    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    plain = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)  # moto alone: no DescribeScalingActivities
    plain.start()
    try:
        url = f"http://127.0.0.1:{port}"
        result = CliRunner().invoke(cli, ["explain", _emulator_config(write_yaml, url)])
    finally:
        plain.stop()
    assert result.exit_code == 1, result.output
    text = " ".join(result.output.split())
    assert f"the emulator at {url} failed on DescribeScalingActivities" in text
    assert "this is the emulator, not AWS" in text
    assert "AWS's side" not in text and "<!doctype" not in text
