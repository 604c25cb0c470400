from __future__ import annotations

import json

import pytest

from fastscale.infra.aws.cleanup import Leftover, verify_cleanup
from fastscale.infra.aws.inventory import take_inventory
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
    put_alarm,
    queue_sagemaker_discovery,
    role_tags,
    single_config,
    single_model_config,
    stack_tags,
    stubbed,
    target,
    tt_policy,
)

SINGLE = all_endpoint_names(single_model_config())[0]
COMPONENTS = all_endpoint_names(component_config())[0]
OURS = stack_tags()
OTHER = stack_tags(single_config("another-project", "chat"))


def kinds(report) -> set[str]:
    return {x.kind for x in report.leftovers}


def leftover(report, kind: str, name: str):
    matches = [x for x in report.leftovers if x.kind == kind and x.name == name]
    assert len(matches) == 1, report.leftovers
    return matches[0]


def untouched(report) -> dict[tuple[str, str], str]:
    return {(x.kind, x.name): x.detail for x in report.not_touched}


def _model(sm, name: str, tags: dict[str, str] | None = None) -> None:
    sm.create_model(
        ModelName=name,
        ExecutionRoleArn="arn:aws:iam::123456789012:role/whatever",
        PrimaryContainer={"Image": IMAGE},
        Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()],
    )


