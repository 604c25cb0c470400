"""`measure-scaleout` always says what it leaves behind, with the command that undoes it, and Ctrl-C at any
point exits 130 after it tried to put things back (Stubber-validated answers, a clock that never sleeps)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.cli.runtime import Runtime
from tests.measure_stubs import FakeClock, Scaling, Script, stubbed_autoscaling, stubbed_sagemaker
from tests.test_measure_cli import CONFIG

RESTORE_COPY = ("aws sagemaker update-inference-component-runtime-config --inference-component-name demo-qwen "
                "--desired-runtime-config CopyCount=1 --region us-east-1")
RESUME = ("aws application-autoscaling register-scalable-target --service-namespace sagemaker --resource-id "
          "inference-component/demo-qwen --scalable-dimension sagemaker:inference-component:DesiredCopyCount "
          "--suspended-state DynamicScalingInSuspended=false,DynamicScalingOutSuspended=false,"
          "ScheduledScalingSuspended=false --region us-east-1")
BUSY = "Inference component is in Updating state"


@pytest.fixture
def config_file(write_yaml):
    return str(write_yaml(CONFIG))


@pytest.fixture
def clock():
    """The clock the command waits on (the runtime's ``monotonic`` and ``sleep``); ``interrupt_after`` is Ctrl-C."""
    return FakeClock()


@pytest.fixture
def clients():
    sm, sm_stub = stubbed_sagemaker()
    aas, aas_stub = stubbed_autoscaling()
    yield sm, sm_stub, aas, aas_stub
    sm_stub.assert_no_pending_responses()
    aas_stub.assert_no_pending_responses()


@pytest.fixture
def runtime(clients, clock):
    """What `run` hands the command: the stubbed clients and the clock that never sleeps."""
    sm, _, aas, _ = clients
    return Runtime.default().replace(aws_clients=lambda config: {"sagemaker": sm, "application-autoscaling": aas},
                                     monotonic=clock.now, sleep=clock.sleep)


def ctrl_c_on(client, operation: str, nth: int = 1) -> None:
    """Ctrl-C while the nth call of ``operation`` is under way (before it reaches AWS, so nothing is queued)."""
    seen = []

    def hit(**_):
        seen.append(1)
        if len(seen) == nth:
            raise KeyboardInterrupt

    client.meta.events.register(f"provide-client-params.*.{operation}", hit)


def run(runtime, config_file, *extra):
    return CliRunner().invoke(cli, ["measure-scaleout", config_file, "--endpoint", "shared", "--component", "qwen",
                                    *extra], obj=runtime)


def text_of(result) -> str:
    return " ".join(result.output.split())


def test_ctrl_c_during_the_measurement_wait_says_nothing_is_left(clients, runtime, clock, config_file):
    sm, sm_stub, aas, aas_stub = clients
    clock.interrupt_after = 1
    Scaling(aas_stub).suspend()
    (Script(sm_stub, "demo-shared", "demo-qwen").describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="Updating", current=1).set_copies(1))
    Scaling(aas_stub).restore().resume()
    result = run(runtime, config_file)
    assert result.exit_code == 130, result.output
    assert "left behind: nothing (capacity and auto scaling are as they were)" in text_of(result)


def test_ctrl_c_during_the_restore_wait_names_the_billed_copy(clients, runtime, clock, config_file):
    sm, sm_stub, aas, aas_stub = clients
    # The copy serves at once; the restore is refused while the component updates, and Ctrl-C hits its wait.
    clock.interrupt_after = 1
    Scaling(aas_stub).suspend()
    (Script(sm_stub, "demo-shared", "demo-qwen").describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="InService", current=2)
     .set_copies(1, error="ValidationException", message=BUSY).describe_component(status="Updating", current=2))
    Scaling(aas_stub).restore().resume()
    result = run(runtime, config_file)
    assert result.exit_code == 130, result.output
    text = text_of(result)
    # The wait is shown, not silent ...
    assert "restore: waiting for inference component demo-qwen to accept the restore to 1 copy: busy" in text
    # ... and what it leaves is named, with the command that undoes it; auto scaling was resumed.
    assert ("left behind: inference component demo-qwen may still have 2 copies instead of 1 copy (interrupted "
            "(Ctrl-C) while restoring inference component demo-qwen to 1 copy): the extra copy (and any instance it "
            "brought up) is billed while it runs") in text
    assert f"Undo: `{RESTORE_COPY}`" in text
    assert "register-scalable-target" not in text


