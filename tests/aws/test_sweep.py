from __future__ import annotations

import json

from fastscale.infra.aws.cleanup import verify_cleanup
from fastscale.infra.aws.sweep import Found, InUse, SweepAction, sweep
from fastscale.infra.model.naming import all_endpoint_names
from fastscale.infra.model.resolved import resolve
from tests.aws.factories import (
    COMPONENT_DIM,
    HIGH_RES_COMPONENT,
    IMAGE,
    component_config,
    create_role,
    deploy_single_model,
    endpoint_config_desc,
    endpoint_desc,
    ic_desc,
    not_found,
    put_alarm,
    queue_in_use,
    queue_sagemaker_discovery,
    role_tags,
    single_model_config,
    stack_tags,
    step_policy,
    stubbed,
    target,
    tt_policy,
)

SINGLE = all_endpoint_names(single_model_config())[0]
COMPONENTS = all_endpoint_names(component_config())[0]
EP = COMPONENTS.endpoint
QWEN, LLAMA = (c.name for c in COMPONENTS.components)
CONFIG = COMPONENTS.endpoint_config_prefix + "20260101000000000000000001"
FASTSCALE_TAGS = stack_tags()
COMPONENT_TAGS = stack_tags(component_config())


def steps(report) -> list[tuple[str, str, str]]:
    return [(a.kind, a.name, a.status) for a in report.actions]


# --------------------------------------------------------------------------------------------- moto


def _leftovers_of_single_model(aws):
    deploy_single_model(aws)
    # Found only by their tags: the model of an earlier image and an alarm of a removed feature.
    aws["sagemaker"].create_model(
        ModelName="demo-chat-0ldd1gst",
        ExecutionRoleArn="arn:aws:iam::123456789012:role/x",
        PrimaryContainer={"Image": IMAGE},
        Tags=[{"Key": k, "Value": v} for k, v in FASTSCALE_TAGS.items()],
    )
    put_alarm(aws["cloudwatch"], "demo-chat-retired-alarm", FASTSCALE_TAGS)
    # Carries the stack tag but not managed-by=fastscale: not fastscale's to delete.
    put_alarm(aws["cloudwatch"], "demo-hand-made", {"fastscale:stack": "demo"})


def test_dry_run_lists_everything_and_deletes_nothing(aws, clock):
    _leftovers_of_single_model(aws)
    before = verify_cleanup(resolve(single_model_config()), clients=aws)
    report = sweep(resolve(single_model_config()), clients=aws, dry_run=True, clock=clock)
    after = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert report.dry_run and report.ok
    assert {a.status for a in report.actions} == {"would-delete"}
    assert [x.name for x in after.leftovers] == [x.name for x in before.leftovers]
    # What the sweep would delete is exactly what verify-cleanup reports.
    assert sorted((a.kind, a.name) for a in report.actions) == sorted((x.kind, x.name) for x in before.leftovers)
    names = {a.name for a in report.actions}
    assert {SINGLE.endpoint, SINGLE.model, SINGLE.execution_role, "demo-chat-0ldd1gst", "demo-chat-retired-alarm"} <= names
    assert [(f.kind, f.name) for f in report.not_touched] == [("alarm", "demo-hand-made")]
    assert clock.sleeps == []


def test_sweep_deletes_everything_in_the_safe_order(aws, clock):
    _leftovers_of_single_model(aws)
    seen = []
    report = sweep(resolve(single_model_config()), clients=aws, clock=clock, on_progress=seen.append)
    assert report.ok, steps(report)
    assert [(f.kind, f.name) for f in report.not_touched] == [("alarm", "demo-hand-made")]
    assert "not managed-by=fastscale" in report.not_touched[0].reason
    assert {a.status for a in report.actions} == {"deleted"}
    order = [a.kind for a in report.actions]
    first = {kind: order.index(kind) for kind in order}
    assert first["alarm"] < first["scaling-policy"] < first["scalable-target"] < first["endpoint"]
    assert first["endpoint"] < first["endpoint-config"] < first["model"] < first["iam-role"]
    assert order[-1] == "iam-role"
    assert ("model", "demo-chat-0ldd1gst", "deleted") in steps(report)
    assert "inline policy sagemaker-access" in report.actions[-1].detail
    assert any(str(s).startswith("deleted: endpoint") for s in seen)
    # verify-cleanup passes afterwards; the hand-made alarm, left alone, is shown as not touched.
    after = verify_cleanup(resolve(single_model_config()), clients=aws)
    assert after.ok and [(x.kind, x.name) for x in after.not_touched] == [("alarm", "demo-hand-made")]
    assert aws["cloudwatch"].describe_alarms(AlarmNames=["demo-hand-made"])["MetricAlarms"]
    assert json.loads(json.dumps(report.to_dict()))["dry_run"] is False