def _endpoint_config(sm, name: str, model: str, tags: dict[str, str] | None = None) -> None:
    sm.create_endpoint_config(
        EndpointConfigName=name,
        ProductionVariants=[{"VariantName": "AllTraffic", "ModelName": model, "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}],
        Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()],
    )


def test_clean_account_passes_single_model(aws):
    # Unrelated resources in the same account are not leftovers, nor even candidates.
    put_alarm(aws["cloudwatch"], "someone-else-latency", {"fastscale:stack": "another-project"})
    create_role(aws["iam"], "someone-else-role")
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert report.ok and report.leftovers == [] and report.not_touched == []
    assert "are gone" in report.caches and SINGLE.endpoint in report.caches
    assert any("endpoint" in c for c in report.checked)
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True


def test_clean_account_passes_with_components(aws):
    sm, stub = stubbed("sagemaker")
    queue_sagemaker_discovery(stub, stack=component_config())
    report = verify_cleanup(resolve(component_config()), clients={**aws, "sagemaker": sm})
    stub.assert_no_pending_responses()
    assert report.ok
    assert "are gone" in report.caches and all(f"inference component {c.name}" in report.caches for c in COMPONENTS.components)


def test_endpoint_still_there(aws):
    sm = aws["sagemaker"]
    _model(sm, "m")
    _endpoint_config(sm, "not-ours-config", "m")
    sm.create_endpoint(EndpointName=SINGLE.endpoint, EndpointConfigName="not-ours-config", Tags=[{"Key": k, "Value": v} for k, v in OURS.items()])
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert not report.ok
    assert kinds(report) == {"endpoint"}
    assert "InService" in leftover(report, "endpoint", SINGLE.endpoint).detail
    assert "may still exist" in report.caches and SINGLE.endpoint in report.caches


def test_endpoint_still_deleting_is_a_leftover(aws):
    sm, stub = stubbed("sagemaker")
    queue_sagemaker_discovery(stub, stack=single_model_config(), endpoints=[(SINGLE.endpoint, "Deleting", OURS)], list_components=False)
    report = verify_cleanup(resolve(single_model_config()), clients={**aws, "sagemaker": sm})
    stub.assert_no_pending_responses()
    assert kinds(report) == {"endpoint"}
    assert "Deleting" in leftover(report, "endpoint", SINGLE.endpoint).detail
    assert "may still exist" in report.caches


def test_component_left(aws):
    sm, stub = stubbed("sagemaker")
    ep = COMPONENTS.endpoint
    tags = stack_tags(component_config())
    queue_sagemaker_discovery(
        stub,
        stack=component_config(),
        endpoints=[(ep, "InService", tags)],
        components=[("demo-qwen", ep, "Deleting", tags, None)],
    )
    report = verify_cleanup(resolve(component_config()), clients={**aws, "sagemaker": sm})
    stub.assert_no_pending_responses()
    assert kinds(report) == {"endpoint", "inference-component"}
    assert "Deleting" in leftover(report, "inference-component", "demo-qwen").detail
    assert "inference component demo-qwen" in report.caches and "may still exist" in report.caches


def test_configuration_left(aws):
    sm = aws["sagemaker"]
    _model(sm, "m")
    ours = SINGLE.endpoint_config_prefix + "20260101000000000000000001"
    _endpoint_config(sm, ours, "m", OURS)
    _endpoint_config(sm, "other-" + ours, "m")  # contains the prefix, but does not start with it: no candidate
    _endpoint_config(sm, SINGLE.endpoint_config_prefix + "by-hand", "m")  # the prefix, no tags
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert [(x.kind, x.name) for x in report.leftovers] == [("endpoint-config", ours)]
    assert untouched(report).keys() == {("endpoint-config", SINGLE.endpoint_config_prefix + "by-hand")}
    assert "not created by this stack" in untouched(report)[("endpoint-config", SINGLE.endpoint_config_prefix + "by-hand")]


def test_model_left_also_of_an_older_digest(aws):
    _model(aws["sagemaker"], SINGLE.model, OURS)
    _model(aws["sagemaker"], f"{SINGLE.endpoint}-0bsolete", OURS)  # an earlier image: another digest
    _model(aws["sagemaker"], f"{SINGLE.endpoint}-0ld0ne00")  # same shape of name, no tags
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert sorted((x.kind, x.name) for x in report.leftovers) == sorted([("model", SINGLE.model), ("model", f"{SINGLE.endpoint}-0bsolete")])
    assert "not created by this stack" in untouched(report)[("model", f"{SINGLE.endpoint}-0ld0ne00")]


def test_scaling_of_a_live_endpoint_is_proven_through_it(aws):
    sm, aas = aws["sagemaker"], aws["application-autoscaling"]
    _model(sm, "m")
    _endpoint_config(sm, "cfg", "m")
    sm.create_endpoint(EndpointName=SINGLE.endpoint, EndpointConfigName="cfg", Tags=[{"Key": k, "Value": v} for k, v in OURS.items()])
    aas.register_scalable_target(
        ServiceNamespace="sagemaker", ResourceId=SINGLE.resource_id, ScalableDimension=VARIANT_DIM, MinCapacity=1, MaxCapacity=4
    )
    aas.put_scaling_policy(
        PolicyName=SINGLE.target_tracking_policy,
        ServiceNamespace="sagemaker",
        ResourceId=SINGLE.resource_id,
        ScalableDimension=VARIANT_DIM,
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 4.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantConcurrentRequestsPerModelHighResolution"},
        },
    )
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert kinds(report) == {"endpoint", "scalable-target", "scaling-policy"}
    assert "min 1 max 4" in leftover(report, "scalable-target", SINGLE.resource_id).detail
    leftover(report, "scaling-policy", SINGLE.target_tracking_policy)


@pytest.mark.parametrize(("tags", "verdict"), [(OURS, "leftover"), (OTHER, "belongs to stack another-project"), ({}, "not created")])
def test_a_target_whose_endpoint_is_gone_is_proven_by_its_own_tags(aws, tags, verdict):
    # moto has no tags for Application Auto Scaling: its answers come from a Stubber.
    aas, stub = stubbed("application-autoscaling")
    t = {**target(SINGLE.resource_id, VARIANT_DIM, 1, 4), "ScalableTargetARN": "arn:aws:application-autoscaling:us-east-1:123456789012:scalable-target/abc"}
    stub.add_response("describe_scalable_targets", {"ScalableTargets": [t]}, {"ServiceNamespace": "sagemaker"})
    stub.add_response("list_tags_for_resource", {"Tags": tags}, {"ResourceARN": t["ScalableTargetARN"]})
    policy = tt_policy(SINGLE.target_tracking_policy, SINGLE.resource_id, VARIANT_DIM, "SageMakerVariantConcurrentRequestsPerModelHighResolution", 4)
    stub.add_response("describe_scaling_policies", {"ScalingPolicies": [policy]}, {"ServiceNamespace": "sagemaker"})
    report = verify_cleanup(resolve(single_model_config()), clients={**aws, "application-autoscaling": aas})
    stub.assert_no_pending_responses()
    if verdict == "leftover":
        assert kinds(report) == {"scalable-target", "scaling-policy"}
    else:
        assert report.ok
        found = untouched(report)
        assert verdict in found[("scalable-target", SINGLE.resource_id)]
        assert "scalable target" in found[("scaling-policy", SINGLE.target_tracking_policy)]


