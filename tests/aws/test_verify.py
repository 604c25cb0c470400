from __future__ import annotations

import json

import pytest

from fastscale.infra.aws.verify import Check, verify_live
from fastscale.infra.model.naming import all_endpoint_names
from fastscale.infra.model.resolved import resolve
from tests.aws.factories import (
    COMPONENT_DIM,
    HIGH_RES_COMPONENT,
    component_config,
    create_role,
    deploy_single_model,
    endpoint_arn,
    endpoint_desc,
    ic_desc,
    ic_list,
    ic_summary,
    model_desc,
    policy_arn,
    put_alarm,
    put_no_capacity_alarm,
    single_config,
    single_model_config,
    stack_tags,
    step_policy,
    stubbed,
    target,
    tt_policy,
)

QWEN_RID = "inference-component/demo-qwen"
LLAMA_RID = "inference-component/demo-llama"
SINGLE_MODEL = all_endpoint_names(single_model_config())[0].model
QWEN_MODEL, LLAMA_MODEL = (c.model for c in all_endpoint_names(component_config())[0].components)


def failing(report, check: str) -> list[Check]:
    return [c for c in report.failures if c.check == check]


def only(checks: list[Check]) -> Check:
    assert len(checks) == 1, checks
    return checks[0]


# --------------------------------------------------------------------------------------------- single-model (moto)


def test_correct_single_model_deployment_passes(aws):
    deploy_single_model(aws)
    report = verify_live(resolve(single_model_config()), clients=aws)
    assert report.ok, [str(c) for c in report.failures]
    checked = {(c.resource, c.check) for c in report.checks}
    assert ("scaling-policy/demo-chat-target-tracking", "target-tracking metric") in checked
    assert ("scalable-target/endpoint/demo-chat/variant/AllTraffic", "capacity") in checked
    assert ("endpoint/demo-chat", "status") in checked
    assert ("alarm/demo-chat-gpu-memory", "exists") in checked
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True


def test_wrong_metric_type_is_reported_with_expected_and_actual(aws):
    deploy_single_model(aws, metric="SageMakerVariantInvocationsPerInstance")
    report = verify_live(resolve(single_model_config()), clients=aws)
    assert not report.ok
    c = only(failing(report, "target-tracking metric"))
    assert c.resource == "scaling-policy/demo-chat-target-tracking"
    assert c.expected == "SageMakerVariantConcurrentRequestsPerModelHighResolution"
    assert c.actual == "SageMakerVariantInvocationsPerInstance"
    assert "10-second" in c.detail
    assert len(report.failures) == 1


def test_legacy_metric_is_expected_when_configured(aws):
    deploy_single_model(aws, metric="SageMakerVariantInvocationsPerInstance")
    report = verify_live(resolve(single_model_config(autoscaling={"metric": "invocations", "target_concurrency": 4})), clients=aws)
    assert report.ok, [str(c) for c in report.failures]


def test_wrong_min_max_is_reported(aws):
    deploy_single_model(aws, min_capacity=2, max_capacity=8)
    report = verify_live(resolve(single_model_config()), clients=aws)
    c = only(failing(report, "capacity"))
    assert (c.expected, c.actual) == ("min 1 max 4", "min 2 max 8")
    assert "expected min 1 max 4, got min 2 max 8" in str(c)


def test_missing_resources_are_reported(aws):
    report = verify_live(resolve(single_model_config()), clients=aws)
    failed = {(c.resource, c.check) for c in report.failures}
    assert ("endpoint/demo-chat", "exists") in failed
    assert (f"model/{SINGLE_MODEL}", "exists") in failed
    assert ("scalable-target/endpoint/demo-chat/variant/AllTraffic", "registered") in failed
    assert ("scaling-policy/demo-chat-target-tracking", "exists") in failed
    assert ("iam-role/demo-chat-sagemaker-us-east-1", "exists") in failed
    assert ("dashboard/demo-fastscale", "exists") in failed


def test_an_endpoint_of_the_same_name_owned_by_another_stack_fails_status(aws):
    deploy_single_model(aws, tags=stack_tags(single_config("someone-else", "chat")))
    report = verify_live(resolve(single_model_config()), clients=aws, wait=False)
    owner = only(failing(report, "owned by this stack"))
    assert owner.resource == "endpoint/demo-chat" and "belongs to stack someone-else" in (owner.actual or "")
    assert not report.ok


