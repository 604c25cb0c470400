"""`explain`: each recorded scenario (AWS's own answers, played through botocore Stubbers) names its cause,
with evidence and a fix; a healthy scale-out says nothing is wrong."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fastscale.infra.aws.explain import (
    TargetSelectionError,
    Window,
    diagnose,
    explain,
    parse_duration,
    targets_of,
    timeline,
)
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.resolved import resolve
from tests.explain_stubs import (
    CHAT_RID,
    CONFIG,
    DOWNLOAD_REASON,
    EP,
    HEALTH_REASON,
    IC,
    IC_RID,
    ICE_REASON,
    NOW,
    QUOTA_MESSAGE,
    SINCE,
    VARIANT_DIM,
    Recorded,
    activity,
    at,
    component_desc,
    endpoint_desc,
    scale_from_zero_alarm,
    series,
    state_change,
    tt_alarm_name,
    tt_policy,
)


@pytest.fixture(scope="module")
def config() -> FastscaleConfig:
    return FastscaleConfig.model_validate(CONFIG)


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def only(findings, code):
    hits = [f for f in findings if f.code == code]
    assert len(hits) == 1, codes(findings)
    return hits[0]


# --------------------------------------------------------------------------------------------- healthy


def test_healthy_component_scale_out_has_no_finding(config):
    rec = Recorded.healthy_component()
    rec.metric_queries = [
        {"Id": "scaling", "ReturnData": True, "MetricStat": {"Metric": {
            "Namespace": "AWS/SageMaker", "MetricName": "ConcurrentRequestsPerCopy",
            "Dimensions": [{"Name": "InferenceComponentName", "Value": IC}]}, "Period": 10, "Stat": "Average"}},
        {"Id": "invocations", "ReturnData": True, "MetricStat": {"Metric": {
            "Namespace": "AWS/SageMaker", "MetricName": "Invocations",
            "Dimensions": [{"Name": "EndpointName", "Value": EP}, {"Name": "VariantName", "Value": "AllTraffic"}]},
            "Period": 10, "Stat": "Sum"}},
        {"Id": "nocapacity", "ReturnData": True, "MetricStat": {"Metric": {
            "Namespace": "AWS/SageMaker", "MetricName": "NoCapacityInvocationFailures",
            "Dimensions": [{"Name": "InferenceComponentName", "Value": IC}]}, "Period": 10, "Stat": "Sum"}},
    ]
    ev = rec.run(config)
    assert diagnose(ev) == []
    assert ev.scaling_metric.resolution == 10 and ev.scaling_metric.peak == 6.2
    events = [e.event for e in timeline(ev)]
    # One ordered timeline: metric above target, the alarm, the activity with AWS's status message, the end state.
    assert any("ConcurrentRequestsPerCopy 5 above the target 4" in e for e in events)
    assert any("target tracking scale-out alarm" in e and "OK -> ALARM" in e for e in events)
    assert any("Successfully set desired copy count to 2" in e for e in events)
    assert events[-1] == "now: endpoint InService, 1 instance(s); component InService, 2 of 2 copies"
    assert [e.at for e in timeline(ev)] == sorted(e.at for e in timeline(ev))
    result = explain([ev])
    assert result.ok and result.to_dict()["findings"] == 0


def test_healthy_variant_has_no_finding(config):
    ev = Recorded.healthy_variant().run(config)
    assert ev.spec.kind == "variant" and ev.spec.resource_id == CHAT_RID
    assert diagnose(ev) == []


# --------------------------------------------------------------------------------------------- one per finding


def test_max_reached(config):
    rec = Recorded.healthy_component()
    rec.activities += [
        activity(400, 4, status="Failed", not_scaled=[{"Code": "AlreadyAtMaxCapacity", "MaxCapacity": 4}]),
        activity(460, 4, status="Failed", not_scaled=[{"Code": "AlreadyAtMaxCapacity", "MaxCapacity": 4}]),
    ]
    f = only(diagnose(rec.run(config)), "max-reached")
    assert "maximum of 4 copies" in f.title
    assert "AlreadyAtMaxCapacity (max 4)" in f.evidence[0]
    assert "`endpoints[0].inference_components[0].copies.max` (now 4)" in f.fix
    assert "endpoints[0].instances.max" in f.fix


def test_insufficient_capacity_names_the_type_and_a_fallback(config):
    rec = Recorded.healthy_component()
    rec.endpoint = endpoint_desc(EP, status="InService", instances=1, desired=2, stages=[
        {"Status": "Creating", "StatusMessage": ICE_REASON, "StartTime": at(40)}])
    rec.component = component_desc(status="InService", current=2, desired=3)
    f = only(diagnose(rec.run(config)), "insufficient-capacity")
    assert "ml.g6.12xlarge" in f.title
    assert ICE_REASON in f.evidence[0]
    # The copy needs 1 accelerator holding 16 GB and 32768 MB of host memory, from a CUDA image: the cheapest
    # other family that gives one copy that is ml.g5.2xlarge (1 x A10G 24 GiB, 32 GiB), cheaper per hour.
    assert "`endpoints[0].capacity.fallback`" in f.fix and "`- instance_type: ml.g5.2xlarge`" in f.fix
    assert "$1.515/h, cheaper than ml.g6.12xlarge at $5.752/h" in f.fix
    assert "ml.g6.12xlarge" not in f.fix.split("e.g.")[1].split("cheaper than ml.g6.12xlarge")[0]
    assert "`endpoints[0].capacity.reservation_arn`" in f.fix


def test_quota_reached_on_a_variant(config):
    rec = Recorded.healthy_variant()
    rec.activities.append(activity(300, 3, status="Failed", unit="instance", rid=CHAT_RID, dim=VARIANT_DIM,
                                   message=QUOTA_MESSAGE))
    findings = diagnose(rec.run(config))
    f = only(findings, "quota-reached")
    assert "'ml.g6.2xlarge for endpoint usage'" in f.title
    assert "to at least 3" in f.fix and "service-code sagemaker" in f.fix
    assert "scaling-failed" not in codes(findings)  # classified, not reported twice


def test_metric_missing(config):
    rec = Recorded.healthy_component()
    rec.activities, rec.history = [], {}
    rec.metrics["scaling"] = ([], [])
    f = only(diagnose(rec.run(config)), "metric-missing")
    assert "0 datapoints" in f.evidence[0] and "Invocations peaked at 80" in f.evidence[1]
    assert "metrics_publish_frequency" in f.fix


def test_metric_at_one_minute_resolution(config):
    rec = Recorded.healthy_component()
    rec.metrics["scaling"] = series(0, 60, [5.0, 6.0, 6.5, 6.1, 5.0])
    f = only(diagnose(rec.run(config)), "metric-resolution")
    assert "every 60 s, not every 10 s" in f.title
    assert "~180 s instead of ~30 s" in f.evidence[1]


def test_policy_on_the_one_minute_metric(config):
    rec = Recorded.healthy_component()
    rec.policies[0] = tt_policy(IC_RID, rec.dim, f"{IC}-target-tracking", "SageMakerInferenceComponentInvocationsPerCopy")
    f = only(diagnose(rec.run(config)), "metric-resolution")
    assert "SageMakerInferenceComponentInvocationsPerCopy" in f.evidence[0]


def test_cooldown_holding(config):
    rec = Recorded.healthy_component()
    rec.policies[0] = tt_policy(IC_RID, rec.dim, f"{IC}-target-tracking",
                                "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
                                scale_out_cooldown=300)
    high = tt_alarm_name(IC_RID, "High")
    rec.history[high] = [state_change(high, 30, "OK", "ALARM"), state_change(high, 200, "ALARM", "OK"),
                         state_change(high, 250, "OK", "ALARM")]
    rec.activities = [activity(30, 2), activity(330, 3)]
    f = only(diagnose(rec.run(config)), "cooldown")
    assert "80 s inside the 300 s cooldown" in f.evidence[0]
    assert "scale_out_cooldown" in f.fix


def test_scale_from_zero_alarm_that_needs_two_failures(config):
    rec = Recorded.healthy_component()
    rec.alarms[f"{IC}-no-capacity"] = scale_from_zero_alarm(comparison="GreaterThanThreshold",
                                                            actions=[rec.policies[1]["PolicyARN"]])
    rec.metrics["nocapacity"] = series(600, 60, [1.0])
    f = only(diagnose(rec.run(config)), "alarm-cannot-fire")
    assert "needs 2 failed requests" in f.evidence[0]
    assert "1 request(s) failed for lack of capacity and the alarm did not fire" in f.evidence[1]
    assert "GreaterThanOrEqualToThreshold" in f.fix


def test_scale_from_zero_alarm_with_actions_disabled(config):
    rec = Recorded.healthy_component()
    rec.alarms[f"{IC}-no-capacity"] = scale_from_zero_alarm(actions=[rec.policies[1]["PolicyARN"]],
                                                            actions_enabled=False)
    f = only(diagnose(rec.run(config)), "scale-from-zero-broken")
    assert any("ActionsEnabled false" in e for e in f.evidence)
    assert "enable-alarm-actions --alarm-names demo-qwen-no-capacity" in f.fix


def test_scale_from_zero_alarm_not_wired_to_its_policy(config):
    rec = Recorded.healthy_component()
    rec.alarms[f"{IC}-no-capacity"] = scale_from_zero_alarm(actions=[])
    f = only(diagnose(rec.run(config)), "scale-from-zero-broken")
    assert f.evidence == ("scale from zero: the alarm demo-qwen-no-capacity's actions do not include the step "
                          "policy demo-qwen-scale-from-zero",)


def test_copies_pending_for_lack_of_instances(config):
    rec = Recorded.healthy_component()
    rec.endpoint = endpoint_desc(EP, instances=2, managed_max=2)
    rec.component = component_desc(status="InService", current=2, desired=4)
    f = only(diagnose(rec.run(config)), "copies-pending")
    assert f.evidence == ("demo-qwen: 2 of 4 copies running",
                          "endpoint demo-shared: 2 instance(s), managed instance scaling maximum 2")
    assert "`endpoints[0].instances.max` (now 2)" in f.fix


def test_model_download_failure(config):
    rec = Recorded.healthy_component()
    rec.component = component_desc(status="Failed", current=1, desired=2, failure=DOWNLOAD_REASON)
    f = only(diagnose(rec.run(config)), "model-download")
    assert "Failed to download model data" in f.evidence[0]
    assert "model_download_timeout` (now 600" in f.fix and "/aws/sagemaker/Endpoints/demo-shared" in f.fix


def test_health_check_timeout(config):
    rec = Recorded.healthy_component()
    rec.endpoint = endpoint_desc(EP, status="Failed", failure=HEALTH_REASON)
    f = only(diagnose(rec.run(config)), "health-check")
    assert "did not pass the ping health check" in f.evidence[0]
    assert "startup_health_check_timeout` (now 600" in f.fix


def test_dynamic_scaling_left_suspended(config):
    rec = Recorded.healthy_component()
    rec.target["SuspendedState"]["DynamicScalingOutSuspended"] = True
    f = only(diagnose(rec.run(config)), "scaling-suspended")
    assert "DynamicScalingOutSuspended" in f.evidence[0] and "--suspended-state" in f.fix


def test_target_not_registered(config):
    rec = Recorded.healthy_component()
    rec.target = None
    f = only(diagnose(rec.run(config)), "not-registered")
    assert IC_RID in f.evidence[0]


def test_unclassified_failure_is_quoted(config):
    rec = Recorded.healthy_component()
    message = "Failed to set desired copy count to 3. Reason: Inference component is in Updating state."
    rec.activities.append(activity(500, 3, status="Failed", message=message))
    f = only(diagnose(rec.run(config)), "scaling-failed")
    assert message in f.evidence[0]


def test_unscalable_and_failed_resource_are_quoted(config):
    rec = Recorded.healthy_component()
    rec.activities.append(activity(500, 3, status="Failed",
                                   not_scaled=[{"Code": "TargetServicePutResourceAsUnscalable"}]))
    rec.component = component_desc(status="Failed", current=1, desired=2,
                                   failure="Container exited with status 137")
    f = only(diagnose(rec.run(config)), "scaling-failed")
    assert any("not scaled: TargetServicePutResourceAsUnscalable" in e for e in f.evidence)
    assert any("inference component FailureReason: Container exited with status 137" in e for e in f.evidence)


def test_component_at_zero_is_not_a_missing_metric(config):
    rec = Recorded.healthy_component()
    rec.metrics["scaling"] = ([], [])
    rec.metrics["nocapacity"] = series(600, 60, [3.0])
    assert "metric-missing" not in codes(diagnose(rec.run(config)))


def test_gone_endpoint_is_reported_not_raised(config):
    rec = Recorded.healthy_component()
    rec.endpoint = None
    ev = rec.run(config)
    assert ev.resource.endpoint_status == "does not exist"
    assert timeline(ev)[-1].event == "now: endpoint does not exist"


# --------------------------------------------------------------------------------------------- inputs


@pytest.mark.parametrize("text, seconds", [("30m", 1800), ("3h", 10800), ("1h30m", 5400), ("2d", 172800)])
def test_durations(text, seconds):
    assert parse_duration(text) == timedelta(seconds=seconds)


@pytest.mark.parametrize("text", ["", "3", "h", "3 hours", "-1h", "20s", "16d"])
def test_bad_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_metric_period_follows_cloudwatch_retention():
    assert Window(NOW - SINCE, NOW).metric_period == 10
    assert Window(NOW - timedelta(hours=6), NOW).metric_period == 60


def test_target_selection(config):
    assert [t.label for t in targets_of(resolve(config))] == ["shared/qwen", "chat"]
    assert [t.label for t in targets_of(resolve(config), endpoint="chat")] == ["chat"]
    with pytest.raises(TargetSelectionError, match="no endpoint 'nope'"):
        targets_of(resolve(config), endpoint="nope")
    with pytest.raises(TargetSelectionError, match="no inference component 'qwen' in endpoint 'chat'"):
        targets_of(resolve(config), endpoint="chat", component="qwen")
