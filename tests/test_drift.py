"""Drift sorted out: what feeds the plan (a value the plan sets back, or one Terraform lists as relevant) apart from
provider normalisation and values the config does not set, on resource_drift entries shaped as Terraform 1.11
writes them for hashicorp/aws 5.100 on fastscale's emulator."""

from __future__ import annotations

import json

from fastscale.infra.base.value_diff import MISSING, differences, value_at
from fastscale.infra.terraform.drift import read_drift

ALARM = {"alarm_name": "demo-chat-errors", "threshold": 1, "alarm_actions": None, "ok_actions": None,
         "insufficient_data_actions": None, "dimensions": None, "tags": None, "metric_query": [],
         "treat_missing_data": "missing", "evaluate_low_sample_count_percentiles": ""}
#: What the provider reads back on every refresh of that alarm: unset lists and maps as empty ones.
ALARM_READ_BACK = {**ALARM, "alarm_actions": [], "ok_actions": [], "insufficient_data_actions": [], "dimensions": {},
                   "tags": {}}
POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                   "Principal": {"Service": "sagemaker.amazonaws.com"}}]}
ROLE = {"name": "demo-chat-sagemaker", "assume_role_policy": json.dumps(POLICY), "description": "",
        "inline_policy": [], "managed_policy_arns": None}


def drift(address: str, before: dict, after: dict) -> dict:
    return {"address": address, "mode": "managed", "type": address.split(".")[0],
            "change": {"actions": ["update"], "before": before, "after": after}}


def change(address: str, actions: list[str], before: dict, after: dict) -> dict:
    return {"address": address, "mode": "managed", "type": address.split(".")[0],
            "change": {"actions": actions, "before": before, "after": after, "after_unknown": {}}}


def test_what_the_provider_only_reads_back_in_another_form_is_normalisation():
    reformatted = {**ROLE, "assume_role_policy": json.dumps(POLICY, indent=2, sort_keys=True),
                   "inline_policy": [{"name": "", "policy": ""}], "managed_policy_arns": []}
    plan = {"resource_drift": [drift("aws_cloudwatch_metric_alarm.errors", ALARM, ALARM_READ_BACK),
                               drift("aws_iam_role.role", ROLE, reformatted)],
            "resource_changes": [change("aws_cloudwatch_metric_alarm.errors", ["no-op"], ALARM_READ_BACK, ALARM_READ_BACK)]}
    found = read_drift(plan)
    assert [(d.address, d.normalisation, d.matters, d.planned) for d in found] == [
        ("aws_cloudwatch_metric_alarm.errors", True, False, False), ("aws_iam_role.role", True, False, False)]


def test_the_roles_inline_policy_attached_by_the_stacks_own_role_policy_does_not_matter():
    # The role reads back the policy the stack's aws_iam_role_policy attached: a value the role's config does
    # not set, which the plan leaves as it is.
    attached = {**ROLE, "inline_policy": [{"name": "sagemaker-serving", "policy": json.dumps(POLICY)}]}
    [role] = read_drift({"resource_drift": [drift("aws_iam_role.role", ROLE, attached)],
                         "resource_changes": [change("aws_iam_role.role", ["no-op"], attached, attached)]})
    assert not role.normalisation and not role.matters
    [value] = role.values
    assert value.change.path == "inline_policy[0]" and value.describe().endswith("(the plan leaves it as it is)")


def test_a_value_changed_by_hand_is_shown_with_what_the_plan_does_about_it():
    by_hand = {**ALARM_READ_BACK, "threshold": 5}
    described = {**ROLE, "description": "edited in the console"}
    plan = {"resource_drift": [drift("aws_cloudwatch_metric_alarm.errors", ALARM, by_hand),
                               drift("aws_iam_role.role", ROLE, described)],
            "resource_changes": [
                change("aws_cloudwatch_metric_alarm.errors", ["update"], by_hand, {**by_hand, "threshold": 1}),
                change("aws_iam_role.role", ["no-op"], described, described)]}
    alarm, role = read_drift(plan, ["aws_cloudwatch_metric_alarm.errors", "aws_iam_role.role"])
    assert alarm.matters and alarm.planned
    [threshold] = alarm.values
    assert threshold.describe() == "threshold: 1 -> 5 (the plan sets it to 1)"
    assert threshold.to_dict() == {"path": "threshold", "before": 1, "after": 5, "planned": 1, "set_back": True,
                                   "relevant": False}
    [description] = role.values
    assert description.describe() == 'description: "" -> "edited in the console" (the plan leaves it as it is)'
    assert not role.planned and not role.matters


def test_a_drifted_value_other_changes_depend_on_matters():
    moved = {**ROLE, "name": "renamed-by-hand"}
    plan = {"resource_drift": [drift("aws_iam_role.role", ROLE, moved)],
            "relevant_attributes": [{"resource": "aws_iam_role.role", "attribute": ["name"]}]}
    [role] = read_drift(plan)
    assert role.matters and not role.planned
    assert role.values[0].describe() == 'name: "demo-chat-sagemaker" -> "renamed-by-hand" (planned changes depend on it)'


def test_only_the_reported_addresses_are_read():
    plan = {"resource_drift": [drift("aws_iam_role.role", ROLE, ROLE), drift("aws_iam_role.other", ROLE, ROLE)]}
    assert [d.address for d in read_drift(plan, ["aws_iam_role.other"])] == ["aws_iam_role.other"]


def test_differences_go_into_json_strings_and_name_the_path():
    before = {"dashboard_body": json.dumps({"widgets": [{"properties": {"title": "p50", "region": "us-east-1"}}]})}
    after = {"dashboard_body": json.dumps({"widgets": [{"properties": {"region": "us-east-1", "title": "p99"}}]},
                                          indent=1)}
    [found] = differences(before, after)
    assert str(found) == 'dashboard_body<json>.widgets[0].properties.title: "p50" -> "p99"'
    assert value_at(after, found.keys) == "p99"
    assert value_at(after, ("dashboard_body", "<json>", "widgets", 3)) is MISSING


def test_differences_count_empties_as_one_only_when_asked():
    assert differences({"a": None, "b": [], "c": ""}, {"b": None, "c": [], "d": {}}, empties_equal=True) == []
    assert [str(c) for c in differences({"a": None}, {"a": []})] == ["a: null -> []"]
    assert [str(c) for c in differences([1], [1, 2])] == ["[1]: (absent) -> 2"]
    assert differences({"n": 1}, {"n": 1.0}) == [] and [str(c) for c in differences({"n": 1}, {"n": True})] == ["n: 1 -> true"]