# --------------------------------------------------------------------------------------------- endpoint waits (Stubber)


def test_failed_endpoint_reports_failure_reason(aws, clock):
    sm, stub = stubbed("sagemaker")
    reason = "The primary container for production variant AllTraffic did not pass the ping health check."
    stub.add_response("describe_endpoint", endpoint_desc("demo-chat", "Creating", managed=None))
    stub.add_response("describe_endpoint", endpoint_desc("demo-chat", "Failed", failure=reason, managed=None))
    stub.add_response("list_tags", {"Tags": [{"Key": k, "Value": v} for k, v in stack_tags().items()]}, {"ResourceArn": endpoint_arn("demo-chat")})
    stub.add_response("describe_model", model_desc(SINGLE_MODEL), {"ModelName": SINGLE_MODEL})
    report = verify_live(resolve(single_model_config()), clients={**aws, "sagemaker": sm}, clock=clock, timeout=600)
    stub.assert_no_pending_responses()
    c = only([x for x in report.failures if x.resource == "endpoint/demo-chat" and x.check == "status"])
    assert c.actual == "Failed" and reason in c.detail
    assert clock.sleeps == [15]  # stopped waiting as soon as the endpoint failed


def test_wait_timeout_says_what_it_waited_for(aws, clock):
    sm, stub = stubbed("sagemaker")
    for _ in range(5):  # polls at 0, 15, 30, 45 and 60 s
        stub.add_response("describe_endpoint", endpoint_desc("demo-chat", "Creating", managed=None), {"EndpointName": "demo-chat"})
    stub.add_response("list_tags", {"Tags": [{"Key": k, "Value": v} for k, v in stack_tags().items()]}, {"ResourceArn": endpoint_arn("demo-chat")})
    stub.add_response("describe_model", model_desc(SINGLE_MODEL), {"ModelName": SINGLE_MODEL})
    seen = []
    report = verify_live(
        resolve(single_model_config()), clients={**aws, "sagemaker": sm}, timeout=60, clock=clock, on_progress=seen.append
    )
    stub.assert_no_pending_responses()
    c = only([x for x in report.failures if x.resource == "endpoint/demo-chat" and x.check == "status"])
    assert c.actual == "Creating"
    assert "timed out after 60s waiting for endpoint demo-chat to be InService (last seen: Creating)" in c.detail
    assert sum(clock.sleeps) == 60
    assert [p.state for p in seen] == ["Creating"] * 5
    assert all(p.what == "endpoint demo-chat to be InService" for p in seen)


def test_status_mode_looks_once_and_reports_what_differs(aws, clock):
    sm, stub = stubbed("sagemaker")
    stub.add_response("describe_endpoint", endpoint_desc("demo-chat", "Updating", managed=None))
    stub.add_response("list_tags", {"Tags": [{"Key": k, "Value": v} for k, v in stack_tags().items()]}, {"ResourceArn": endpoint_arn("demo-chat")})
    stub.add_response("describe_model", model_desc(SINGLE_MODEL, image="other:1"), {"ModelName": SINGLE_MODEL})
    report = verify_live(resolve(single_model_config()), clients={**aws, "sagemaker": sm}, wait=False, clock=clock)
    stub.assert_no_pending_responses()
    assert clock.sleeps == []
    assert report.waited is False and report.to_dict()["waited"] is False
    assert only([x for x in report.failures if x.resource == "endpoint/demo-chat" and x.check == "status"]).actual == "Updating"
    image = only([x for x in report.failures if x.resource == f"model/{SINGLE_MODEL}" and x.check == "image"])
    assert image.actual == "other:1"


# --------------------------------------------------------------------------------------------- components (Stubber)