def test_alarms_by_name_and_prefix_are_leftovers_only_when_tagged_for_the_stack(aws):
    cw = aws["cloudwatch"]
    put_alarm(cw, SINGLE.alarms["model-latency"], OURS)
    put_alarm(cw, f"{SINGLE.endpoint}-renamed-kind", OURS)  # an older alarm of the same endpoint, found by prefix
    put_alarm(cw, f"{SINGLE.endpoint}-hand-made")  # the prefix, no tags
    put_alarm(cw, "unrelated-alarm", OURS)  # found by tag only
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert sorted((x.kind, x.name) for x in report.leftovers) == [
        ("alarm", SINGLE.alarms["model-latency"]),
        ("alarm", f"{SINGLE.endpoint}-renamed-kind"),
        ("alarm", "unrelated-alarm"),
    ]
    assert set(untouched(report)) == {("alarm", f"{SINGLE.endpoint}-hand-made")}


def test_a_target_tracking_alarm_without_any_owner_is_not_touched(aws):
    # AWS deletes these with their policy; one left with no policy, target or endpoint proves nothing.
    put_alarm(aws["cloudwatch"], f"TargetTracking-{SINGLE.resource_id}-AlarmHigh-1234")
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert report.ok
    assert "nothing proves whose it was" in untouched(report)[("alarm", f"TargetTracking-{SINGLE.resource_id}-AlarmHigh-1234")]


@pytest.mark.parametrize(
    ("body", "expected", "clash"),
    [
        (dashboard_body(), None, False),
        (json.dumps({"widgets": []}), "carries no fastscale marker", True),
        (
            json.dumps({"widgets": [{"type": "text", "properties": {"markdown": "## demo-chat (ml.g6.2xlarge)"}}]}),
            "without the fastscale marker (written before it existed)",
            False,  # no reason to stop the deploy that adds the marker
        ),
        (dashboard_body(single_config("demo", "chat").model_copy(update={"region": "eu-west-1"})), "belongs to stack demo (eu-west-1)", True),
    ],
    ids=["marker", "no-marker", "earlier-fastscale", "other-region"],
)
def test_dashboard_is_proven_by_its_marker(aws, body, expected, clash):
    aws["cloudwatch"].put_dashboard(DashboardName="demo-fastscale", DashboardBody=body)
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    if expected is None:
        assert [(x.kind, x.name) for x in report.leftovers] == [("dashboard", "demo-fastscale")]
    else:
        assert report.ok and expected in untouched(report)[("dashboard", "demo-fastscale")]
    clashes = [(r.kind, r.name) for r in take_inventory(resolve(single_model_config()), aws).name_clashes()]
    assert clashes == ([("dashboard", "demo-fastscale")] if clash else [])


def test_role_needs_the_stack_and_region_tags(aws):
    create_role(aws["iam"], SINGLE.execution_role, role_tags())
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert [(x.kind, x.name) for x in report.leftovers] == [("iam-role", SINGLE.execution_role)]


def test_role_without_the_region_tag_is_not_touched(aws):
    # IAM is global: a role tagged only with the stack may be the one of a same-named stack elsewhere.
    create_role(aws["iam"], SINGLE.execution_role, OURS)  # what the stack wrote before it tagged roles with the region
    assert "fastscale:region" not in OURS
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert report.ok
    assert "without fastscale:region" in untouched(report)[("iam-role", SINGLE.execution_role)]