def test_sweep_is_idempotent(aws, clock):
    _leftovers_of_single_model(aws)
    sweep(resolve(single_model_config()), clients=aws, clock=clock)
    again = sweep(resolve(single_model_config()), clients=aws, clock=clock)
    assert again.ok and again.actions == [] and len(again.not_touched) == 1  # only the hand-made alarm


# --------------------------------------------------------------------------------------------- Stubber: components


def _discovery(sm_stub, aas_stub, *, llama_base=None):
    """What the sweep finds on component_config()'s endpoint: both components, one configuration."""
    queue_sagemaker_discovery(
        sm_stub,
        stack=component_config(),
        endpoints=[(EP, "InService", COMPONENT_TAGS)],
        components=[(QWEN, EP, "InService", COMPONENT_TAGS, None), (LLAMA, EP, "InService", COMPONENT_TAGS, llama_base)],
        configs=[(CONFIG, COMPONENT_TAGS)],
    )
    if aas_stub is None:
        return
    rids = [COMPONENTS.resource_id, f"inference-component/{QWEN}", f"inference-component/{LLAMA}"]
    aas_stub.add_response(
        "describe_scalable_targets",
        {"ScalableTargets": [target(rids[1], COMPONENT_DIM, 0, 4), target(rids[2], COMPONENT_DIM, 1, 2)]},
        {"ServiceNamespace": "sagemaker"},
    )
    aas_stub.add_response(
        "describe_scaling_policies",
        {
            "ScalingPolicies": [
                tt_policy(f"{QWEN}-target-tracking", rids[1], COMPONENT_DIM, HIGH_RES_COMPONENT, 4),
                step_policy(f"{QWEN}-scale-from-zero", rids[1]),
            ]
        },
        {"ServiceNamespace": "sagemaker"},
    )
    # Deletion: policies first, then the targets (with the component dimension moto does not know).
    for name in (f"{QWEN}-target-tracking", f"{QWEN}-scale-from-zero"):
        aas_stub.add_response(
            "delete_scaling_policy",
            {},
            {"PolicyName": name, "ServiceNamespace": "sagemaker", "ResourceId": rids[1], "ScalableDimension": COMPONENT_DIM},
        )
    for rid in rids[1:]:
        aas_stub.add_response(
            "deregister_scalable_target", {}, {"ServiceNamespace": "sagemaker", "ResourceId": rid, "ScalableDimension": COMPONENT_DIM}
        )


def _account_with_alarm_and_role(aws):
    put_alarm(aws["cloudwatch"], f"{QWEN}-no-capacity", COMPONENT_TAGS)
    create_role(aws["iam"], COMPONENTS.execution_role, role_tags(component_config()))


