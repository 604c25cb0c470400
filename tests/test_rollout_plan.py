"""The plan classifier and the rollout duration, on hand-written plan entries (the real plans are in
tests/test_rollout_terraform.py)."""

from __future__ import annotations

import math

import pytest

from fastscale.infra.analysis.estimate import estimate_config
from fastscale.infra.config import load_config, parse_config
from fastscale.infra.model.resolved import resolve
from fastscale.infra.terraform.rollout import (
    Capacity,
    ChangeKind,
    PlanFormatError,
    RolloutInputs,
    Strategy,
    classify_plan,
    read_strategy,
    rollout_duration,
    rollout_inputs,
)
from tests.aws.factories import single_model_config
from tests.conftest import ROOT
from tests.rollout_support import canary, rolling


def plan(*changes: dict) -> dict:
    return {"format_version": "1.2", "resource_changes": list(changes)}


def change(type_: str, actions: list[str], before: dict | None, after: dict | None, unknown: dict | None = None,
           replace_paths: list | None = None, reason: str | None = None, mode: str = "managed") -> dict:
    body = {"actions": actions, "before": before, "after": after, "after_unknown": unknown or {}}
    if replace_paths:
        body["replace_paths"] = replace_paths
    entry = {"address": f"{type_}.x", "mode": mode, "type": type_, "name": "x", "change": body}
    if reason:
        entry["action_reason"] = reason
    return entry


def one(entry: dict, inputs: dict | None = None):
    [found] = classify_plan(plan(entry), inputs).changes
    return found


ENDPOINT = {"name": "demo-chat", "endpoint_config_name": "demo-chat-1", "tags": {"a": "1"}}
COMPONENT = {"inference_component_name": "demo-ic", "endpoint_name": "demo-chat",
             "specification": {"model_name": "demo-ic-1"}, "runtime_config": {"copy_count": 2}}


# --------------------------------------------------------------------------------------------- classify


def test_an_endpoint_that_switches_configuration_rolls_out_blue_green_by_default():
    after = {**ENDPOINT, "endpoint_config_name": None}
    found = one(change("aws_sagemaker_endpoint", ["update"], ENDPOINT, after, {"endpoint_config_name": True}),
                {"demo-chat": RolloutInputs(2, "instance", 400.0)})
    assert found.kind is ChangeKind.BLUE_GREEN and not found.strategy.configured
    assert found.name == "demo-chat" and "SageMaker's default" in found.reason
    assert found.duration.seconds == 400  # one start-up of the new fleet, no bake without a configuration


def test_an_endpoint_with_a_rolling_policy_rolls_in_batches():
    policy = [{"rolling_update_policy": [{"maximum_batch_size": [{"type": "CAPACITY_PERCENT", "value": 25}],
                                          "wait_interval_in_seconds": 60}], "blue_green_update_policy": [],
               "auto_rollback_configuration": [{"alarms": [{"alarm_name": "a1"}]}]}]
    before = {**ENDPOINT, "deployment_config": policy}
    after = {**before, "endpoint_config_name": "demo-chat-2"}
    found = one(change("aws_sagemaker_endpoint", ["update"], before, after), {"demo-chat": RolloutInputs(8, "instance", 240.0)})
    assert found.kind is ChangeKind.ROLLING and found.strategy.alarms == ("a1",)
    assert found.duration.steps == 4 and found.duration.seconds == 4 * (240 + 60)  # 25% of 8 = 2 per batch


def test_tags_or_a_new_deployment_configuration_alone_are_in_place():
    after = {**ENDPOINT, "tags": {"a": "2"}, "deployment_config": canary(10, 300, ("a1",))}
    found = one(change("aws_sagemaker_endpoint", ["update"], ENDPOINT, after))
    assert found.kind is ChangeKind.IN_PLACE and found.changed == ("deployment_config", "tags")
    assert found.strategy is None and found.duration is None


def test_a_component_whose_copy_count_alone_changes_is_in_place():
    after = {**COMPONENT, "runtime_config": {"copy_count": 5}}
    assert one(change("awscc_sagemaker_inference_component", ["update"], COMPONENT, after)).kind is ChangeKind.IN_PLACE