def test_no_role_check_when_the_user_brings_the_role(aws):
    create_role(aws["iam"], SINGLE.execution_role, role_tags())
    data = single_model_config().model_dump()
    data["endpoints"][0]["execution_role_arn"] = "arn:aws:iam::123456789012:role/mine"
    report = verify_cleanup(resolve(parse_config(data)), clients=aws)
    assert report.ok and report.not_touched == []


def test_resources_found_only_by_tag(aws):
    sm = aws["sagemaker"]
    _model(sm, "demo-chat-before-rename-1a2b3c4d", OURS)  # e.g. the model of an endpoint since renamed
    _model(sm, "other-model", OTHER)
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert [(x.kind, x.name) for x in report.leftovers] == [("model", "demo-chat-before-rename-1a2b3c4d")]
    assert report.not_touched == []


def test_tagged_resources_of_other_types_and_stale_tag_index_entries(aws):
    # The tagging index lags deletions: an endpoint it still lists but SageMaker does not is not there.
    tagging, stub = stubbed("resourcegroupstaggingapi")
    gone = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/demo-old"
    queue = "arn:aws:sqs:us-east-1:123456789012:demo-queue"
    tag_list = [{"Key": k, "Value": v} for k, v in OURS.items()]
    stub.add_response(
        "get_resources",
        {"ResourceTagMappingList": [{"ResourceARN": gone, "Tags": tag_list}, {"ResourceARN": queue, "Tags": tag_list}]},
        {"TagFilters": [{"Key": "fastscale:stack"}]},
    )
    report = verify_cleanup(resolve(single_model_config()), clients={**aws, "resourcegroupstaggingapi": tagging})
    assert report.ok
    assert "does not create or delete" in untouched(report)[("tagged-resource", queue)]
    assert not any("demo-old" in name for _, name in untouched(report))


def test_log_groups_are_reported_as_kept_never_as_leftovers(aws):
    logs = aws["logs"]
    logs.create_log_group(logGroupName=f"/aws/sagemaker/Endpoints/{SINGLE.endpoint}", tags=OURS)
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert report.ok
    assert [(x.kind, x.name) for x in report.kept] == [("log-group", f"/aws/sagemaker/Endpoints/{SINGLE.endpoint}")]
    assert "--delete-logs" in report.kept[0].detail
    assert json.loads(json.dumps(report.to_dict()))["kept"][0]["kind"] == "log-group"



def test_the_report_as_json_and_as_text_carries_every_list(aws):
    deploy_single_model(aws)
    logs = f"/aws/sagemaker/Endpoints/{SINGLE.endpoint}"
    aws["logs"].create_log_group(logGroupName=logs, tags=OURS)
    put_alarm(aws["cloudwatch"], "demo-hand-made", {"fastscale:stack": "demo"})  # not managed-by=fastscale
    report = verify_cleanup(resolve(single_model_config()), clients=aws)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["ok"] is False and set(data) == {"ok", "leftovers", "not_touched", "kept", "checked", "caches"}
    assert [(x["kind"], x["name"], x["detail"], x["arn"]) for x in data["leftovers"]] == [
        (x.kind, x.name, x.detail, x.arn) for x in report.leftovers
    ]
    endpoint = next(x for x in data["leftovers"] if x["kind"] == "endpoint")
    assert endpoint["name"] == SINGLE.endpoint and endpoint["arn"].endswith(f":endpoint/{SINGLE.endpoint}")
    assert [(x["kind"], x["name"]) for x in data["kept"]] == [("log-group", logs)]
    (hand_made,) = data["not_touched"]
    assert (hand_made["kind"], hand_made["name"]) == ("alarm", "demo-hand-made") and "not managed-by" in hand_made["detail"]
    assert data["checked"] == report.checked and data["checked"]
    assert data["caches"] == report.caches and SINGLE.endpoint in data["caches"]
    # As text: kind, name, then the detail after a colon when there is one.
    found = next(x for x in report.leftovers if x.kind == "endpoint")
    assert str(found) == f"endpoint {SINGLE.endpoint}" + (f": {found.detail}" if found.detail else "")
    assert str(Leftover("model", "m", "a detail")) == "model m: a detail" and str(Leftover("model", "m")) == "model m"
