"""The inventory behind verify-cleanup and sweep: two projects whose names collide never touch each other,
and for every kind, what verify-cleanup reports is what sweep deletes, after which verify-cleanup passes."""

from __future__ import annotations

import json

import pytest

from fastscale.infra.aws.cleanup import verify_cleanup
from fastscale.infra.aws.inventory import KIND, take_inventory
from fastscale.infra.aws.sweep import sweep
from fastscale.infra.config import parse_config
from fastscale.infra.model.naming import all_endpoint_names
from fastscale.infra.model.resolved import resolve
from tests.aws.factories import (
    IMAGE,
    MOTO_INSTANCE_TYPE,
    VARIANT_DIM,
    component_config,
    create_role,
    dashboard_body,
    deploy_single_model,
    ic_desc,
    not_found,
    put_alarm,
    queue_sagemaker_discovery,
    role_tags,
    single_config,
    single_model_config,
    stack_tags,
    stubbed,
)

#: Project `chat` with endpoint `prod-qwen3` and project `chat-prod` with endpoint `qwen3` are both valid
#: and produce the same names; project `chat` with endpoint `prod` has the prefix `chat-prod-`.
CHAT = single_config("chat", "prod-qwen3")
CHAT_PROD = single_config("chat-prod", "qwen3")
CHAT_WITH_PROD = single_config("chat", "prod")
THEIRS = all_endpoint_names(CHAT_PROD)[0]


def _tagged(tags):
    return [{"Key": k, "Value": v} for k, v in (tags or {}).items()]


def endpoint_status(aws, name: str) -> str | None:
    try:
        return aws["sagemaker"].describe_endpoint(EndpointName=name)["EndpointStatus"]
    except aws["sagemaker"].exceptions.ClientError:
        return None


def account_state(aws) -> dict[str, list[str]]:
    """Names of everything in the moto account, to compare before and after."""
    sm, cw, aas = aws["sagemaker"], aws["cloudwatch"], aws["application-autoscaling"]
    return {
        "endpoints": sorted(e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]),
        "configs": sorted(c["EndpointConfigName"] for c in sm.list_endpoint_configs()["EndpointConfigs"]),
        "models": sorted(m["ModelName"] for m in sm.list_models()["Models"]),
        "targets": sorted(t["ResourceId"] for t in aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]),
        "policies": sorted(p["PolicyName"] for p in aas.describe_scaling_policies(ServiceNamespace="sagemaker")["ScalingPolicies"]),
        "alarms": sorted(a["AlarmName"] for a in cw.describe_alarms()["MetricAlarms"]),
        "dashboards": sorted(d["DashboardName"] for d in cw.list_dashboards()["DashboardEntries"]),
        "roles": sorted(r["RoleName"] for r in aws["iam"].list_roles()["Roles"]),
    }


# --------------------------------------------------------------------------------------------- collisions


def test_same_names_in_two_projects_the_other_project_is_never_touched(aws, clock):
    deploy_single_model(aws, config=CHAT_PROD)
    before = account_state(aws)
    assert all_endpoint_names(CHAT)[0].endpoint == THEIRS.endpoint  # the collision itself

    report = sweep(resolve(CHAT), clients=aws, clock=clock)
    assert report.ok and report.actions == []
    assert account_state(aws) == before and endpoint_status(aws, THEIRS.endpoint) == "InService"
    reasons = {(f.kind, f.name): f.reason for f in report.not_touched}
    for kind, name in [
        ("endpoint", THEIRS.endpoint),
        ("model", THEIRS.model),
        ("scalable-target", THEIRS.resource_id),
        ("scaling-policy", THEIRS.target_tracking_policy),
        ("iam-role", THEIRS.execution_role),
        *(("alarm", a) for a in THEIRS.alarms.values()),
    ]:
        assert "belongs to stack chat-prod" in reasons[(kind, name)], (kind, name)

    proof = verify_cleanup(resolve(CHAT), clients=aws)
    assert proof.ok and proof.leftovers == []
    # Their endpoint is not this stack's, but it still exists under the name: its caches are not gone.
    assert "caches are gone" not in proof.caches
    assert f"endpoint {THEIRS.endpoint} still exists (not this stack's: belongs to stack chat-prod" in proof.caches
    assert "its caches may remain" in proof.caches
    assert {x.kind for x in proof.not_touched} >= {"endpoint", "model", "alarm", "iam-role"}
    # plan/deploy of `chat` would stop: every name it creates is taken by chat-prod.
    clashes = {(r.kind, r.name) for r in take_inventory(resolve(CHAT), aws).name_clashes()}
    assert ("endpoint", THEIRS.endpoint) in clashes and ("iam-role", THEIRS.execution_role) in clashes

    # The owner's own sweep still removes all of it, and then its proof passes.
    own = sweep(resolve(CHAT_PROD), clients=aws, clock=clock)
    assert own.ok and own.not_touched == []
    assert {a.status for a in own.actions} == {"deleted"}
    assert verify_cleanup(resolve(CHAT_PROD), clients=aws).ok
    assert account_state(aws) == {k: [] for k in before}