def test_a_component_with_a_new_model_rolls_with_its_policy():
    after = {**COMPONENT, "specification": {"model_name": None}, "deployment_config": rolling(1, 300, ("lat",))}
    found = one(change("awscc_sagemaker_inference_component", ["update"], COMPONENT, after,
                       {"specification": {"model_name": True}}), {"demo-ic": RolloutInputs(3, "copy", 120.0)})
    assert found.kind is ChangeKind.ROLLING and found.changed == ("deployment_config", "specification")
    assert found.duration.seconds == 3 * (120 + 300) and "3 batch(es)" in found.duration.formula


def test_a_rollout_without_estimate_says_why():
    after = {**COMPONENT, "specification": {"model_name": "demo-ic-2"}}
    found = one(change("awscc_sagemaker_inference_component", ["update"], COMPONENT, after),
                {"demo-ic": RolloutInputs(1, "copy", None, "not estimated: set model_size_gb")})
    assert found.duration is None and found.duration_note == "not estimated: set model_size_gb"
    found = one(change("awscc_sagemaker_inference_component", ["update"], COMPONENT, after))
    assert found.duration is None and "not in the config" in found.duration_note


@pytest.mark.parametrize(("actions", "order"), [
    (["delete", "create"], "deleted, then created"),
    (["create", "delete"], "created beside the old one, then the old one deleted"),
])
def test_replacing_a_live_component_or_endpoint_is_downtime(actions, order):
    after = {**COMPONENT, "endpoint_name": "demo-other"}
    found = one(change("awscc_sagemaker_inference_component", actions, COMPONENT, after, replace_paths=[["endpoint_name"]],
                       reason="replace_because_cannot_update"))
    assert found.kind is ChangeKind.DOWNTIME and found.replace_paths == ("endpoint_name",)
    assert found.actions == tuple(actions)
    # The reason says which order Terraform takes: the requests that fail differ (none served, or both for a moment).
    assert found.reason == f"endpoint_name cannot change in place: {order}"
    assert "another endpoint" in found.avoid
    entry = change("aws_sagemaker_endpoint", actions, ENDPOINT, {**ENDPOINT, "name": "b"}, replace_paths=[["name"]])
    found = one(entry)
    assert found.kind is ChangeKind.DOWNTIME and found.reason == f"name cannot change in place: {order}"
    assert found.name == "b" and "keep the old name" in found.avoid
    assert classify_plan(plan(entry)).summary()["downtime"] == ["aws_sagemaker_endpoint.x"]


def test_a_tainted_endpoint_is_downtime_with_the_reason_and_the_way_out():
    found = one(change("aws_sagemaker_endpoint", ["delete", "create"], ENDPOINT, ENDPOINT, reason="replace_because_tainted"))
    assert found.kind is ChangeKind.DOWNTIME and found.replace_paths == ()
    assert "tainted" in found.reason and "terraform untaint" in found.avoid


def test_nested_replace_paths_are_dotted():
    found = one(change("aws_sagemaker_model", ["create", "delete"], {"a": 1}, {"a": 2},
                       replace_paths=[["primary_container", 0, "image"]]))
    assert found.kind is ChangeKind.REPLACE and found.replace_paths == ("primary_container[0].image",)


def test_creating_an_endpoint_is_not_downtime_and_no_ops_and_reads_are_left_out():
    p = plan(
        change("aws_sagemaker_endpoint", ["create"], None, ENDPOINT),
        change("aws_sagemaker_endpoint", ["no-op"], ENDPOINT, ENDPOINT),
        change("aws_caller_identity", ["read"], None, {}, mode="data"),
        change("aws_iam_role", ["delete"], {"name": "r"}, None),
    )
    result = classify_plan(p)
    assert [c.kind for c in result.changes] == [ChangeKind.CREATE, ChangeKind.DELETE]
    assert result.downtime == [] and result.summary()["counts"]["create"] == 1