def test_component_in_a_transient_state_is_retried_then_awaited(aws, clock):
    sm, sm_stub = stubbed("sagemaker")
    aas, aas_stub = stubbed("application-autoscaling")
    _account_with_alarm_and_role(aws)
    _discovery(sm_stub, aas_stub)
    # round 1: qwen is Updating and refuses; llama accepts and is Deleting
    sm_stub.add_client_error(
        "delete_inference_component",
        "ValidationException",
        f"Inference component {QWEN} is in Updating status and cannot be deleted.",
        400,
        {"InferenceComponentName": QWEN},
    )
    sm_stub.add_response("delete_inference_component", {}, {"InferenceComponentName": LLAMA})
    sm_stub.add_response("describe_inference_component", ic_desc(LLAMA, EP, "Deleting"), {"InferenceComponentName": LLAMA})
    # round 2: qwen accepts now; llama is gone
    sm_stub.add_response("delete_inference_component", {}, {"InferenceComponentName": QWEN})
    sm_stub.add_response("describe_inference_component", ic_desc(QWEN, EP, "Deleting"), {"InferenceComponentName": QWEN})
    not_found(sm_stub, "describe_inference_component", "inference component", LLAMA, InferenceComponentName=LLAMA)
    # round 3: qwen is gone
    not_found(sm_stub, "describe_inference_component", "inference component", QWEN, InferenceComponentName=QWEN)
    sm_stub.add_response("delete_endpoint", {}, {"EndpointName": EP})
    not_found(sm_stub, "describe_endpoint", "endpoint", EP, EndpointName=EP)
    queue_in_use(sm_stub)  # the endpoint is gone: nothing uses the configuration
    sm_stub.add_response("delete_endpoint_config", {}, {"EndpointConfigName": CONFIG})

    progress = []
    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm, "application-autoscaling": aas}, clock=clock, on_progress=progress.append)
    sm_stub.assert_no_pending_responses()
    aas_stub.assert_no_pending_responses()
    assert report.ok, steps(report)
    assert steps(report) == [
        ("alarm", f"{QWEN}-no-capacity", "deleted"),
        ("scaling-policy", f"{QWEN}-target-tracking", "deleted"),
        ("scaling-policy", f"{QWEN}-scale-from-zero", "deleted"),
        ("scalable-target", f"inference-component/{QWEN}", "deleted"),
        ("scalable-target", f"inference-component/{LLAMA}", "deleted"),
        ("inference-component", LLAMA, "deleted"),
        ("inference-component", QWEN, "deleted"),
        ("endpoint", EP, "deleted"),
        ("endpoint-config", CONFIG, "deleted"),
        ("iam-role", COMPONENTS.execution_role, "deleted"),
    ]
    assert any("delete refused, retrying" in getattr(p, "state", "") and "Updating" in p.state for p in progress)
    assert len(clock.sleeps) == 2


def test_endpoint_is_retried_until_its_components_are_gone(aws, clock):
    sm, sm_stub = stubbed("sagemaker")
    _account_with_alarm_and_role(aws)
    _discovery(sm_stub, None)
    for ic in (QWEN, LLAMA):
        sm_stub.add_response("delete_inference_component", {}, {"InferenceComponentName": ic})
        not_found(sm_stub, "describe_inference_component", "inference component", ic, InferenceComponentName=ic)
    # SageMaker has not caught up with the deletions yet: the endpoint still counts a component.
    sm_stub.add_client_error(
        "delete_endpoint",
        "ValidationException",
        "Cannot delete endpoint with inference component associated.",
        400,
        {"EndpointName": EP},
    )
    sm_stub.add_response("delete_endpoint", {}, {"EndpointName": EP})
    sm_stub.add_response("describe_endpoint", endpoint_desc(EP, "Deleting"), {"EndpointName": EP})
    not_found(sm_stub, "describe_endpoint", "endpoint", EP, EndpointName=EP)
    queue_in_use(sm_stub)  # the endpoint is gone: nothing uses the configuration
    sm_stub.add_response("delete_endpoint_config", {}, {"EndpointConfigName": CONFIG})

    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, clock=clock)
    sm_stub.assert_no_pending_responses()
    assert report.ok, steps(report)
    order = [(a.kind, a.name) for a in report.actions]
    assert order.index(("inference-component", QWEN)) < order.index(("endpoint", EP))
    assert order.index(("inference-component", LLAMA)) < order.index(("endpoint", EP))
    assert ("endpoint", EP, "deleted") in steps(report)
    assert len(clock.sleeps) == 2  # one retry of the delete, one poll while Deleting