def _component_deployment(
    aws,
    *,
    qwen_caching=True,
    qwen_metric=HIGH_RES_COMPONENT,
    alarm_actions=None,
    qwen_statuses=("InService",),
    qwen_failure=None,
    endpoint_config=None,
):
    """Stub a deployment of component_config(); returns the clients mapping and the stubbers.
    ``endpoint_config``: the DescribeEndpointConfig answer, for configs whose capacity settings are read from it."""
    sm, sm_stub = stubbed("sagemaker")
    aas, aas_stub = stubbed("application-autoscaling")
    sm_stub.add_response("describe_endpoint", endpoint_desc("demo-shared"), {"EndpointName": "demo-shared"})
    sm_stub.add_response(
        "list_tags",
        {"Tags": [{"Key": k, "Value": v} for k, v in stack_tags(component_config()).items()]},
        {"ResourceArn": endpoint_arn("demo-shared")},
    )
    if endpoint_config is not None:
        sm_stub.add_response("describe_endpoint_config", endpoint_config, {"EndpointConfigName": endpoint_config["EndpointConfigName"]})
    for status in qwen_statuses:
        sm_stub.add_response(
            "describe_inference_component",
            ic_desc(
                "demo-qwen",
                "demo-shared",
                status,
                model=QWEN_MODEL,
                caching=qwen_caching,
                failure=qwen_failure if status == "Failed" else None,
            ),
            {"InferenceComponentName": "demo-qwen"},
        )
    sm_stub.add_response("describe_model", model_desc(QWEN_MODEL, model_data="s3://demo-models/qwen3/"), {"ModelName": QWEN_MODEL})
    sm_stub.add_response(
        "describe_inference_component",
        ic_desc("demo-llama", "demo-shared", model=LLAMA_MODEL),
        {"InferenceComponentName": "demo-llama"},
    )
    sm_stub.add_response("describe_model", model_desc(LLAMA_MODEL, model_data="s3://demo-models/llama/"), {"ModelName": LLAMA_MODEL})
    sm_stub.add_response(
        "list_inference_components",
        ic_list(ic_summary("demo-qwen", "demo-shared"), ic_summary("demo-llama", "demo-shared")),
        {"EndpointNameEquals": "demo-shared"},
    )
    aas_stub.add_response(
        "describe_scalable_targets",
        {"ScalableTargets": [target(QWEN_RID, COMPONENT_DIM, 0, 4), target(LLAMA_RID, COMPONENT_DIM, 1, 2)]},
        {"ServiceNamespace": "sagemaker", "ResourceIds": [QWEN_RID, LLAMA_RID]},
    )
    aas_stub.add_response(
        "describe_scaling_policies",
        {
            "ScalingPolicies": [
                tt_policy("demo-qwen-target-tracking", QWEN_RID, COMPONENT_DIM, qwen_metric, 4),
                step_policy("demo-qwen-scale-from-zero", QWEN_RID),
            ]
        },
        {"ServiceNamespace": "sagemaker", "ResourceId": QWEN_RID},
    )
    aas_stub.add_response(
        "describe_scaling_policies",
        {"ScalingPolicies": [tt_policy("demo-llama-target-tracking", LLAMA_RID, COMPONENT_DIM, HIGH_RES_COMPONENT, 6)]},
        {"ServiceNamespace": "sagemaker", "ResourceId": LLAMA_RID},
    )
    create_role(aws["iam"], "demo-shared-sagemaker-us-east-1")
    cw = aws["cloudwatch"]
    for kind in ("model-latency", "5xx-errors", "gpu-memory"):
        put_alarm(cw, f"demo-shared-{kind}")
    put_alarm(cw, "demo-qwen-stuck-at-zero")
    for c in all_endpoint_names(component_config())[0].components:  # the alarms its updates roll back on
        for alarm in c.alarms.values():
            put_alarm(cw, alarm)
    actions = [policy_arn("demo-qwen-scale-from-zero", QWEN_RID)] if alarm_actions is None else alarm_actions
    put_no_capacity_alarm(cw, "demo-qwen-no-capacity", "demo-qwen", actions)
    return {**aws, "sagemaker": sm, "application-autoscaling": aas}, (sm_stub, aas_stub)