def test_something_that_is_not_a_plan_is_refused():
    with pytest.raises(PlanFormatError, match="terraform show -json"):
        classify_plan({"resources": []})


# --------------------------------------------------------------------------------------------- strategy


def test_strategies_read_from_both_providers_shapes():
    endpoint = read_strategy("aws_sagemaker_endpoint", {"deployment_config": canary(10, 900, ("x", "y"))})
    assert (endpoint.kind, endpoint.traffic, endpoint.step, endpoint.alarms) == (
        ChangeKind.BLUE_GREEN, "CANARY", Capacity("CAPACITY_PERCENT", 10), ("x", "y"))
    component = read_strategy("awscc_sagemaker_inference_component", {"deployment_config": rolling(2, 30, ("z",))})
    assert (component.kind, component.step, component.wait_seconds, component.max_execution_seconds) == (
        ChangeKind.ROLLING, Capacity("COPY_COUNT", 2), 30, 3600)
    default = read_strategy("awscc_sagemaker_inference_component", {"deployment_config": None})
    assert (default.kind, default.configured, default.alarms) == (ChangeKind.BLUE_GREEN, False, ())


# --------------------------------------------------------------------------------------------- duration


def test_linear_blue_green_bakes_after_every_step_then_waits_to_terminate():
    strategy = Strategy(ChangeKind.BLUE_GREEN, True, traffic="LINEAR", step=Capacity("CAPACITY_PERCENT", 30),
                        wait_seconds=120, termination_wait_seconds=60)
    d = rollout_duration(strategy, units=5, startup_seconds=300)
    assert d.steps == math.ceil(100 / 30) == 4 and d.seconds == 300 + 4 * 120 + 60
    by_count = Strategy(ChangeKind.BLUE_GREEN, True, traffic="LINEAR", step=Capacity("INSTANCE_COUNT", 2), wait_seconds=10)
    assert rollout_duration(by_count, units=5, startup_seconds=100).steps == 3


def test_rolling_batch_is_at_least_one_and_never_more_than_all():
    tiny = Strategy(ChangeKind.ROLLING, True, step=Capacity("CAPACITY_PERCENT", 5), wait_seconds=0)
    assert rollout_duration(tiny, units=3, startup_seconds=100).steps == 3  # 5% of 3 rounds up to 1 copy
    whole = Strategy(ChangeKind.ROLLING, True, step=None, wait_seconds=10)
    assert rollout_duration(whole, units=6, startup_seconds=100).seconds == 110


def test_rollout_inputs_come_from_the_estimate_model_by_sagemaker_name():
    config = load_config(ROOT / "examples" / "multi-model.yaml")
    inputs = rollout_inputs(resolve(config))
    estimates = {e.component: e for e in estimate_config(resolve(config))}
    component = config.endpoints[0].inference_components[0]
    found = inputs[f"{config.project}-{component.name}"]
    expected = estimates[component.name].scenario("copy_no_data_cache").seconds_from("image_pull")
    assert (found.unit, found.units, found.startup_seconds) == ("copy", component.copies.initial or 1, expected)
    endpoint = inputs[f"{config.project}-{config.endpoints[0].name}"]
    assert endpoint.unit == "instance" and endpoint.startup_seconds > found.startup_seconds  # an instance costs more


# --------------------------------------------------------------------------------------------- execution role


ROLE = {"name": "demo-chat-sagemaker", "tags": {"fastscale:region": "us-east-1"}}


def test_a_renamed_execution_role_says_what_it_sets_off():
    after = {**ROLE, "name": "demo-chat-sagemaker-us-east-1"}
    found = one(change("aws_iam_role", ["create", "delete"], ROLE, after, replace_paths=[["name"]]))
    assert found.kind is ChangeKind.REPLACE and found.replace_paths == ("name",)
    assert found.notice.startswith("the execution role demo-chat-sagemaker is renamed demo-chat-sagemaker-us-east-1")
    assert "replaces every model and endpoint configuration" in found.notice and "deletes the old role last" in found.notice
    assert found.to_dict()["notice"] == found.notice