def test_adapters_are_deleted_before_their_base(aws, clock):
    sm, sm_stub = stubbed("sagemaker")
    _discovery(sm_stub, None, llama_base=QWEN)  # llama is an adapter on qwen
    sm_stub.add_response("delete_inference_component", {}, {"InferenceComponentName": LLAMA})
    not_found(sm_stub, "describe_inference_component", "inference component", LLAMA, InferenceComponentName=LLAMA)
    sm_stub.add_response("delete_inference_component", {}, {"InferenceComponentName": QWEN})
    not_found(sm_stub, "describe_inference_component", "inference component", QWEN, InferenceComponentName=QWEN)
    sm_stub.add_response("delete_endpoint", {}, {"EndpointName": EP})
    not_found(sm_stub, "describe_endpoint", "endpoint", EP, EndpointName=EP)
    queue_in_use(sm_stub)  # the endpoint is gone: nothing uses the configuration
    sm_stub.add_response("delete_endpoint_config", {}, {"EndpointConfigName": CONFIG})

    progress = []
    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, clock=clock, on_progress=progress.append)
    sm_stub.assert_no_pending_responses()
    components = [a.name for a in report.actions if a.kind == "inference-component"]
    assert components == [LLAMA, QWEN]
    waits = {p.what for p in progress if not isinstance(p, SweepAction)}
    assert {f"adapter inference components {LLAMA} to be deleted", f"inference components {QWEN} to be deleted"} <= waits


def test_a_component_that_never_goes_keeps_its_endpoint_and_the_role(aws, clock):
    sm, sm_stub = stubbed("sagemaker")
    _account_with_alarm_and_role(aws)
    _discovery(sm_stub, None)
    sm_stub.add_response("delete_inference_component", {}, {"InferenceComponentName": QWEN})
    sm_stub.add_response("describe_inference_component", ic_desc(QWEN, EP, "Deleting"), {"InferenceComponentName": QWEN})
    sm_stub.add_response("delete_inference_component", {}, {"InferenceComponentName": LLAMA})
    not_found(sm_stub, "describe_inference_component", "inference component", LLAMA, InferenceComponentName=LLAMA)
    for _ in range(3):  # polls at 15, 30 and 45 s; the deadline is 45 s
        sm_stub.add_response("describe_inference_component", ic_desc(QWEN, EP, "Deleting"), {"InferenceComponentName": QWEN})
    # The endpoint stays (a component on it would not go), and so does the configuration it runs on.
    queue_in_use(sm_stub, endpoints=[(EP, CONFIG)], configs={CONFIG: endpoint_config_desc(CONFIG)}, components=[(QWEN, EP, None)])

    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, clock=clock, timeout=45)
    sm_stub.assert_no_pending_responses()
    assert not report.ok
    failed = report.by_status("failed")
    assert [(a.kind, a.name) for a in failed] == [("inference-component", QWEN)]
    assert "timed out after 45s" in failed[0].detail and "Deleting" in failed[0].detail
    assert ("endpoint", EP, "skipped") in steps(report)
    config = next(a for a in report.actions if a.kind == "endpoint-config")
    assert config.status == "skipped" and config.detail == f"in use by endpoint {EP}, which is still there"
    role = [a for a in report.actions if a.kind == "iam-role"]
    assert role[0].status == "skipped" and EP in role[0].detail
    assert aws["iam"].get_role(RoleName=COMPONENTS.execution_role)  # still there


def test_dry_run_with_components_calls_no_delete(aws, clock):
    sm, sm_stub = stubbed("sagemaker")
    _discovery(sm_stub, None)  # Stubber fails the test on any call not queued, deletes included
    queue_in_use(sm_stub, endpoints=[(EP, CONFIG)], gone=(EP,))  # the endpoint would be deleted first
    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, dry_run=True, clock=clock)
    sm_stub.assert_no_pending_responses()
    assert [(a.kind, a.name) for a in report.actions] == [
        ("inference-component", QWEN),
        ("inference-component", LLAMA),
        ("endpoint", EP),
        ("endpoint-config", CONFIG),
    ]
    assert {a.status for a in report.actions} == {"would-delete"}


