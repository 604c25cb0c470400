"""Teardown at its edges: what is not provably the stack's, or still in use, is never deleted.

Each test fails when its guard is removed: the Stubber refuses any call it was not given (a delete
included), and moto keeps what was not deleted.
"""

from __future__ import annotations

import boto3

from fastscale.infra.aws.cleanup import verify_cleanup
from fastscale.infra.aws.inventory import take_inventory
from fastscale.infra.aws.sweep import sweep
from fastscale.infra.config import parse_config
from fastscale.infra.model.naming import all_endpoint_names, former_execution_role_name
from fastscale.infra.model.resolved import resolve
from tests.aws.conftest import SERVICES
from tests.aws.factories import (
    component_config,
    create_role,
    deploy_single_model,
    endpoint_config_desc,
    ic_desc,
    not_found,
    put_alarm,
    queue_in_use,
    queue_sagemaker_discovery,
    role_tags,
    single_config,
    single_model_config,
    stack_tags,
    stubbed,
)

SINGLE = all_endpoint_names(single_model_config())[0]
COMPONENTS = all_endpoint_names(component_config())[0]
EP = COMPONENTS.endpoint
QWEN, LLAMA = (c.name for c in COMPONENTS.components)
CONFIG = COMPONENTS.endpoint_config_prefix + "20260101000000000000000001"
TAGS = stack_tags(component_config())
OTHER_STACK = stack_tags(single_config("other", "chat"))


def steps(report) -> list[tuple[str, str, str]]:
    return [(a.kind, a.name, a.status) for a in report.actions]


def test_a_foreign_component_on_the_stacks_endpoint_keeps_the_endpoint_and_its_configuration(aws, clock):
    sm, stub = stubbed("sagemaker")
    queue_sagemaker_discovery(
        stub,
        stack=component_config(),
        endpoints=[(EP, "InService", TAGS)],
        components=[(QWEN, EP, "InService", TAGS, None), (LLAMA, EP, "InService", TAGS, None), ("hand-made", EP, "InService", None, None)],
        configs=[(CONFIG, TAGS)],
    )
    for ic in (QWEN, LLAMA):
        stub.add_response("delete_inference_component", {}, {"InferenceComponentName": ic})
        not_found(stub, "describe_inference_component", "inference component", ic, InferenceComponentName=ic)
    # No delete_endpoint is queued: the Stubber fails the sweep if it asks for one.
    queue_in_use(stub, endpoints=[(EP, CONFIG)], configs={CONFIG: endpoint_config_desc(CONFIG)}, components=[("hand-made", EP, None)])

    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, clock=clock)
    stub.assert_no_pending_responses()
    assert steps(report) == [
        ("inference-component", QWEN, "deleted"),
        ("inference-component", LLAMA, "deleted"),
        ("endpoint", EP, "skipped"),
        ("endpoint-config", CONFIG, "skipped"),
    ]
    endpoint, config = report.actions[2], report.actions[3]
    assert "inference components on it are not this stack's (hand-made not created by this stack" in endpoint.detail
    assert config.detail == f"in use by endpoint {EP}, which is still there"
    assert ("inference-component", "hand-made") in {(f.kind, f.name) for f in report.not_touched}


def test_a_component_that_turns_failed_after_its_delete_is_asked_again(aws, clock):
    sm, stub = stubbed("sagemaker")
    queue_sagemaker_discovery(
        stub, stack=component_config(), endpoints=[(EP, "InService", TAGS)], components=[(QWEN, EP, "InService", TAGS, None)]
    )
    stub.add_response("delete_inference_component", {}, {"InferenceComponentName": QWEN})
    stub.add_response("describe_inference_component", ic_desc(QWEN, EP, "Failed", failure="delete failed"), {"InferenceComponentName": QWEN})
    # Failed is not on the way out: the next round asks again, and then it goes.
    stub.add_response("delete_inference_component", {}, {"InferenceComponentName": QWEN})
    not_found(stub, "describe_inference_component", "inference component", QWEN, InferenceComponentName=QWEN)
    stub.add_response("delete_endpoint", {}, {"EndpointName": EP})
    not_found(stub, "describe_endpoint", "endpoint", EP, EndpointName=EP)

    progress = []
    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, clock=clock, on_progress=progress.append)
    stub.assert_no_pending_responses()
    assert report.ok, steps(report)
    assert steps(report) == [("inference-component", QWEN, "deleted"), ("endpoint", EP, "deleted")]
    assert any(f"{QWEN}: Failed" in getattr(p, "state", "") for p in progress)


