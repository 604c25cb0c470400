"""Who owns what, read from Terraform's plans: every change of an ownership tag on a live resource (a change of
owner, which `plan` shows and `deploy` refuses from another stack), and what a destroy plan must keep (another
stack's resources, and what they need). Hand-written plan entries; the CLI runs them through real plans."""

from __future__ import annotations

from fastscale.infra.terraform.destroy_plan import deleted_resources, keep_closure, targets
from fastscale.infra.terraform.rollout import OwnershipChange, classify_plan
from tests.test_rollout_plan import change, plan

A = {"fastscale:stack": "team-a", "managed-by": "fastscale", "fastscale:endpoint": "shared"}
B = {"fastscale:stack": "team-b", "managed-by": "fastscale", "fastscale:endpoint": "shared"}


def endpoint(tags: dict | None, *, all_tags: dict | None = None) -> dict:
    out: dict = {"name": "shared", "endpoint_config_name": "shared-1", "tags": tags}
    if all_tags is not None:
        out["tags_all"] = all_tags
    return out


def test_an_imported_endpoint_re_tagged_for_another_stack_is_a_change_of_owner():
    entry = change("aws_sagemaker_endpoint", ["update"], endpoint(A, all_tags=A), endpoint(B), {"tags_all": True})
    [found] = classify_plan(plan(entry)).changes
    assert found.ownership == (OwnershipChange("fastscale:stack", "team-a", "team-b"),)
    assert found.ownership[0].describe() == "fastscale:stack team-a -> team-b"
    doc = classify_plan(plan(entry)).to_dict()
    assert doc["summary"]["ownership"] == [
        {"address": "aws_sagemaker_endpoint.x", "tag": "fastscale:stack", "from": "team-a", "to": "team-b"}]
    assert doc["resources"][0]["ownership"] == [{"tag": "fastscale:stack", "from": "team-a", "to": "team-b"}]
    assert [(c.address, o.before) for c, o in classify_plan(plan(entry)).taken_from("team-b")] == [
        ("aws_sagemaker_endpoint.x", "team-a")]


def test_adopting_an_untagged_resource_is_shown_but_takes_it_from_nobody():
    entry = change("aws_sagemaker_model", ["update"], {"name": "m", "tags": {}}, {"name": "m", "tags": B})
    classification = classify_plan(plan(entry))
    assert {o.tag: (o.before, o.after) for _, o in classification.ownership_changes} == {
        "fastscale:stack": (None, "team-b"), "managed-by": (None, "fastscale")}
    assert classification.taken_from("team-b") == []


def test_awscc_tags_are_a_list_of_key_value_pairs():
    before = {"inference_component_name": "ic", "tags": [{"key": k, "value": v} for k, v in A.items()]}
    after = {**before, "tags": [{"key": k, "value": v} for k, v in B.items()]}
    [found] = classify_plan(plan(change("awscc_sagemaker_inference_component", ["update"], before, after))).changes
    assert found.ownership == (OwnershipChange("fastscale:stack", "team-a", "team-b"),)


def test_no_owner_change_when_tags_stay_are_unknown_or_the_resource_is_new():
    same = change("aws_sagemaker_endpoint", ["update"], {**endpoint(A), "endpoint_config_name": "old"}, endpoint(A))
    unknown = change("aws_sagemaker_endpoint", ["update"], endpoint(A), endpoint(None), {"tags": True, "tags_all": True})
    created = change("aws_sagemaker_endpoint", ["create"], None, endpoint(B))
    assert classify_plan(plan(same, unknown, created)).ownership_changes == []


# --------------------------------------------------------------------------------------------- destroy