def test_endpoint_found_only_by_its_tags_is_deleted(aws, clock):
    # An endpoint renamed in the config since it was deployed: only its tags still tie it to the stack.
    tagging, tag_stub = stubbed("resourcegroupstaggingapi")
    old = "demo-chat-before-rename"
    tag_stub.add_response(
        "get_resources",
        {
            "ResourceTagMappingList": [
                {"ResourceARN": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{old}", "Tags": [{"Key": k, "Value": v} for k, v in FASTSCALE_TAGS.items()]}
            ]
        },
    )
    sm, sm_stub = stubbed("sagemaker")
    queue_sagemaker_discovery(
        sm_stub, stack=single_model_config(), endpoints=[(old, "InService", FASTSCALE_TAGS)], indexed=(old,), list_components=False
    )
    sm_stub.add_response("delete_endpoint", {}, {"EndpointName": old})
    not_found(sm_stub, "describe_endpoint", "endpoint", old, EndpointName=old)
    report = sweep(resolve(single_model_config()), clients={**aws, "sagemaker": sm, "resourcegroupstaggingapi": tagging}, clock=clock)
    sm_stub.assert_no_pending_responses()
    assert steps(report) == [("endpoint", old, "deleted")]


# --------------------------------------------------------------------------------------------- the parts


def test_kinds_are_deleted_in_whole_blocks_in_the_safe_order(aws, clock):
    _leftovers_of_single_model(aws)
    aws["logs"].create_log_group(logGroupName=f"/aws/sagemaker/Endpoints/{SINGLE.endpoint}")
    report = sweep(resolve(single_model_config()), clients=aws, clock=clock, delete_logs=True)
    assert report.ok, steps(report)
    blocks = [kind for i, kind in enumerate(a.kind for a in report.actions) if i == 0 or report.actions[i - 1].kind != kind]
    # Each kind once, as one block: no alarm after a policy, no model before its endpoint, logs before the role.
    assert blocks == ["alarm", "dashboard", "scaling-policy", "scalable-target", "endpoint", "endpoint-config", "model",
                      "log-group", "iam-role"]


def test_the_report_as_json_and_its_actions_as_text(aws, clock):
    _leftovers_of_single_model(aws)
    aws["logs"].create_log_group(logGroupName=f"/aws/sagemaker/Endpoints/{SINGLE.endpoint}")
    report = sweep(resolve(single_model_config()), clients=aws, clock=clock)
    data = json.loads(json.dumps(report.to_dict()))
    assert data == {
        "ok": True,
        "dry_run": False,
        "actions": [{"kind": a.kind, "name": a.name, "status": a.status, "detail": a.detail} for a in report.actions],
        "not_touched": [{"kind": "alarm", "name": "demo-hand-made", "reason": report.not_touched[0].reason}],
        "kept": [{"kind": "log-group", "name": f"/aws/sagemaker/Endpoints/{SINGLE.endpoint}", "reason": report.kept[0].reason}],
    }
    assert report.by_status("deleted") == report.actions and report.by_status("failed") == []
    role = report.actions[-1]
    assert str(role) == f"deleted: iam-role {SINGLE.execution_role} (inline policy sagemaker-access)"
    assert str(SweepAction("endpoint", "e", "deleted")) == "deleted: endpoint e"
    assert str(Found("alarm", "a", "why")) == "alarm a: why"


def test_what_is_in_use_is_keyed_by_kind_and_lower_case_name_and_a_role_by_its_arns_last_part():
    uses = InUse()
    uses.add("iam-role", "arn:aws:iam::123456789012:role/service-role/Demo-Chat-Role", ("endpoint", "e1"))
    uses.add("model", "Demo-Model", ("endpoint", "e1"))
    uses.add("model", "demo-model", ("inference-component", "c1"))
    uses.add("model", "demo-model", ("endpoint", "e1"))  # the same user once
    uses.add("endpoint-config", "a/b", ("endpoint", "e2"))  # only a role's name is cut at "/"
    uses.add("model", None, ("endpoint", "e3"))
    uses.add("model", "", ("endpoint", "e3"))
    assert uses.users == {
        ("iam-role", "demo-chat-role"): [("endpoint", "e1")],
        ("model", "demo-model"): [("endpoint", "e1"), ("inference-component", "c1")],
        ("endpoint-config", "a/b"): [("endpoint", "e2")],
    }
    assert uses.unknown == ""


def test_components_already_deleting_are_awaited_without_a_second_delete(aws, clock):
    sm, sm_stub = stubbed("sagemaker")
    queue_sagemaker_discovery(
        sm_stub,
        stack=component_config(),
        endpoints=[(EP, "InService", COMPONENT_TAGS)],
        components=[(QWEN, EP, "Deleting", COMPONENT_TAGS, None), (LLAMA, EP, "Deleting", COMPONENT_TAGS, None)],
        configs=[(CONFIG, COMPONENT_TAGS)],
    )
    # A destroy asked already: no delete_inference_component is queued, so asking again fails the Stubber.
    sm_stub.add_response("describe_inference_component", ic_desc(QWEN, EP, "Deleting"), {"InferenceComponentName": QWEN})
    not_found(sm_stub, "describe_inference_component", "inference component", LLAMA, InferenceComponentName=LLAMA)
    not_found(sm_stub, "describe_inference_component", "inference component", QWEN, InferenceComponentName=QWEN)
    sm_stub.add_response("delete_endpoint", {}, {"EndpointName": EP})
    not_found(sm_stub, "describe_endpoint", "endpoint", EP, EndpointName=EP)
    queue_in_use(sm_stub)
    sm_stub.add_response("delete_endpoint_config", {}, {"EndpointConfigName": CONFIG})

    progress = []
    report = sweep(resolve(component_config()), clients={**aws, "sagemaker": sm}, clock=clock, on_progress=progress.append)
    sm_stub.assert_no_pending_responses()
    assert steps(report) == [
        ("inference-component", LLAMA, "deleted"),
        ("inference-component", QWEN, "deleted"),
        ("endpoint", EP, "deleted"),
        ("endpoint-config", CONFIG, "deleted"),
    ]
    # What is awaited is named as what it is (not adapters: neither has a base).
    waits = {p.what for p in progress if not isinstance(p, SweepAction)}
    assert f"inference components {QWEN}, {LLAMA} to be deleted" in waits


def test_a_synchronous_delete_gone_or_refused_is_reported_and_the_sweep_goes_on(clock):
    """What AWS answers a synchronous delete with: not found is already gone, anything else a failure that blocks
    nothing but itself (real botocore errors; the kind's delete call replaced)."""
    from dataclasses import replace

    from botocore.exceptions import ClientError

    from fastscale.infra.aws.inventory import KIND, Inventory, Resource
    from fastscale.infra.aws.sweep import _Sweeper
    from fastscale.infra.aws.waiters import Deadline

    answers = {
        "gone": ClientError({"Error": {"Code": "ResourceNotFound", "Message": "no alarm gone"}}, "DeleteAlarms"),
        "denied": ClientError({"Error": {"Code": "AccessDenied", "Message": "not authorized"}}, "DeleteAlarms"),
    }

    def delete(aws, r):
        if r.name in answers:
            raise answers[r.name]
        return None

    kind = replace(KIND["alarm"], delete=delete)
    alarms = [Resource("alarm", name, detail="CloudWatch alarm") for name in ("gone", "denied", "fine")]
    sweeper = _Sweeper({}, Inventory("demo", "us-east-1", alarms), False, None, Deadline(60, clock), 1)
    sweeper.sweep_kind(kind, alarms)
    assert [(a.name, a.status, a.detail) for a in sweeper.report.actions] == [
        ("gone", "already-gone", ""),
        ("denied", "failed", "AccessDenied: not authorized"),
        ("fine", "deleted", "CloudWatch alarm"),
    ]
    assert sweeper.failed == {("alarm", "denied")} and sweeper.gone == {("alarm", "gone"), ("alarm", "fine")}
    assert not sweeper.report.ok


def test_a_user_the_inventory_does_not_know_is_named_as_not_this_stacks(clock):
    from fastscale.infra.aws.inventory import Inventory
    from fastscale.infra.aws.sweep import _Sweeper
    from fastscale.infra.aws.waiters import Deadline

    sweeper = _Sweeper({}, Inventory("demo", "us-east-1"), False, None, Deadline(60, clock), 1)
    assert sweeper._holder("endpoint", "someone-elses") == "endpoint someone-elses (not this stack's)"
