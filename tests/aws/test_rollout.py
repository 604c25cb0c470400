"""Following a rollout with stubbed SageMaker and CloudWatch answers (moto has no inference components and
no deployment states): progress while Terraform applies, and a rollback reported with the alarm behind it."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from fastscale.infra.aws.rollout import (
    COMPONENT,
    ENDPOINT,
    FAILED,
    ROLLED_BACK,
    SUCCEEDED,
    TIMED_OUT,
    RolloutFollower,
    RolloutTarget,
    expected_versions,
)
from fastscale.infra.terraform.runner import TerraformEvent
from tests.aws.factories import NOW, REGION, FakeClock, stubbed
from tests.aws.rollout_stubs import component_answer, endpoint_answer

STARTED = NOW
ENDPOINT_TARGET = RolloutTarget(ENDPOINT, "demo-chat", "aws_sagemaker_endpoint.chat",
                                alarms=("demo-chat-5xx-errors", "demo-chat-model-latency"), expected="demo-chat-new")
COMPONENT_TARGET = RolloutTarget(COMPONENT, "demo-qwen", "awscc_sagemaker_inference_component.qwen",
                                 alarms=("demo-qwen-latency",), expected="demo-qwen-bbbb")


def history(name: str, *changes: tuple[str, str, dt.datetime]) -> dict:
    return {"AlarmHistoryItems": [
        {"AlarmName": name, "AlarmType": "MetricAlarm", "Timestamp": when, "HistoryItemType": "StateUpdate",
         "HistorySummary": f"Alarm updated from {old} to {new}",
         "HistoryData": json.dumps({"oldState": {"stateValue": old}, "newState": {"stateValue": new}})}
        for old, new, when in changes
    ]}


@pytest.fixture
def aws():
    sagemaker, sm = stubbed("sagemaker")
    cloudwatch, cw = stubbed("cloudwatch")
    yield {"sagemaker": sagemaker, "cloudwatch": cloudwatch}, sm, cw
    sm.assert_no_pending_responses()
    cw.assert_no_pending_responses()


def follower(clients, *targets, clock=None, progress=None):
    return RolloutFollower(targets, STARTED, clients, REGION, clock=clock or FakeClock(), interval=15,
                           on_progress=progress.append if progress is not None else None)


def progress_event(address: str) -> TerraformEvent:
    return TerraformEvent("apply_progress", f"{address}: Still modifying...", address=address, action="update")


def test_progress_is_read_while_terraform_applies_and_a_finished_rollout_succeeds(aws):
    clients, sm, _ = aws
    clock, seen = FakeClock(), []
    for answer in (endpoint_answer("Updating", "demo-chat-old", pending="demo-chat-new", variant_status="Creating"),
                   endpoint_answer("Updating", "demo-chat-old", pending="demo-chat-new", variant_status="Baking"),
                   endpoint_answer("InService")):
        sm.add_response("describe_endpoint", answer, {"EndpointName": "demo-chat"})
    follow = follower(clients, ENDPOINT_TARGET, clock=clock, progress=seen)

    follow.on_event(progress_event(ENDPOINT_TARGET.address))
    clock.t += 5
    follow.on_event(progress_event(ENDPOINT_TARGET.address))  # within the interval: no second look
    follow.on_event(progress_event("aws_cloudwatch_metric_alarm.x"))  # not a rollout: ignored
    clock.t += 20
    follow.on_event(progress_event(ENDPOINT_TARGET.address))
    [outcome] = follow.finish(timeout=600)

    assert [p.state for p in seen[:2]] == [
        "Updating: to demo-chat-new; AllTraffic Creating, 1 of 2 instances",
        "Updating: to demo-chat-new; AllTraffic Baking, 1 of 2 instances",
    ]
    assert outcome.outcome == SUCCEEDED and outcome.ok and outcome.alarm is None
    assert [o.status for o in outcome.observations] == ["Updating", "Updating", "InService"]
    assert outcome.to_dict()["outcome"] == "succeeded"


def test_an_endpoint_rollback_is_a_failure_naming_the_alarm_from_its_history(aws):
    clients, sm, cw = aws
    for answer in (endpoint_answer("Updating", "demo-chat-old", pending="demo-chat-new", variant_status="Baking"),
                   endpoint_answer("RollingBack", "demo-chat-old"),
                   endpoint_answer("InService", "demo-chat-old", reason="Deployment rolled back: an alarm fired",
                                   alarms=ENDPOINT_TARGET.alarms)):
        sm.add_response("describe_endpoint", answer, {"EndpointName": "demo-chat"})
    fired = NOW + dt.timedelta(minutes=7)
    cw.add_response("describe_alarm_history", history("demo-chat-5xx-errors"),
                    {"AlarmName": "demo-chat-5xx-errors", "HistoryItemType": "StateUpdate", "StartDate": STARTED})
    cw.add_response("describe_alarm_history", history("demo-chat-model-latency", ("OK", "ALARM", fired), ("ALARM", "OK", fired + dt.timedelta(minutes=5))),
                    {"AlarmName": "demo-chat-model-latency", "HistoryItemType": "StateUpdate", "StartDate": STARTED})
    clock = FakeClock()
    follow = follower(clients, ENDPOINT_TARGET, clock=clock)
    follow.on_event(progress_event(ENDPOINT_TARGET.address))

    [outcome] = follow.finish(timeout=3600)
    assert outcome.outcome == ROLLED_BACK and not outcome.ok
    assert outcome.alarm == "demo-chat-model-latency" and "went into ALARM at 00:07:00" in outcome.alarm_evidence
    message = outcome.message()
    assert message.startswith("endpoint demo-chat: rolled back (SageMaker rolled the update back: "
                              "demo-chat-old is live instead of demo-chat-new)")
    assert "alarm demo-chat-model-latency fired" in message and "Deployment rolled back" in message
    assert clock.sleeps == [15]  # the first look was during the apply; one wait while RollingBack


def test_a_component_rolled_back_to_its_old_model_names_the_alarm_its_failure_reason_gives(aws):
    clients, sm, _ = aws
    reason = "Rolling deployment stopped: alarm demo-qwen-latency is in ALARM state."
    sm.add_response("describe_inference_component", component_answer("InService", "demo-qwen-aaaa", reason=reason),
                    {"InferenceComponentName": "demo-qwen"})
    [outcome] = follower(clients, COMPONENT_TARGET).finish(timeout=60)
    assert (outcome.outcome, outcome.alarm, outcome.alarm_evidence) == (ROLLED_BACK, "demo-qwen-latency", "named in the failure reason")
    assert "demo-qwen-aaaa is live instead of demo-qwen-bbbb" in outcome.why
    assert outcome.to_dict()["alarm"] == "demo-qwen-latency"


def test_a_failed_update_with_no_alarm_in_alarm_says_so(aws):
    clients, sm, cw = aws
    sm.add_response("describe_inference_component", component_answer("Failed", reason="CUDA out of memory", current=0),
                    {"InferenceComponentName": "demo-qwen"})
    cw.add_response("describe_alarm_history", history("demo-qwen-latency"),
                    {"AlarmName": "demo-qwen-latency", "HistoryItemType": "StateUpdate", "StartDate": STARTED})
    cw.add_response("describe_alarms", {"MetricAlarms": [{"AlarmName": "demo-qwen-latency", "StateValue": "OK"}]},
                    {"AlarmNames": ["demo-qwen-latency"]})
    [outcome] = follower(clients, COMPONENT_TARGET).finish(timeout=60)
    assert outcome.outcome == FAILED and outcome.alarm is None
    assert "none of its rollback alarms (demo-qwen-latency) is or was in ALARM" in outcome.message()
    assert "CUDA out of memory" in outcome.message()


def test_an_alarm_in_alarm_now_is_named_when_its_history_is_empty(aws):
    clients, sm, cw = aws
    sm.add_response("describe_endpoint", endpoint_answer("InService", "demo-chat-old", reason="rolled back"),
                    {"EndpointName": "demo-chat"})
    for name in ENDPOINT_TARGET.alarms:
        cw.add_response("describe_alarm_history", history(name),
                        {"AlarmName": name, "HistoryItemType": "StateUpdate", "StartDate": STARTED})
    cw.add_response("describe_alarms", {"MetricAlarms": [{"AlarmName": "demo-chat-5xx-errors", "StateValue": "ALARM"}]},
                    {"AlarmNames": list(ENDPOINT_TARGET.alarms)})
    [outcome] = follower(clients, ENDPOINT_TARGET).finish(timeout=60)
    assert (outcome.outcome, outcome.alarm, outcome.alarm_evidence) == (ROLLED_BACK, "demo-chat-5xx-errors", "in ALARM now")


def test_an_old_failure_reason_does_not_fail_an_update_whose_new_version_is_live(aws):
    clients, sm, _ = aws
    sm.add_response("describe_endpoint", endpoint_answer("InService", "demo-chat-new", reason="an earlier update failed"),
                    {"EndpointName": "demo-chat"})
    [outcome] = follower(clients, ENDPOINT_TARGET).finish(timeout=60)
    assert outcome.outcome == SUCCEEDED


def test_the_wait_is_bounded_and_says_the_rollout_goes_on(aws):
    clients, sm, _ = aws
    for _ in range(3):
        sm.add_response("describe_endpoint", endpoint_answer("Updating", "demo-chat-old", pending="demo-chat-new"),
                        {"EndpointName": "demo-chat"})
    clock = FakeClock()
    [outcome] = follower(clients, ENDPOINT_TARGET, clock=clock).finish(timeout=30)
    assert outcome.outcome == TIMED_OUT and sum(clock.sleeps) == 30
    assert "the rollout goes on in SageMaker" in outcome.message()


def test_an_aws_error_while_terraform_applies_is_noted_not_raised(aws):
    clients, sm, _ = aws
    sm.add_client_error("describe_endpoint", "AccessDeniedException", "not allowed", 400)
    follow = follower(clients, ENDPOINT_TARGET)
    follow.on_event(progress_event(ENDPOINT_TARGET.address))
    assert len(follow.notes) == 1 and "AccessDeniedException" in follow.notes[0]


def test_expected_versions_come_from_the_outputs_and_the_component_models():
    outputs = {"endpoint_chat": {"endpoint_name": "demo-chat", "endpoint_config_name": "demo-chat-2026"}, "other": "x"}
    assert expected_versions(outputs, {"demo-qwen": "demo-qwen-bbbb"}) == {
        "demo-chat": "demo-chat-2026", "demo-qwen": "demo-qwen-bbbb"}