def destroy_plan() -> dict:
    """A destroy plan of a single-model stack: role (+ inline policy), model, configuration, endpoint, scaling."""
    def gone(type_: str, name: str, before: dict) -> dict:
        entry = change(type_, ["delete"], before, None)
        entry["address"], entry["name"] = f"{type_}.{name}", name
        return entry

    resources = [
        ("aws_iam_role.role", []),
        ("aws_iam_role_policy.policy", ["aws_iam_role.role"]),
        ("aws_sagemaker_model.model", ["aws_iam_role.role"]),
        ("aws_sagemaker_endpoint_configuration.config", ["aws_iam_role.role", "aws_sagemaker_model.model"]),
        ("aws_sagemaker_endpoint.endpoint", ["aws_iam_role.role", "aws_sagemaker_endpoint_configuration.config",
                                             "aws_sagemaker_model.model"]),
        ("aws_appautoscaling_target.target", ["aws_sagemaker_endpoint.endpoint"]),
        ("aws_appautoscaling_policy.policy", ["aws_appautoscaling_target.target"]),
    ]
    doc = plan(
        gone("aws_iam_role", "role", {"name": "demo-chat-sagemaker-us-east-1", "tags": {"fastscale:stack": "demo"}}),
        gone("aws_iam_role_policy", "policy", {"name": "inline"}),
        gone("aws_sagemaker_model", "model", {"name": "demo-chat-1a2b3c4d", "tags": {"fastscale:stack": "demo"}}),
        gone("aws_sagemaker_endpoint_configuration", "config", {"name": "demo-chat-1", "tags": {"fastscale:stack": "demo"}}),
        gone("aws_sagemaker_endpoint", "endpoint", {"name": "demo-chat", "tags_all": {"fastscale:stack": "team-b"}}),
        gone("aws_appautoscaling_target", "target", {"resource_id": "endpoint/demo-chat/variant/AllTraffic"}),
        gone("aws_appautoscaling_policy", "policy", {"name": "demo-chat-target-tracking"}),
    )
    doc["prior_state"] = {"values": {"root_module": {"resources": [
        {"address": a, "depends_on": d} for a, d in resources]}}}
    return doc


def test_a_destroy_plan_names_each_deleted_resource_its_kind_its_live_owner_and_what_it_needs():
    found = {d.address: d for d in deleted_resources(destroy_plan())}
    model = found["aws_sagemaker_model.model"]
    assert (model.kind, model.name, model.stack, model.depends_on) == ("model", "demo-chat-1a2b3c4d", "demo", ("aws_iam_role.role",))
    assert (found["aws_sagemaker_endpoint.endpoint"].kind, found["aws_sagemaker_endpoint.endpoint"].stack) == ("endpoint", "team-b")
    assert found["aws_iam_role.role"].kind == "iam-role" and found["aws_appautoscaling_policy.policy"].kind is None


def test_a_kept_model_keeps_its_role_and_the_roles_policy_and_the_rest_is_targeted():
    deleted = deleted_resources(destroy_plan())
    kept = keep_closure(deleted, {"aws_sagemaker_model.model": "in use by endpoint team-a"})
    assert kept == {
        "aws_sagemaker_model.model": "in use by endpoint team-a",
        "aws_iam_role.role": "needed by aws_sagemaker_model.model, which is kept",
        "aws_iam_role_policy.policy": "needed by aws_iam_role.role, which is kept",
    }
    assert targets(deleted, kept) == ["aws_sagemaker_endpoint_configuration.config", "aws_sagemaker_endpoint.endpoint",
                                      "aws_appautoscaling_target.target", "aws_appautoscaling_policy.policy"]


def test_a_kept_endpoint_keeps_its_configuration_model_role_and_scaling():
    deleted = deleted_resources(destroy_plan())
    kept = keep_closure(deleted, {"aws_sagemaker_endpoint.endpoint": "tagged fastscale:stack=team-b"})
    assert set(kept) == {"aws_sagemaker_endpoint.endpoint", "aws_sagemaker_endpoint_configuration.config",
                         "aws_sagemaker_model.model", "aws_iam_role.role", "aws_iam_role_policy.policy"}
    # Its scalable target depends on it, so it is not among what it needs: targeted, and so are its policies.
    assert targets(deleted, kept) == ["aws_appautoscaling_target.target", "aws_appautoscaling_policy.policy"]
    scaling = keep_closure(deleted, {"aws_appautoscaling_target.target": "tagged fastscale:stack=team-b"})
    assert "aws_appautoscaling_policy.policy" in scaling and "aws_sagemaker_endpoint.endpoint" in scaling