def test_a_component_that_stays_failed_is_reported_when_the_time_is_up(aws, clock):
    sm, stub = stubbed("sagemaker")
    queue_sagemaker_discovery(
        stub, stack=component_config(), endpoints=[(EP, "InService", TAGS)], components=[(QWEN, EP, "InService", TAGS, None)]
    )
    for _ in range(3):  # asked at 0, 15 and 30 s; the deadline is 30 s
        stub.add_response("delete_inference_component", {}, {"InferenceComponentName": QWEN})
        stub.add_response("describe_inference_component", ic_desc(QWEN, EP, "Failed"), {"InferenceComponentName": QWEN})

    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, clock=clock, timeout=30)
    stub.assert_no_pending_responses()
    assert not report.ok
    assert steps(report) == [("inference-component", QWEN, "failed"), ("endpoint", EP, "skipped")]
    assert "last seen: Failed" in report.actions[0].detail


def test_the_stacks_component_stuck_on_a_foreign_endpoint_keeps_the_role(aws, clock):
    create_role(aws["iam"], COMPONENTS.execution_role, role_tags(component_config()))
    sm, stub = stubbed("sagemaker")
    # The stack's component (its name and tags) runs on an endpoint that is not the stack's.
    queue_sagemaker_discovery(stub, stack=component_config(), components=[(QWEN, "someone-elses-endpoint", "InService", TAGS, None)])
    stub.add_client_error(
        "delete_inference_component", "AccessDeniedException", "not authorized to perform sagemaker:DeleteInferenceComponent", 400,
        {"InferenceComponentName": QWEN},
    )
    # Nothing else is queued: the role must be kept without asking anything more.

    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, clock=clock)
    stub.assert_no_pending_responses()
    assert not report.ok
    assert steps(report) == [("inference-component", QWEN, "failed"), ("iam-role", COMPONENTS.execution_role, "skipped")]
    assert "AccessDeniedException" in report.actions[0].detail
    assert report.actions[1].detail == f"kept while SageMaker still needs it for {QWEN}"
    assert aws["iam"].get_role(RoleName=COMPONENTS.execution_role)["Role"]


def test_a_target_tracking_alarm_tagged_for_another_stack_is_never_deleted(aws, clock):
    deploy_single_model(aws)
    # Named as Application Auto Scaling names the alarms of this stack's target, but tagged for another stack.
    theirs = f"TargetTracking-{SINGLE.resource_id}-AlarmHigh-0a1b"
    put_alarm(aws["cloudwatch"], theirs, OTHER_STACK)

    proof = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert theirs not in {x.name for x in proof.leftovers}
    assert "belongs to stack other" in {x.name: x.detail for x in proof.not_touched}[theirs]

    report = sweep(resolve(single_model_config()), clients=aws, clock=clock)
    assert report.ok, steps(report)
    assert theirs not in {a.name for a in report.actions}
    assert aws["cloudwatch"].describe_alarms(AlarmNames=[theirs])["MetricAlarms"]


def test_a_scalable_target_tagged_for_another_stack_is_never_deregistered(aws, clock):
    deploy_single_model(aws)
    arn = aws["application-autoscaling"].describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"][0]["ScalableTargetARN"]
    # moto's tagging index does not list scalable targets: the index answers from a Stubber.
    tagging, tag_stub = stubbed("resourcegroupstaggingapi")
    tag_stub.add_response(
        "get_resources",
        {"ResourceTagMappingList": [{"ResourceARN": arn, "Tags": [{"Key": k, "Value": v} for k, v in OTHER_STACK.items()]}]},
        {"TagFilters": [{"Key": "fastscale:stack"}]},
    )
    report = sweep(resolve(single_model_config()), clients={**aws, "resourcegroupstaggingapi": tagging}, clock=clock)
    tag_stub.assert_no_pending_responses()
    assert report.ok, steps(report)
    assert {a.kind for a in report.actions}.isdisjoint({"scalable-target", "scaling-policy"})
    reasons = {(f.kind, f.name): f.reason for f in report.not_touched}
    assert "belongs to stack other" in reasons[("scalable-target", SINGLE.resource_id)]
    assert aws["application-autoscaling"].describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]


