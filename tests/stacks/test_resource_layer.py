"""The resource layer's shortcuts give exactly what the engine would: logical ids and reference tokens
computed in Python, attributes handed to the stack's JSON when it is rendered (never a stale copy)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fastscale.infra.config import load_config
from tests.conftest import EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_logical_ids_and_tokens_are_the_engines(path):
    from fastscale.stacks.app import build_app
    from fastscale.stacks.engine import TerraformDataSource, TerraformOutput, TerraformResource

    _, stack = build_app(load_config(path), "unused-outdir", Path(path).parent)
    elements = stack._elements
    assert len(stack._resources) >= 10
    for element in elements:
        assert element.logical_id == element.friendly_unique_id
    # A reference written in Python resolves to the same text as the engine's own token.
    resources = stack._resources
    (caller,) = [e for e in elements if e.SECTION == "data"]
    sample = [(res, "arn") for res in resources[:3]] + [(caller, "account_id")]
    for i, (element, name) in enumerate(sample):
        # The layer refuses the engine's getters (UnresolvedTokenError); the engine's own method still answers.
        engine_class = TerraformDataSource if element.SECTION == "data" else TerraformResource
        token = engine_class.get_string_attribute(element, name)
        TerraformOutput(stack, f"engine_token_{i}", value=token, static_id=True)
    outputs = stack.to_terraform()["output"]
    for i, (element, name) in enumerate(sample):
        assert outputs[f"engine_token_{i}"]["value"] == element.attr(name)
    assert caller.attr("account_id") == "${data.aws_caller_identity.caller.account_id}"
    assert resources[0].arn == f"${{{resources[0].TYPE}.{resources[0].logical_id}.arn}}"


@pytest.mark.parametrize("ids", [
    ["top"],
    ["a", "b"],
    ["ep", "Default", "x"],
    ["chat", "Resource", "role"],
    ["prod-chat", "chat", "policy"],
    ["with space.and:punct", "y"],
    ["l" * 300],
    ["l" * 150, "m" * 150, "n"],
])
def test_logical_id_matches_the_engine_for_unusual_paths(ids):
    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import Group, ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    stack = ResourceStack(App(), "s")
    scope = stack
    for part in ids[:-1]:
        scope = Group(scope, part)
    role = IamRole(scope, ids[-1], IamRoleProps(name="r", assume_role_policy="{}"))
    assert role.logical_id == role.friendly_unique_id


def _one_role_stack():
    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    stack = ResourceStack(App(), "s")
    role = IamRole(stack, "role", IamRoleProps(name="before", assume_role_policy="{}", tags={"team": "a"}))
    return stack, role


def test_attributes_are_read_when_the_stack_is_rendered_never_cached():
    stack, role = _one_role_stack()
    first = stack.to_terraform()["resource"]["aws_iam_role"]["role"]
    assert first["name"] == "before" and first["tags"] == {"team": "a"}
    role.props = dataclasses.replace(role.props, name="after")
    role.props.tags["team"] = "b"  # even a change inside the props shows
    second = stack.to_terraform()["resource"]["aws_iam_role"]["role"]
    assert second["name"] == "after" and second["tags"] == {"team": "b"}
    assert second["//"] == first["//"]  # the engine's metadata is kept


def test_synthesis_after_a_change_writes_the_change(tmp_path):
    import json

    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    app = App(outdir=str(tmp_path), skip_validation=True)
    stack = ResourceStack(app, "s")
    role = IamRole(stack, "role", IamRoleProps(name="before", assume_role_policy="{}"))
    app.synth()
    role.props = dataclasses.replace(role.props, name="after")
    app.synth()
    doc = json.loads((tmp_path / "stacks" / "s" / "cdk.tf.json").read_text())
    assert doc["resource"]["aws_iam_role"]["role"]["name"] == "after"


def test_resources_outside_a_resource_stack_are_refused():
    from fastscale.stacks.engine import App, TerraformStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    with pytest.raises(TypeError, match="ResourceStack"):
        IamRole(TerraformStack(App(), "plain"), "role", IamRoleProps(name="r", assume_role_policy="{}"))


def test_the_engines_token_getters_are_refused(tmp_path):
    # A token in the props would be a plain string, so a literal: rendered escaped, never resolved. The layer
    # refuses the getters that make one, naming what to use instead.
    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import ResourceStack, UnresolvedTokenError
    from fastscale.stacks.resources.iam import CallerIdentity, IamRole, IamRoleProps

    stack = ResourceStack(App(outdir=str(tmp_path), skip_validation=True), "s")
    role = IamRole(stack, "role", IamRoleProps(name="r", assume_role_policy="{}"))
    caller = CallerIdentity.of_stack(stack, "caller")
    for getter in ("get_string_attribute", "get_list_attribute", "get_number_attribute", "interpolation_for_attribute"):
        for element in (role, caller):
            with pytest.raises(UnresolvedTokenError, match=r"build references with the resource layer's `attr`"):
                getattr(element, getter)("name")


def test_a_shared_data_source_is_made_once_per_stack():
    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import Group, ResourceStack
    from fastscale.stacks.role import deploying_account

    stack = ResourceStack(App(), "s")
    first = deploying_account(Group(stack, "a"))
    second = deploying_account(Group(Group(stack, "b"), "c"))
    assert first == second == "${data.aws_caller_identity.caller.account_id}"
    assert list(stack.to_terraform()["data"]["aws_caller_identity"]) == ["caller"]


def test_meta_arguments_are_written_as_the_engine_writes_them():
    from fastscale.stacks.engine import App, GeneratorMetadata, TerraformResource, TerraformResourceLifecycle
    from fastscale.stacks.resources.base import Lifecycle, ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRolePolicy, IamRolePolicyProps, IamRoleProps

    ours = ResourceStack(App(), "s")
    role = IamRole(ours, "role", IamRoleProps(name="r", assume_role_policy="{}"))
    IamRolePolicy(ours, "policy", IamRolePolicyProps(name="p", role="r", policy="{}"), depends_on=[role],
                  lifecycle=Lifecycle(create_before_destroy=True, ignore_changes=["policy"]))
    engine = ResourceStack(App(), "s")
    meta = GeneratorMetadata(provider_name="aws")
    their_role = TerraformResource(engine, "role", terraform_resource_type="aws_iam_role", terraform_generator_metadata=meta)
    TerraformResource(engine, "policy", terraform_resource_type="aws_iam_role_policy", terraform_generator_metadata=meta,
                      depends_on=[their_role],
                      lifecycle=TerraformResourceLifecycle(create_before_destroy=True, ignore_changes=["policy"]))
    written = ours.to_terraform()["resource"]["aws_iam_role_policy"]["policy"]
    expected = engine.to_terraform()["resource"]["aws_iam_role_policy"]["policy"]
    assert {k: written[k] for k in ("depends_on", "lifecycle")} == {k: expected[k] for k in ("depends_on", "lifecycle")}
    assert written["depends_on"] == ["aws_iam_role.role"]