def test_correct_component_deployment_passes(aws, clock):
    clients, stubs = _component_deployment(aws)
    report = verify_live(resolve(component_config()), clients=clients, clock=clock)
    for s in stubs:
        s.assert_no_pending_responses()
    assert report.ok, [str(c) for c in report.failures]
    by_key = {(c.resource, c.check): c for c in report.checks}
    assert by_key[("inference-component/demo-qwen", "data caching (DataCacheConfig.EnableCaching)")].actual == "true"
    assert by_key[("inference-component/demo-qwen", "copy count")].detail == "current 1, desired 1"
    assert by_key[("alarm/demo-qwen-no-capacity", "wired to step policy")].ok
    assert by_key[("scaling-policy/demo-qwen-scale-from-zero", "scale-from-zero step policy")].ok
    assert by_key[("endpoint/demo-shared", "managed instance scaling")].actual == "ENABLED min 0 max 3"


def test_caching_off_is_reported(aws, clock):
    clients, _ = _component_deployment(aws, qwen_caching=False)
    report = verify_live(resolve(component_config()), clients=clients, clock=clock)
    c = only(failing(report, "data caching (DataCacheConfig.EnableCaching)"))
    assert c.resource == "inference-component/demo-qwen"
    assert (c.expected, c.actual) == ("true", "false")
    assert "cached" in c.detail


def test_caching_off_in_the_config_is_expected_off(aws, clock):
    clients, _ = _component_deployment(aws, qwen_caching=False)
    report = verify_live(resolve(component_config(data_cache=False)), clients=clients, clock=clock)
    assert not failing(report, "data caching (DataCacheConfig.EnableCaching)")


def test_wrong_component_metric_is_reported(aws, clock):
    clients, _ = _component_deployment(aws, qwen_metric="SageMakerInferenceComponentInvocationsPerCopy")
    report = verify_live(resolve(component_config()), clients=clients, clock=clock)
    c = only(failing(report, "target-tracking metric"))
    assert c.resource == "scaling-policy/demo-qwen-target-tracking"
    assert (c.expected, c.actual) == (HIGH_RES_COMPONENT, "SageMakerInferenceComponentInvocationsPerCopy")


@pytest.mark.parametrize("actions", [[], ["arn:aws:sns:us-east-1:123456789012:somewhere-else"]])
def test_alarm_not_wired_to_step_policy_is_reported(aws, clock, actions):
    clients, _ = _component_deployment(aws, alarm_actions=actions)
    report = verify_live(resolve(component_config()), clients=clients, clock=clock)
    c = only(failing(report, "wired to step policy"))
    assert c.resource == "alarm/demo-qwen-no-capacity"
    assert c.expected == policy_arn("demo-qwen-scale-from-zero", QWEN_RID)
    assert c.actual == (", ".join(actions) or "no actions")
    assert "first copy" in c.detail
    assert len(report.failures) == 1


def test_alarm_with_two_failure_threshold_is_reported(aws, clock):
    clients, _ = _component_deployment(aws, alarm_actions=[])
    cw = aws["cloudwatch"]
    put_no_capacity_alarm(
        cw, "demo-qwen-no-capacity", "demo-qwen", [policy_arn("demo-qwen-scale-from-zero", QWEN_RID)], ComparisonOperator="GreaterThanThreshold"
    )
    report = verify_live(resolve(component_config()), clients=clients, clock=clock)
    c = only(failing(report, "threshold"))
    assert (c.expected, c.actual) == ("GreaterThanOrEqualToThreshold 1", "GreaterThanThreshold 1")


def test_component_failure_reason_is_reported(aws, clock):
    reason = "Insufficient accelerator capacity on the endpoint's instances."
    clients, _ = _component_deployment(aws, qwen_statuses=("Creating", "Failed"), qwen_failure=reason)
    report = verify_live(resolve(component_config()), clients=clients, clock=clock)
    c = only([x for x in report.failures if x.resource == "inference-component/demo-qwen" and x.check == "status"])
    assert c.actual == "Failed" and reason in c.detail


def test_component_wait_timeout_names_the_component(aws, clock):
    clients, (sm_stub, _) = _component_deployment(aws, qwen_statuses=("Creating",) * 3)
    report = verify_live(resolve(component_config()), clients=clients, clock=clock, timeout=30)
    sm_stub.assert_no_pending_responses()
    c = only([x for x in report.failures if x.resource == "inference-component/demo-qwen" and x.check == "status"])
    assert "waiting for inference component demo-qwen to be InService (last seen: Creating)" in c.detail