def test_second_ctrl_c_in_the_restore_wait_after_the_first(clients, runtime, clock, config_file):
    sm, sm_stub, aas, aas_stub = clients
    clock.interrupt_after = 1  # every sleep is Ctrl-C
    Scaling(aas_stub).suspend()
    (Script(sm_stub, "demo-shared", "demo-qwen").describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="Updating", current=1)
     .set_copies(1, error="ValidationException", message=BUSY).describe_component(status="Updating", current=1))
    Scaling(aas_stub).restore().resume()
    result = run(runtime, config_file, "--json")
    assert result.exit_code == 130
    m = json.loads(result.stdout)["measurement"]
    assert m["interrupted"] is True and m["restored"] is False and m["scaling_resumed"] is True
    assert [x["undo"] for x in m["left_behind"]] == [RESTORE_COPY]


def test_ctrl_c_during_the_resume_names_the_suspended_scaling(clients, runtime, config_file):
    sm, sm_stub, aas, aas_stub = clients
    Scaling(aas_stub).suspend()
    (Script(sm_stub, "demo-shared", "demo-qwen").describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="InService", current=2).set_copies(1))
    Scaling(aas_stub).restore()
    ctrl_c_on(aas, "RegisterScalableTarget", nth=2)  # the first suspends, the second would resume
    result = run(runtime, config_file)
    assert result.exit_code == 130, result.output
    text = text_of(result)
    assert ("left behind: dynamic scaling of inference-component/demo-qwen is still suspended (interrupted (Ctrl-C) "
            "before it was resumed)") in text
    assert f"Undo: `{RESUME}`" in text


def test_ctrl_c_before_anything_changed(clients, runtime, config_file):
    sm, sm_stub, aas, aas_stub = clients
    Scaling(aas_stub).suspend().resume()
    ctrl_c_on(sm, "DescribeEndpoint")
    result = run(runtime, config_file)
    assert result.exit_code == 130, result.output
    assert "interrupted (Ctrl-C) before the measurement changed any capacity (nothing was changed)" in text_of(result)


def test_ctrl_c_before_anything_changed_and_the_resume_fails(clients, runtime, config_file):
    sm, sm_stub, aas, aas_stub = clients
    Scaling(aas_stub).suspend().resume(error="Rate exceeded")
    ctrl_c_on(sm, "DescribeEndpoint")
    result = run(runtime, config_file, "--json")
    assert result.exit_code == 130
    payload = json.loads(result.stdout)
    assert payload["interrupted"] is True and payload["exit_code"] == 130
    assert [x["undo"] for x in payload["left_behind"]] == [RESUME]


def test_failed_resume_after_a_refused_start_says_scaling_is_still_suspended(clients, runtime, config_file):
    sm, sm_stub, aas, aas_stub = clients
    Scaling(aas_stub).suspend()
    Script(sm_stub, "demo-shared", "demo-qwen").describe_endpoint().describe_component(status="Updating", current=1)
    Scaling(aas_stub).resume(error="Rate exceeded")
    result = run(runtime, config_file)
    assert result.exit_code == 1, result.output
    text = text_of(result)
    assert "nothing was changed" not in text
    assert "is Updating; measure when it is InService: no capacity was changed, but not everything is back" in text
    assert "dynamic scaling of inference-component/demo-qwen is still suspended" in text
    assert f"Undo: `{RESUME}`" in text


def test_clean_run_says_nothing_is_left(clients, runtime, config_file):
    sm, sm_stub, aas, aas_stub = clients
    Scaling(aas_stub).suspend()
    (Script(sm_stub, "demo-shared", "demo-qwen").describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="InService", current=2).set_copies(1))
    Scaling(aas_stub).restore().resume()
    result = run(runtime, config_file)
    assert result.exit_code == 0, result.output
    assert "left behind: nothing" in text_of(result)