def test_denied_delete_endpoint_keeps_its_configuration_model_and_role(aws, clock):
    create_role(aws["iam"], SINGLE.execution_role, role_tags())
    sm, stub = stubbed("sagemaker")
    tags = stack_tags()
    config = SINGLE.endpoint_config_prefix + "20260101000000000000000001"
    queue_sagemaker_discovery(
        stub, stack=single_model_config(), endpoints=[(SINGLE.endpoint, "InService", tags)], configs=[(config, tags)],
        models=[(SINGLE.model, tags)], list_components=False,
    )
    stub.add_client_error(
        "delete_endpoint", "AccessDeniedException", "not authorized to perform sagemaker:DeleteEndpoint", 400, {"EndpointName": SINGLE.endpoint}
    )
    role_arn = aws["iam"].get_role(RoleName=SINGLE.execution_role)["Role"]["Arn"]
    queue_in_use(
        stub,
        endpoints=[(SINGLE.endpoint, config)],
        configs={config: endpoint_config_desc(config, [SINGLE.model])},
        models={SINGLE.model: role_arn},
    )
    report = sweep(resolve(single_model_config()), clients={**aws, "sagemaker": sm}, clock=clock)
    stub.assert_no_pending_responses()  # and no delete of the configuration or the model was asked
    assert not report.ok
    assert steps(report) == [
        ("endpoint", SINGLE.endpoint, "failed"),
        ("endpoint-config", config, "skipped"),
        ("model", SINGLE.model, "skipped"),
        ("iam-role", SINGLE.execution_role, "skipped"),
    ]
    assert "AccessDeniedException" in report.actions[0].detail
    assert report.actions[1].detail == report.actions[2].detail == f"in use by endpoint {SINGLE.endpoint}, which is still there"


def test_nothing_in_use_is_deleted_when_the_uses_cannot_be_read(aws, clock):
    sm, stub = stubbed("sagemaker")
    tags = stack_tags()
    config = SINGLE.endpoint_config_prefix + "20260101000000000000000001"
    queue_sagemaker_discovery(stub, stack=single_model_config(), configs=[(config, tags)], models=[(SINGLE.model, tags)], list_components=False)
    stub.add_response("list_endpoints", {"Endpoints": [{"EndpointName": "x", "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/x",
                                                        "CreationTime": "2026-01-01", "LastModifiedTime": "2026-01-01", "EndpointStatus": "InService"}]}, {})
    stub.add_client_error("describe_endpoint", "AccessDeniedException", "not authorized to perform sagemaker:DescribeEndpoint", 400, {"EndpointName": "x"})

    report = sweep(resolve(single_model_config()), clients={**aws, "sagemaker": sm}, clock=clock)
    stub.assert_no_pending_responses()
    assert [(a.kind, a.status) for a in report.actions] == [("endpoint-config", "skipped"), ("model", "skipped")]
    assert all("cannot tell whether a live endpoint or component uses it (AccessDeniedException" in a.detail for a in report.actions)


# --------------------------------------------------------------------------------------------- two regions, one project


def _west(config):
    data = config.model_dump(mode="json", exclude_defaults=True)
    data["region"] = "eu-west-1"
    return parse_config(data)


def test_one_project_in_two_regions_has_two_roles_and_no_name_clash(aws, clock):
    east = single_model_config()
    west = _west(east)
    session = boto3.session.Session(region_name="eu-west-1")
    west_aws = {s: session.client(s) for s in SERVICES}  # the same moto account: IAM is shared, SageMaker is not
    deploy_single_model(aws, config=east)
    east_role = all_endpoint_names(east)[0].execution_role
    west_role = all_endpoint_names(west)[0].execution_role
    assert east_role != west_role

    # The second region's plan/deploy finds no name of its own taken; the first region's role is not its to delete.
    assert take_inventory(resolve(west), west_aws).name_clashes() == []
    deploy_single_model(west_aws, config=west)
    assert sweep(resolve(west), clients=west_aws, clock=clock).ok
    assert aws["iam"].get_role(RoleName=east_role)["Role"]
    assert verify_cleanup(resolve(east), clients=aws).leftovers  # the first region's stack is whole
    assert sweep(resolve(east), clients=aws, clock=clock).ok and verify_cleanup(resolve(east), clients=aws).ok


def test_the_role_an_earlier_release_named_without_the_region_is_found_and_proven_by_its_region_tag(aws, clock):
    east = single_model_config()
    west = _west(east)
    session = boto3.session.Session(region_name="eu-west-1")
    west_aws = {s: session.client(s) for s in SERVICES}
    former = former_execution_role_name(SINGLE.endpoint)
    create_role(aws["iam"], former, role_tags(east))  # the role the first region's stack got from an earlier release

    # In the other region it is another stack's: not a name clash, never deleted.
    inventory = take_inventory(resolve(west), west_aws)
    assert inventory.name_clashes() == []
    role = next(r for r in inventory.resources if r.kind == "iam-role")
    assert (role.name, role.found_by, role.ownership.verdict) == (former, "former-name", "other-stack")
    assert sweep(resolve(west), clients=west_aws, clock=clock).actions == []
    # In its own region it is the stack's: a leftover that sweep deletes.
    assert [(x.kind, x.name) for x in verify_cleanup(resolve(east), clients=aws).leftovers] == [("iam-role", former)]
    assert steps(sweep(resolve(east), clients=aws, clock=clock)) == [("iam-role", former, "deleted")]
