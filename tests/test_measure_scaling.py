"""measure_scaleout keeps auto scaling out of the measurement: it refuses to start during a scaling activity,
suspends dynamic scaling before touching capacity, and restores capacity (never below what auto scaling asked
for) and then the previous suspended state, after success, failure and Ctrl-C alike."""

from __future__ import annotations

import pytest

from fastscale.infra.aws.measure import MeasureError, measure_scaleout
from tests.measure_stubs import (
    FakeClock,
    Scaling,
    Script,
    record_calls,
    scaling_activity,
    stubbed_autoscaling,
    stubbed_sagemaker,
)

EP, IC = "demo-shared", "demo-qwen"
OLD = scaling_activity("a-old", "Successful", 1)  # an activity that ended before the measurement


@pytest.fixture
def clients():
    sm, sm_stub = stubbed_sagemaker()
    aas, aas_stub = stubbed_autoscaling()
    calls = record_calls(sm, aas)
    yield sm, sm_stub, aas, aas_stub, calls
    sm_stub.assert_no_pending_responses()
    aas_stub.assert_no_pending_responses()


def run(sm, aas, clock=None, **kw):
    return measure_scaleout(sm, endpoint=EP, component=IC, autoscaling=aas, poll_interval=10,
                            clock=(clock or FakeClock()).clock, **kw)


def test_suspend_measure_restore_resume_in_that_order(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    Scaling(aas_stub).suspend(scheduled=True, history=(OLD,))
    (Script(sm_stub, EP, IC).describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="Updating", current=1).poll_component(status="InService", current=2).set_copies(1))
    Scaling(aas_stub).restore(scheduled=True, history=(OLD,)).resume(scheduled=True)
    m = run(sm, aas)
    assert m.ok and m.restored and m.scaling_resumed
    assert m.restored_to == 1 and m.restore_reason == ""
    # Scheduled scaling was suspended before: it stays suspended during and after.
    assert m.suspended_before == {"DynamicScalingInSuspended": False, "DynamicScalingOutSuspended": False,
                                  "ScheduledScalingSuspended": True}
    assert m.scalable_target == "inference-component/demo-qwen"
    assert calls.index("RegisterScalableTarget") < calls.index("UpdateInferenceComponentRuntimeConfig")
    restore = len(calls) - 1 - calls[::-1].index("UpdateInferenceComponentRuntimeConfig")
    assert calls[-1] == "RegisterScalableTarget" and restore < len(calls) - 1


def test_refuses_to_start_during_a_scaling_activity(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    Scaling(aas_stub).target().activities(scaling_activity("a-now", "InProgress", 3), OLD)
    with pytest.raises(MeasureError, match="is InProgress .*Setting desired copy count to 3"):
        run(sm, aas)
    assert calls == ["DescribeScalableTargets", "DescribeScalingActivities"]  # nothing suspended, nothing changed


def test_pending_activity_also_refused(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    Scaling(aas_stub).target().activities(scaling_activity("a-next", "Pending", 2))
    with pytest.raises(MeasureError, match="Pending"):
        run(sm, aas)


def test_ctrl_c_mid_measurement_restores_capacity_then_resumes(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    Scaling(aas_stub).suspend(history=(OLD,))
    (Script(sm_stub, EP, IC).describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="Updating", current=1).set_copies(1))
    Scaling(aas_stub).restore(history=(OLD,)).resume()
    m = run(sm, aas, FakeClock(interrupt_after=1))  # Ctrl-C during the first wait between polls
    assert m.outcome == "interrupted"
    assert m.restored and m.restored_to == 1 and m.scaling_resumed
    assert calls[-3:] == ["DescribeScalableTargets", "UpdateInferenceComponentRuntimeConfig", "RegisterScalableTarget"]


def test_restore_never_below_what_auto_scaling_asked_for(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    # An alarm fired just before the suspension took effect: auto scaling set 3 copies meanwhile.
    asked = scaling_activity("a-meanwhile", "Successful", 3)
    Scaling(aas_stub).suspend(history=(OLD,))
    (Script(sm_stub, EP, IC).describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="InService", current=2).set_copies(3))
    Scaling(aas_stub).restore(history=(asked, OLD)).resume()
    m = run(sm, aas)
    assert m.ok and m.restored_to == 3
    assert "auto scaling asked for 3 meanwhile" in m.restore_reason


def test_restore_never_below_a_raised_minimum(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    Scaling(aas_stub).suspend(history=(OLD,))
    (Script(sm_stub, EP, IC).describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="InService", current=2).set_copies(2))
    Scaling(aas_stub).restore(history=(OLD,), lo=2).resume()
    m = run(sm, aas)
    assert m.restored_to == 2 and "minimum is now 2" in m.restore_reason


def test_resource_not_ready_after_suspending_still_resumes(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    Scaling(aas_stub).suspend()
    Script(sm_stub, EP, IC).describe_endpoint().describe_component(status="Updating", current=1)
    Scaling(aas_stub).resume()
    with pytest.raises(MeasureError, match="Updating"):
        run(sm, aas)
    assert calls[-1] == "RegisterScalableTarget"


def test_failed_resume_makes_the_run_fail(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    Scaling(aas_stub).suspend()
    (Script(sm_stub, EP, IC).describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="InService", current=2).set_copies(1))
    Scaling(aas_stub).restore().resume(error="Rate exceeded")
    m = run(sm, aas)
    assert m.in_service and m.restored and not m.scaling_resumed and not m.ok
    assert "Rate exceeded" in m.resume_error


def test_unregistered_target_needs_no_suspension(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    Scaling(aas_stub).target(registered=False)
    (Script(sm_stub, EP, IC).describe_endpoint().describe_component(current=1).set_copies(2)
     .poll_component(status="InService", current=2).set_copies(1))
    m = run(sm, aas)
    assert m.ok and m.scalable_target is None
    assert "RegisterScalableTarget" not in calls


def test_variant_target_of_a_single_model_endpoint(clients):
    sm, sm_stub, aas, aas_stub, calls = clients
    rid, dim = "endpoint/demo-shared/variant/AllTraffic", "sagemaker:variant:DesiredInstanceCount"
    Scaling(aas_stub, rid, dim).suspend()
    (Script(sm_stub, EP).describe_endpoint(instances=1).set_instances(2)
     .describe_endpoint(status="InService", instances=2).set_instances(1))
    Scaling(aas_stub, rid, dim).restore().resume()
    m = measure_scaleout(sm, endpoint=EP, autoscaling=aas, poll_interval=10, clock=FakeClock().clock)
    assert m.ok and m.scalable_target == rid