def test_a_prefix_shared_with_another_project_touches_nothing_of_it_nor_untagged_resources(aws, clock):
    deploy_single_model(aws, config=CHAT_PROD)
    sm = aws["sagemaker"]
    # Made by hand, untagged, with the prefix `chat-prod-` of project chat's endpoint `prod`.
    sm.create_endpoint_config(
        EndpointConfigName="chat-prod-manual-experiment",
        ProductionVariants=[{"VariantName": "AllTraffic", "ModelName": THEIRS.model, "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}],
    )
    before = account_state(aws)

    report = sweep(resolve(CHAT_WITH_PROD), clients=aws, clock=clock)
    assert report.ok and report.actions == []
    assert account_state(aws) == before and endpoint_status(aws, THEIRS.endpoint) == "InService"
    reasons = {(f.kind, f.name): f.reason for f in report.not_touched}
    assert "belongs to stack chat-prod" in reasons[("endpoint-config", THEIRS.endpoint_config_prefix + "20260101000000000000000001")]
    assert "not created by this stack" in reasons[("endpoint-config", "chat-prod-manual-experiment")]
    assert "belongs to stack chat-prod" in reasons[("alarm", THEIRS.alarms["model-latency"])]

    proof = verify_cleanup(resolve(CHAT_WITH_PROD), clients=aws)
    assert proof.ok
    assert take_inventory(resolve(CHAT_WITH_PROD), aws).name_clashes() == []  # prefix matches are not name clashes

    own = sweep(resolve(CHAT_PROD), clients=aws, clock=clock)
    assert own.ok and verify_cleanup(resolve(CHAT_PROD), clients=aws).ok
    # Only the hand-made configuration is left: it was never anybody's to delete.
    assert account_state(aws)["configs"] == ["chat-prod-manual-experiment"]


def test_a_name_differing_only_in_case_is_a_candidate_and_not_touched(aws, clock):
    # SageMaker compares names without regard to case: `Chat-Prod-Qwen3` is the name `chat-prod-qwen3`.
    sm = aws["sagemaker"]
    sm.create_model(ModelName="hand-made", ExecutionRoleArn="arn:aws:iam::123456789012:role/x", PrimaryContainer={"Image": IMAGE})
    sm.create_endpoint_config(
        EndpointConfigName="hand-made-config",
        ProductionVariants=[{"VariantName": "AllTraffic", "ModelName": "hand-made", "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}],
    )
    sm.create_endpoint(EndpointName="Chat-Prod-Qwen3", EndpointConfigName="hand-made-config")

    inventory = take_inventory(resolve(CHAT_PROD), aws)
    assert [(r.kind, r.name) for r in inventory.name_clashes()] == [("endpoint", "Chat-Prod-Qwen3")]
    report = sweep(resolve(CHAT_PROD), clients=aws, clock=clock)
    assert report.actions == [] and endpoint_status(aws, "Chat-Prod-Qwen3") == "InService"
    assert [(f.kind, f.name) for f in report.not_touched] == [("endpoint", "Chat-Prod-Qwen3")]
    assert "not created by this stack" in report.not_touched[0].reason
    assert verify_cleanup(resolve(CHAT_PROD), clients=aws).ok


def test_an_endpoint_found_only_by_its_tags_is_the_stacks(aws, clock):
    # Renamed in the config since it was deployed: neither its name nor a prefix ties it to the stack.
    deploy_single_model(aws, config=single_config("demo", "old-name"))  # the same stack: project demo
    proof = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert ("endpoint", "demo-old-name") in {(x.kind, x.name) for x in proof.leftovers}
    report = sweep(resolve(single_model_config()), clients=aws, clock=clock)
    assert report.ok and ("endpoint", "demo-old-name", "deleted") in {(a.kind, a.name, a.status) for a in report.actions}
    # Its role was named after it, and goes too.
    assert ("iam-role", "demo-old-name-sagemaker-us-east-1", "deleted") in {(a.kind, a.name, a.status) for a in report.actions}
    assert verify_cleanup(resolve(single_model_config()), clients=aws).ok


def test_more_than_a_page_of_resources(aws, clock):
    sm, cw = aws["sagemaker"], aws["cloudwatch"]
    ours = stack_tags()
    for i in range(105):  # SageMaker and CloudWatch list at most 100 per page
        sm.create_model(
            ModelName=f"demo-chat-{i:08x}", ExecutionRoleArn="arn:aws:iam::123456789012:role/x", PrimaryContainer={"Image": IMAGE}, Tags=_tagged(ours)
        )
        put_alarm(cw, f"demo-chat-old-{i:03d}", ours)
    sm.create_model(ModelName="demo-chat-ffffffff", ExecutionRoleArn="arn:aws:iam::123456789012:role/x", PrimaryContainer={"Image": IMAGE})

    proof = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert sum(x.kind == "model" for x in proof.leftovers) == 105 and sum(x.kind == "alarm" for x in proof.leftovers) == 105
    assert [(x.kind, x.name) for x in proof.not_touched] == [("model", "demo-chat-ffffffff")]
    report = sweep(resolve(single_model_config()), clients=aws, clock=clock)
    assert report.ok and len(report.by_status("deleted")) == 210
    assert verify_cleanup(resolve(single_model_config()), clients=aws).ok
    assert [m["ModelName"] for m in sm.list_models()["Models"]] == ["demo-chat-ffffffff"]


# --------------------------------------------------------------------------------------------- owners


def _endpoint(aws, tags):
    sm = aws["sagemaker"]
    sm.create_model(ModelName="m", ExecutionRoleArn="arn:aws:iam::123456789012:role/x", PrimaryContainer={"Image": IMAGE})
    sm.create_endpoint_config(
        EndpointConfigName="cfg",
        ProductionVariants=[{"VariantName": "AllTraffic", "ModelName": "m", "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}],
    )
    sm.create_endpoint(EndpointName="demo-chat", EndpointConfigName="cfg", Tags=_tagged(tags))


def _target(aws):
    aas = aws["application-autoscaling"]
    rid = "endpoint/demo-chat/variant/AllTraffic"
    aas.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=rid, ScalableDimension=VARIANT_DIM, MinCapacity=1, MaxCapacity=2)
    return rid


def test_a_target_tracking_alarm_is_proven_through_what_it_scales(aws, clock):
    _endpoint(aws, stack_tags())
    rid = _target(aws)
    put_alarm(aws["cloudwatch"], f"TargetTracking-{rid}-AlarmHigh-0a1b")
    proof = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert ("alarm", f"TargetTracking-{rid}-AlarmHigh-0a1b") in {(x.kind, x.name) for x in proof.leftovers}
    assert sweep(resolve(single_model_config()), clients=aws, clock=clock).ok
    assert aws["cloudwatch"].describe_alarms()["MetricAlarms"] == []


def test_the_target_tracking_alarms_of_an_adopted_variant_are_found_and_proven_through_its_endpoint(aws, clock):
    """Adopted as `Legacy-LLM` with the variant `primary`: the alarms Application Auto Scaling left for its
    target are named after that variant's resource id, as AWS spells the name."""
    data = single_model_config().model_dump(mode="json", exclude_defaults=True)
    data["endpoints"][0]["adopted"] = {"endpoint": "Legacy-LLM", "variant": "primary"}
    config = parse_config(data)
    sm = aws["sagemaker"]
    sm.create_model(ModelName="m", ExecutionRoleArn="arn:aws:iam::123456789012:role/x", PrimaryContainer={"Image": IMAGE})
    sm.create_endpoint_config(EndpointConfigName="cfg", ProductionVariants=[
        {"VariantName": "primary", "ModelName": "m", "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}])
    sm.create_endpoint(EndpointName="Legacy-LLM", EndpointConfigName="cfg", Tags=_tagged(stack_tags(config)))
    left = "TargetTracking-endpoint/Legacy-LLM/variant/primary-AlarmHigh-0a1b"
    put_alarm(aws["cloudwatch"], left)
    assert ("alarm", left) in {(x.kind, x.name) for x in verify_cleanup(resolve(config), clients=aws).leftovers}
    # sweep deletes only what is proven the stack's: the alarm, through its endpoint
    assert ("alarm", left, "deleted") in {(a.kind, a.name, a.status) for a in sweep(resolve(config), clients=aws, clock=clock).actions}
    assert aws["cloudwatch"].describe_alarms()["MetricAlarms"] == []


def test_log_groups_are_deleted_only_when_asked_and_only_when_proven(aws, clock):
    logs = aws["logs"]
    _endpoint(aws, stack_tags())
    logs.create_log_group(logGroupName="/aws/sagemaker/Endpoints/demo-chat")  # proven through its endpoint
    kept = sweep(resolve(single_model_config()), clients=aws, clock=clock)
    assert [(f.kind, f.name) for f in kept.kept] == [("log-group", "/aws/sagemaker/Endpoints/demo-chat")]
    assert ("endpoint", "demo-chat", "deleted") in {(a.kind, a.name, a.status) for a in kept.actions}
    # Kept, and tagged while the endpoint still proved it: a later --delete-logs can still prove it.
    later = sweep(resolve(single_model_config()), clients=aws, clock=clock, delete_logs=True)
    assert [(a.kind, a.status) for a in later.actions] == [("log-group", "deleted")]
    assert logs.describe_log_groups()["logGroups"] == []


def test_logs_whose_endpoint_is_gone_and_that_carry_no_tag_are_not_touched(aws, clock):
    logs = aws["logs"]
    logs.create_log_group(logGroupName="/aws/sagemaker/Endpoints/demo-chat")
    unproven = sweep(resolve(single_model_config()), clients=aws, clock=clock, delete_logs=True)
    assert unproven.actions == [] and "nothing proves whose logs" in unproven.not_touched[0].reason
    assert logs.describe_log_groups()["logGroups"]


# --------------------------------------------------------------------------------------------- round trip per kind


def _moto(build):
    def setup(aws):
        build(aws)
        return single_model_config(), aws, None

    return setup


def _components(aws):
    """An inference component of the stack (moto has none: a Stubber answers three inventories)."""
    config = component_config()
    tags = stack_tags(config)
    ep = all_endpoint_names(config)[0].endpoint
    sm, stub = stubbed("sagemaker")
    for _ in range(2):  # verify-cleanup, then the sweep's own look
        queue_sagemaker_discovery(stub, stack=config, components=[("demo-qwen", ep, "InService", tags, None)])
    stub.add_response("delete_inference_component", {}, {"InferenceComponentName": "demo-qwen"})
    stub.add_response("describe_inference_component", ic_desc("demo-qwen", ep, "Deleting"), {"InferenceComponentName": "demo-qwen"})
    not_found(stub, "describe_inference_component", "inference component", "demo-qwen", InferenceComponentName="demo-qwen")
    queue_sagemaker_discovery(stub, stack=config)  # verify-cleanup after the sweep
    return config, {**aws, "sagemaker": sm}, stub


def _tagged_config(aws):
    sm = aws["sagemaker"]
    sm.create_model(ModelName="m", ExecutionRoleArn="arn:aws:iam::123456789012:role/x", PrimaryContainer={"Image": IMAGE})
    sm.create_endpoint_config(
        EndpointConfigName="demo-chat-20260101000000000000000001",
        ProductionVariants=[{"VariantName": "AllTraffic", "ModelName": "m", "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}],
        Tags=_tagged(stack_tags()),
    )


def _policy(aws):
    _endpoint(aws, stack_tags())
    rid = _target(aws)
    aws["application-autoscaling"].put_scaling_policy(
        PolicyName="demo-chat-target-tracking",
        ServiceNamespace="sagemaker",
        ResourceId=rid,
        ScalableDimension=VARIANT_DIM,
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 4.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantConcurrentRequestsPerModelHighResolution"},
        },
    )


ROUND_TRIPS = {
    "endpoint": _moto(lambda aws: _endpoint(aws, stack_tags())),
    "inference-component": _components,
    "endpoint-config": _moto(_tagged_config),
    "model": _moto(
        lambda aws: aws["sagemaker"].create_model(
            ModelName="demo-chat-0123abcd", ExecutionRoleArn="arn:aws:iam::123456789012:role/x", PrimaryContainer={"Image": IMAGE}, Tags=_tagged(stack_tags())
        )
    ),
    "scalable-target": _moto(lambda aws: (_endpoint(aws, stack_tags()), _target(aws))),
    "scaling-policy": _moto(_policy),
    "alarm": _moto(lambda aws: put_alarm(aws["cloudwatch"], "demo-chat-model-latency", stack_tags())),
    "dashboard": _moto(lambda aws: aws["cloudwatch"].put_dashboard(DashboardName="demo-fastscale", DashboardBody=dashboard_body())),
    "iam-role": _moto(lambda aws: create_role(aws["iam"], "demo-chat-sagemaker-us-east-1", role_tags())),
    "log-group": _moto(lambda aws: aws["logs"].create_log_group(logGroupName="/aws/sagemaker/Endpoints/demo-chat", tags=stack_tags())),
}


def test_every_kind_has_a_round_trip():
    assert set(ROUND_TRIPS) == set(KIND)


@pytest.mark.parametrize("kind", sorted(ROUND_TRIPS))
def test_sweep_deletes_what_verify_reports_and_verify_then_passes(aws, clock, kind):
    config, clients, stub = ROUND_TRIPS[kind](aws)
    before = verify_cleanup(resolve(config), clients=clients)
    reported = {(x.kind, x.name) for x in before.leftovers + before.kept}
    assert kind in {k for k, _ in reported}, before.to_dict()
    assert not before.not_touched

    report = sweep(resolve(config), clients=clients, clock=clock, delete_logs=True)
    assert report.ok
    assert {(a.kind, a.name) for a in report.actions} == reported
    assert {a.status for a in report.actions} == {"deleted"}

    after = verify_cleanup(resolve(config), clients=clients)
    assert after.ok and after.kept == [] and after.not_touched == []
    if stub is not None:
        stub.assert_no_pending_responses()
    assert json.loads(json.dumps(after.to_dict()))["ok"] is True


def test_a_refused_claim_of_the_logs_does_not_stop_the_sweep(aws, clock):
    _endpoint(aws, stack_tags())
    logs, stub = stubbed("logs")
    name = "/aws/sagemaker/Endpoints/demo-chat"
    arn = f"arn:aws:logs:us-east-1:123456789012:log-group:{name}"
    stub.add_response(
        "describe_log_groups", {"logGroups": [{"logGroupName": name, "logGroupArn": arn, "arn": arn + ":*"}]}, {"logGroupNamePrefix": name}
    )
    stub.add_response("list_tags_for_resource", {"tags": {}}, {"resourceArn": arn})
    stub.add_client_error("tag_resource", "AccessDeniedException", "not allowed to tag", 400)
    report = sweep(resolve(single_model_config()), clients={**aws, "logs": logs}, clock=clock)
    stub.assert_no_pending_responses()
    assert report.ok and ("endpoint", "demo-chat", "deleted") in {(a.kind, a.name, a.status) for a in report.actions}
    assert [(f.kind, f.name) for f in report.kept] == [("log-group", name)]
