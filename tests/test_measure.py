"""measure_scaleout against Stubber-validated SageMaker answers: timing, phases, and the restore that always
follows (success, failure, timeout, Ctrl-C, a busy resource)."""

from __future__ import annotations

import pytest

from fastscale.infra.aws.measure import MeasureError, measure_scaleout
from tests.measure_stubs import FakeClock, Script, stubbed_sagemaker

EP, IC = "demo-shared", "demo-qwen"


@pytest.fixture
def sm():
    client, stubber = stubbed_sagemaker()
    yield client, stubber
    # Every queued call was made, and (Stubber raises otherwise) no call that was not queued.
    stubber.assert_no_pending_responses()


def copy_run(client, clock, **kw):
    return measure_scaleout(client, endpoint=EP, component=IC, poll_interval=10, clock=clock.clock, **kw)


def test_copy_on_a_running_instance(sm):
    client, stubber = sm
    clock = FakeClock()
    (
        Script(stubber, EP, IC)
        .describe_endpoint(instances=1)
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="Updating", current=1)  # t=0
        .poll_component(status="Updating", current=1)  # t=10
        .poll_component(status="Updating", current=1)  # t=20
        .poll_component(status="InService", current=2)  # t=30
        .set_copies(1)  # restore
    )
    m = copy_run(client, clock)
    assert m.outcome == "in service" and m.ok
    assert m.seconds == 30
    assert (m.before, m.target) == (1, 2)
    assert m.restored and m.new_instance is False
    assert [e.seconds for e in m.events] == [0, 0, 30]
    assert m.phases() == [
        {"name": "requested 2 copies", "seconds": 0.0},
        {"name": "component Updating, 1 of 2 copies, 1 instance(s)", "seconds": 30.0},
    ]


def test_copy_that_needed_a_new_instance(sm):
    client, stubber = sm
    (
        Script(stubber, EP, IC)
        .describe_endpoint(instances=1)
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="Updating", current=1, instances=1)
        .poll_component(status="Updating", current=1, instances=2)
        .poll_component(status="InService", current=2, instances=2)
        .set_copies(1)
    )
    m = copy_run(client, FakeClock())
    assert m.ok and m.new_instance
    assert (m.instances_before, m.instances_after) == (1, 2)
    assert "2 instance(s)" in m.events[-2].what


def test_failed_copy_is_reported_and_capacity_restored(sm):
    client, stubber = sm
    (
        Script(stubber, EP, IC)
        .describe_endpoint()
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="Updating", current=1)
        .poll_component(status="Failed", current=1, failure="Insufficient capacity for ml.g6.12xlarge")
        .set_copies(1)
    )
    m = copy_run(client, FakeClock())
    assert m.outcome == "failed" and not m.ok
    assert "Insufficient capacity" in m.error
    assert m.restored
    assert m.events[-1].what == "failed"


def test_timeout_restores_after_the_component_stops_updating(sm):
    client, stubber = sm
    clock = FakeClock()
    script = (
        Script(stubber, EP, IC).describe_endpoint().describe_component(current=1).set_copies(2)
    )
    for _ in range(4):  # t = 0, 10, 20, 30: the deadline is reached on the fourth look
        script.poll_component(status="Updating", current=1)
    # SageMaker refuses a change while the component is updating: the restore waits and tries again.
    (
        script.set_copies(1, error="ValidationException", message="Inference component is in Updating state")
        .describe_component(status="Updating", current=1)
        .set_copies(1)
    )
    m = copy_run(client, clock, timeout=30)
    assert m.outcome == "timeout" and "timed out" in m.error
    assert m.seconds is None
    assert m.restored and m.restore_error is None
    assert clock.sleeps == [10, 10, 10, 10]  # three polls apart, one wait before the second restore attempt


def test_restore_failure_is_reported(sm):
    client, stubber = sm
    (
        Script(stubber, EP, IC)
        .describe_endpoint()
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="InService", current=2)
        .set_copies(1, error="ValidationException", message="Copy count is below the scalable target's minimum")
        .describe_component(status="InService", current=2)  # not busy: retrying would not help
    )
    m = copy_run(client, FakeClock())
    assert m.in_service and not m.ok
    assert not m.restored and "minimum" in m.restore_error


def test_ctrl_c_still_restores(sm):
    client, stubber = sm
    (
        Script(stubber, EP, IC)
        .describe_endpoint()
        .describe_component(current=1)
        .set_copies(2)
        .poll_component(status="Updating", current=1)
        .set_copies(1)
    )
    m = copy_run(client, FakeClock(interrupt_after=1))
    assert m.outcome == "interrupted" and m.restored


