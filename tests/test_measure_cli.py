"""`fastscale measure-scaleout` with a Stubber-wrapped SageMaker client and a clock that never sleeps."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from tests.cli.support import TestRuntime, active, current_runtime
from tests.measure_stubs import FakeClock, Scaling, Script, scaling_activity, stubbed_autoscaling, stubbed_sagemaker

LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
CONFIG = {
    "project": "demo",
    "region": "us-east-1",
    "endpoints": [
        {
            "name": "shared",
            "instance_type": "ml.g6.12xlarge",
            "instances": {"initial": 1, "min": 1, "max": 3},
            "inference_components": [
                {"name": "qwen", "image": LMI, "image_size_gb": 17.7, "model_size_gb": 16,
                 "resources": {"accelerators": 1, "memory_mb": 32768}, "copies": {"initial": 1, "min": 1, "max": 4}},
            ],
        },
        {
            "name": "chat",
            "instance_type": "ml.g6.2xlarge",
            "instances": {"initial": 1, "min": 1, "max": 2},
            "model": {"image": LMI, "image_size_gb": 17.7, "model_size_gb": 16},
        },
    ],
}


@pytest.fixture
def config_file(write_yaml):
    return str(write_yaml(CONFIG))


@pytest.fixture
def aas():
    """The Application Auto Scaling stubber (the `sm` fixture installs its client)."""
    client, stubber = stubbed_autoscaling()
    stubber.client = client
    yield stubber
    stubber.assert_no_pending_responses()


@pytest.fixture
def clock():
    """The command's clock (the runtime's ``monotonic`` and ``sleep``): it never sleeps; a test sets
    ``interrupt_after`` for Ctrl-C in a wait."""
    return FakeClock()


@pytest.fixture
def runtime(clock):
    """The runtime `run` hands the command: the real one with the fake clock (the `sm` fixture adds the clients)."""
    with active(TestRuntime()) as rt:
        rt.use(monotonic=clock.now, sleep=clock.sleep)
        yield rt


@pytest.fixture
def sm(runtime, aas):
    client, stubber = stubbed_sagemaker()
    regions = []

    def clients_for(stack):
        regions.append(stack.region)
        return {"sagemaker": client, "application-autoscaling": aas.client}

    runtime.use(aws_clients=clients_for)
    yield stubber
    stubber.assert_no_pending_responses()
    assert set(regions) <= {"us-east-1"}


def run(*args):
    return CliRunner().invoke(cli, ["measure-scaleout", *args], obj=current_runtime())


def test_copy_measured_and_compared_with_the_estimate(sm, aas, config_file):
    Scaling(aas).suspend()
    (
        Script(sm, "demo-shared", "demo-qwen")
        .describe_endpoint()
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="Updating", current=1)
        .poll_component(status="Updating", current=1)
        .poll_component(status="InService", current=2)
        .set_copies(1)
    )
    Scaling(aas).restore().resume()
    result = run(config_file, "--endpoint", "shared", "--component", "qwen", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["measurement"]["outcome"] == "in service"
    assert payload["measurement"]["seconds"] == 20
    assert payload["measurement"]["restored"] is True
    assert payload["measurement"]["scalable_target"] == "inference-component/demo-qwen"
    assert payload["measurement"]["scaling_resumed"] is True
    assert payload["estimate"]["scenario"] == "copy_data_cache"
    # The measurement starts at SageMaker's acceptance, so the estimate excludes detection and decision.
    assert {p["name"] for p in payload["estimate"]["phases"]}.isdisjoint({"detection", "scaling_decision"})
    expected = payload["estimate"]["seconds"]
    assert payload["difference_percent"] == pytest.approx((20 - expected) / expected * 100, abs=0.1)


def test_human_output_shows_both_sides(sm, aas, config_file):
    Scaling(aas).suspend()
    (
        Script(sm, "demo-shared", "demo-qwen")
        .describe_endpoint()
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="Updating", current=1, instances=1)
        .poll_component(status="InService", current=2, instances=2)
        .set_copies(1)
    )
    Scaling(aas).restore().resume()
    result = run(config_file, "--endpoint", "shared", "--component", "qwen")
    assert result.exit_code == 0, result.output
    assert "measured vs estimated" in result.output
    assert "new instance" in result.output  # the copy brought an instance up: compared with that scenario
    assert "restored: requested 1 copy again" in result.output
    text = " ".join(result.output.split())
    assert "dynamic scale-in and scale-out of inference-component/demo-qwen were suspended" in text
    assert "previous suspended state is back" in text


def test_instance_measured_on_a_single_model_endpoint(sm, aas, config_file):
    Scaling(aas, "endpoint/demo-chat/variant/AllTraffic", "sagemaker:variant:DesiredInstanceCount").target(registered=False)
    (
        Script(sm, "demo-chat")
        .describe_endpoint(instances=1)
        .set_instances(2)
        .describe_endpoint(status="Updating", instances=1, desired=2, stages=("Creating",))
        .describe_endpoint(status="InService", instances=2)
        .set_instances(1)
    )
    result = run(config_file, "--endpoint", "chat", "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["measurement"]["kind"] == "instance"
    assert payload["estimate"]["scenario"] == "instance_image_cache"
    assert "instance_provisioning" in [p["name"] for p in payload["estimate"]["phases"]]


def test_failure_exits_1_after_restoring(sm, aas, config_file):
    Scaling(aas).target(registered=False)
    (
        Script(sm, "demo-shared", "demo-qwen")
        .describe_endpoint()
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="Failed", current=1, failure="model download timed out")
        .set_copies(1)
    )
    result = run(config_file, "--endpoint", "shared", "--component", "qwen")
    assert result.exit_code == 1
    assert "model download timed out" in result.output
    assert "restored" in result.output


def test_timeout_exits_1_after_restoring(sm, aas, config_file):
    Scaling(aas).target(registered=False)
    script = Script(sm, "demo-shared", "demo-qwen").describe_endpoint().describe_component(current=1).set_copies(2)
    script.poll_component(status="Updating", current=1).poll_component(status="Updating", current=1)
    script.set_copies(1)
    result = run(config_file, "--endpoint", "shared", "--component", "qwen", "--timeout", "10", "--json")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["measurement"]["outcome"] == "timeout" and payload["measurement"]["restored"] is True


def test_failed_restore_tells_what_to_fix(sm, aas, config_file):
    Scaling(aas).target(registered=False)
    (
        Script(sm, "demo-shared", "demo-qwen")
        .describe_endpoint()
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="InService", current=2)
        .set_copies(1, error="ValidationException", message="refused")
        .describe_component(status="InService", current=2)
    )
    result = run(config_file, "--endpoint", "shared", "--component", "qwen")
    assert result.exit_code == 1
    text = " ".join(result.output.split())  # rich wraps long lines
    assert "left behind: inference component demo-qwen may still have 2 copies instead of 1 copy" in text
    assert ("Undo: `aws sagemaker update-inference-component-runtime-config --inference-component-name demo-qwen "
            "--desired-runtime-config CopyCount=1 --region us-east-1`") in text


def test_busy_resource_exits_1_without_changes(sm, aas, config_file):
    Scaling(aas).target(registered=False)
    Script(sm, "demo-shared", "demo-qwen").describe_endpoint(status="Updating")
    result = run(config_file, "--endpoint", "shared", "--component", "qwen")
    assert result.exit_code == 1 and "nothing was changed" in " ".join(result.output.split())


@pytest.mark.parametrize(
    "args, message",
    [
        (("--endpoint", "nope"), "no endpoint 'nope'"),
        (("--endpoint", "shared"), "pass --component"),
        (("--endpoint", "shared", "--component", "nope"), "no component 'nope'"),
        (("--endpoint", "chat", "--component", "qwen"), "single-model endpoint"),
        (("--endpoint", "chat", "--timeout", "0"), "0"),
    ],
)
def test_bad_names_exit_2_before_any_aws_call(sm, config_file, args, message):
    result = run(config_file, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_missing_endpoint_option_exits_2(config_file):
    assert run(config_file).exit_code == 2


def test_ctrl_c_restores_and_resumes(sm, aas, config_file, clock):
    clock.interrupt_after = 1
    Scaling(aas).suspend()
    (Script(sm, "demo-shared", "demo-qwen").describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="Updating", current=1).set_copies(1))
    Scaling(aas).restore().resume()
    result = run(config_file, "--endpoint", "shared", "--component", "qwen", "--json")
    assert result.exit_code == 130
    m = json.loads(result.stdout)["measurement"]
    assert m["outcome"] == "interrupted" and m["restored"] is True and m["scaling_resumed"] is True
    assert m["interrupted"] is True and m["left_behind"] == []


def test_running_scaling_activity_refuses_to_start(sm, aas, config_file):
    Scaling(aas).target().activities(scaling_activity("a-now", "InProgress", 2))
    result = run(config_file, "--endpoint", "shared", "--component", "qwen")
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "is InProgress" in text and "nothing was changed" in text


def test_failed_resume_prints_the_command_to_run(sm, aas, config_file):
    Scaling(aas).suspend()
    (Script(sm, "demo-shared", "demo-qwen").describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="InService", current=2).set_copies(1))
    Scaling(aas).restore().resume(error="Rate exceeded")
    result = run(config_file, "--endpoint", "shared", "--component", "qwen")
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "left behind: dynamic scaling of inference-component/demo-qwen is still suspended (ValidationException: Rate exceeded)" in text
    assert ("Undo: `aws application-autoscaling register-scalable-target --service-namespace sagemaker --resource-id "
            "inference-component/demo-qwen --scalable-dimension sagemaker:inference-component:DesiredCopyCount "
            "--suspended-state DynamicScalingInSuspended=false,DynamicScalingOutSuspended=false,"
            "ScheduledScalingSuspended=false --region us-east-1`") in text


def test_help_says_auto_scaling_is_suspended():
    text = " ".join(CliRunner().invoke(cli, ["measure-scaleout", "--help"]).output.split())
    assert "dynamic scale-in and scale-out of the target are suspended" in text
    assert "never below what auto scaling asked for" in text