def test_a_role_replaced_under_the_same_name_or_created_has_no_rename_notice():
    tainted = one(change("aws_iam_role", ["delete", "create"], ROLE, ROLE, reason="replace_because_tainted"))
    assert tainted.kind is ChangeKind.REPLACE and tainted.notice == ""
    created = one(change("aws_iam_role", ["create"], None, ROLE))
    assert created.notice == "" and created.to_dict()["notice"] is None


def test_the_plan_output_prints_the_role_rename_note(capsys, monkeypatch):
    from fastscale.cli.plan_view import print_change_summary
    from fastscale.infra.terraform.runner import TerraformResult

    monkeypatch.setenv("COLUMNS", "200")
    after = {**ROLE, "name": "demo-chat-sagemaker-us-east-1"}
    classification = classify_plan(plan(change("aws_iam_role", ["create", "delete"], ROLE, after, replace_paths=[["name"]])))
    result = TerraformResult("plan", 0, True, added=1, destroyed=1, has_changes=True)
    print_change_summary(result, [{"address": "aws_iam_role.x", "action": "replace"}], classification)
    out = " ".join(capsys.readouterr().out.split())
    assert "Note: the execution role demo-chat-sagemaker is renamed demo-chat-sagemaker-us-east-1" in out


# --------------------------------------------------------------------------------------------- cut-over and re-registration


def _new_config(initial: int) -> dict:
    return change("aws_sagemaker_endpoint_configuration", ["create", "delete"], {"name_prefix": "demo-chat-"},
                  {"name_prefix": "demo-chat-", "production_variants": [{"initial_instance_count": initial}]},
                  {"name": True})


def _endpoint_switch() -> dict:
    return change("aws_sagemaker_endpoint", ["update"], {"name": "demo-chat", "endpoint_config_name": "demo-chat-1"},
                  {"name": "demo-chat"}, {"endpoint_config_name": True})


@pytest.mark.parametrize(("planned", "live", "note"), [
    (3, 3, "cut-over starts at 3 instance(s) (live; instances.initial is 1)"),
    (1, None, "cut-over starts at 1 instance(s) (instances.initial)"),
    (1, 1, "cut-over starts at 1 instance(s) (instances.initial; 1 live)"),
    (4, 9, "cut-over starts at 4 instance(s) (instances.max; 9 live)"),
])
def test_an_endpoint_rollout_says_where_its_cutover_count_comes_from(planned, live, note):
    inputs = {"demo-chat": RolloutInputs(min(max(1, live or 1), 4), "instance", 300.0, initial=1, live=live)}
    found = {c.type: c for c in classify_plan(plan(_new_config(planned), _endpoint_switch()), inputs).changes}
    assert found["aws_sagemaker_endpoint"].notes == (note,)
    assert found["aws_sagemaker_endpoint"].to_dict()["notes"] == [note]


def test_an_adopted_endpoint_s_rollout_reads_its_live_count_and_its_configuration_by_the_stack_s_prefix():
    """Adopted as `legacy-llm`, the endpoint's live count is found under that name, while the configurations the
    stack creates for it keep `<project>-<name>-` (`demo-chat-`)."""
    data = single_model_config().model_dump(mode="json", exclude_defaults=True)
    data["endpoints"][0]["adopted"] = {"endpoint": "legacy-llm", "variant": "primary"}
    stack = resolve(parse_config(data))
    inputs = rollout_inputs(stack, live={"legacy-llm": 3, "demo-chat": 2})
    found = inputs["legacy-llm"]
    assert (found.units, found.live, found.initial, found.config_prefix) == (3, 3, 1, "demo-chat-")
    switch = change("aws_sagemaker_endpoint", ["update"], {"name": "legacy-llm", "endpoint_config_name": "legacy-config"},
                    {"name": "legacy-llm"}, {"endpoint_config_name": True})
    classified = {c.type: c for c in classify_plan(plan(_new_config(3), switch), inputs).changes}
    assert classified["aws_sagemaker_endpoint"].notes == ("cut-over starts at 3 instance(s) (live; instances.initial is 1)",)