def test_throttled_polls_keep_going(sm):
    client, stubber = sm
    (
        Script(stubber, EP, IC)
        .describe_endpoint()
        .describe_component(current=1)
        .set_copies(2)
        .throttle("describe_endpoint")
        .poll_component(status="InService", current=2)
        .set_copies(1)
    )
    m = copy_run(client, FakeClock())
    assert m.ok and m.seconds == 10


def test_busy_component_is_not_touched(sm):
    client, stubber = sm
    Script(stubber, EP, IC).describe_endpoint().describe_component(status="Updating", current=1)
    with pytest.raises(MeasureError, match="Updating"):
        copy_run(client, FakeClock())


def test_refused_change_needs_no_restore(sm):
    client, stubber = sm
    (
        Script(stubber, EP, IC)
        .describe_endpoint()
        .describe_component(current=4)
        .set_copies(5, error="ValidationException", message="not enough capacity")
    )
    m = copy_run(client, FakeClock())
    assert m.outcome == "failed" and "refused" in m.error and m.restored


# --------------------------------------------------------------------------------------------- instances


def instance_run(client, clock, **kw):
    return measure_scaleout(client, endpoint=EP, poll_interval=15, clock=clock.clock, **kw)


def test_instance_added_to_a_single_model_endpoint(sm):
    client, stubber = sm
    (
        Script(stubber, EP)
        .describe_endpoint(instances=2)
        .set_instances(3)
        .describe_endpoint(status="Updating", instances=2, desired=3, stages=("Creating",))  # t=0
        .describe_endpoint(status="Updating", instances=2, desired=3, stages=("Creating",))  # t=15
        .describe_endpoint(status="Updating", instances=2, desired=3, stages=("ActivatingTraffic",))  # t=30
        .describe_endpoint(status="InService", instances=3)  # t=45
        .set_instances(2)
    )
    m = instance_run(client, FakeClock())
    assert m.kind == "instance" and m.ok and m.new_instance
    assert m.seconds == 45
    assert [p["seconds"] for p in m.phases()] == [0, 30, 15]
    assert "Creating" in m.phases()[1]["name"] and "ActivatingTraffic" in m.phases()[2]["name"]


def test_rolled_back_instance_update_fails(sm):
    client, stubber = sm
    (
        Script(stubber, EP)
        .describe_endpoint(instances=1)
        .set_instances(2)
        .describe_endpoint(status="Updating", instances=1, desired=2)
        .describe_endpoint(status="InService", instances=1)
        .set_instances(1)
    )
    m = instance_run(client, FakeClock())
    assert m.outcome == "failed" and "rolled back" in m.error and m.restored


def test_instance_timeout_waits_for_the_endpoint_before_restoring(sm):
    client, stubber = sm
    script = Script(stubber, EP).describe_endpoint(instances=1).set_instances(2)
    for _ in range(3):  # t = 0, 15, 30
        script.describe_endpoint(status="Updating", instances=1, desired=2)
    (
        script.set_instances(1, error="ValidationException", message='Cannot update in-progress endpoint "demo-shared"')
        .describe_endpoint(status="Updating", instances=1, desired=2)
        .set_instances(1, error="ValidationException", message='Cannot update in-progress endpoint "demo-shared"')
        .describe_endpoint(status="Updating", instances=2, desired=2)
        .set_instances(1)
    )
    clock = FakeClock()
    m = instance_run(client, clock, timeout=30)
    assert m.outcome == "timeout" and m.restored
    assert clock.sleeps == [15, 15, 15, 15]  # two polls apart, two waits between restore attempts


def test_restore_gives_up_at_its_deadline(sm):
    client, stubber = sm
    script = Script(stubber, EP).describe_endpoint(instances=1).set_instances(2)
    script.describe_endpoint(status="InService", instances=2)
    for _ in range(3):  # restore deadline 20 s at 10 s intervals: attempts at 0, 10, 20
        script.set_instances(1, error="ValidationException", message="Cannot update in-progress endpoint")
        script.describe_endpoint(status="Updating", instances=2)
    m = measure_scaleout(client, endpoint=EP, poll_interval=10, restore_timeout=20, clock=FakeClock().clock)
    assert m.in_service and not m.restored and "in-progress" in m.restore_error


def test_missing_endpoint_is_a_measure_error(sm):
    client, stubber = sm
    stubber.add_client_error("describe_endpoint", "ValidationException", f'Could not find endpoint "{EP}".')
    with pytest.raises(MeasureError, match="Could not find endpoint"):
        instance_run(client, FakeClock())