def test_the_awscc_configuration_is_matched_by_its_name_and_digest():
    config = change("awscc_sagemaker_endpoint_config", ["create", "delete"], None,
                    {"endpoint_config_name": "demo-chat-0123456789ab",
                     "production_variants": [{"initial_instance_count": 2}]})
    other = change("awscc_sagemaker_endpoint_config", ["create", "delete"], None,
                   {"endpoint_config_name": "demo-chat-x-0123456789ab", "production_variants": [{"initial_instance_count": 7}]})
    found = {c.type: c for c in classify_plan(plan(config, _endpoint_switch())).changes}
    assert found["aws_sagemaker_endpoint"].notes == ("cut-over starts at 2 instance(s)",)
    found = {c.type: c for c in classify_plan(plan(other, _endpoint_switch())).changes}
    assert found["aws_sagemaker_endpoint"].notes == ()  # another endpoint's (demo-chat-x) configuration


def test_a_target_replaced_by_its_trigger_is_explained_on_the_endpoint():
    target = change("aws_appautoscaling_target", ["delete", "create"],
                    {"resource_id": "endpoint/demo-chat/variant/AllTraffic"},
                    {"resource_id": "endpoint/demo-chat/variant/AllTraffic"}, reason="replace_by_triggers")
    found = {c.type: c for c in classify_plan(plan(target, _endpoint_switch())).changes}
    assert found["aws_appautoscaling_target"].kind is ChangeKind.REPLACE
    assert "deregistered before the endpoint's update and registered again after it" in found["aws_appautoscaling_target"].reason
    [note] = found["aws_sagemaker_endpoint"].notes
    assert note.startswith("auto scaling paused: the variant's scalable target and policy are deregistered")
    # A target replaced for another reason (a new resource id) says nothing about pausing.
    moved = change("aws_appautoscaling_target", ["delete", "create"], {"resource_id": "endpoint/demo-chat/variant/AllTraffic"},
                   {"resource_id": "endpoint/demo-chat/variant/AllTraffic"}, replace_paths=[["resource_id"]])
    found = {c.type: c for c in classify_plan(plan(moved, _endpoint_switch())).changes}
    assert found["aws_sagemaker_endpoint"].notes == ()


# --------------------------------------------------------------------------------------------- same-name replacement

MODEL = {"name": "demo-chat-aaaa1111", "vpc_config": []}


@pytest.mark.parametrize(("actions", "after", "collides"), [
    (["create", "delete"], {**MODEL, "vpc_config": [{"subnets": ["s"]}]}, "demo-chat-aaaa1111"),  # new one first
    (["delete", "create"], {**MODEL, "vpc_config": [{"subnets": ["s"]}]}, None),  # old one gone first
    (["create", "delete"], {**MODEL, "name": "demo-chat-bbbb2222"}, None),  # renamed: no clash
    (["create", "delete"], {"vpc_config": []}, None),  # name known only after apply
])
def test_a_replacement_created_under_the_name_its_original_holds_is_a_collision(actions, after, collides):
    found = one(change("aws_sagemaker_model", actions, MODEL, after, replace_paths=[["vpc_config"]]))
    assert found.kind is ChangeKind.REPLACE and found.collides_as == collides
    assert found.to_dict()["name_collision"] == collides
    classification = classify_plan(plan(change("aws_sagemaker_model", actions, MODEL, after, replace_paths=[["vpc_config"]])))
    assert [c.address for c in classification.name_collisions] == (["aws_sagemaker_model.x"] if collides else [])


def test_an_endpoint_configuration_under_a_name_prefix_never_collides():
    before = {"name": "demo-chat-2026", "name_prefix": "demo-chat-"}
    found = one(change("aws_sagemaker_endpoint_configuration", ["create", "delete"], before,
                       {"name_prefix": "demo-chat-"}, {"name": True}, replace_paths=[["production_variants"]]))
    assert found.collides_as is None
