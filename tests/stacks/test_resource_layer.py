"""The resource layer's shortcuts give exactly what the engine would: logical ids and reference tokens
computed in Python, attributes handed to the stack's JSON when it is rendered (never a stale copy)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fastscale.infra.config import load_config
from tests.conftest import EXAMPLES


def _engine_twins(elements, stack_name: str):
    """A real engine element (TerraformResource / TerraformDataSource) at the construct path of each of
    `elements`, inside plain engine constructs for its groups: what the engine itself makes of that path."""
    from fastscale.stacks.engine import (
        App,
        Construct,
        GeneratorMetadata,
        TerraformDataSource,
        TerraformResource,
        TerraformStack,
    )

    stack = TerraformStack(App(), stack_name)
    scopes = {(): stack}
    twins = []
    for element in elements:
        parts = element.path.split("/")[1:]
        for depth in range(1, len(parts)):
            key = tuple(parts[:depth])
            if key not in scopes:
                scopes[key] = Construct(scopes[key[:-1]], key[-1])
        engine_class = TerraformDataSource if element.SECTION == "data" else TerraformResource
        twins.append(engine_class(scopes[tuple(parts[:-1])], parts[-1], terraform_resource_type=element.TYPE,
                                  terraform_generator_metadata=GeneratorMetadata(provider_name=element.PROVIDER)))
    return stack, twins


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_logical_ids_paths_and_tokens_are_the_engines(path):
    from fastscale.infra.model.resolved import resolve
    from fastscale.stacks.engine import TerraformOutput
    from fastscale.stacks.stack import EndpointContent

    stack = resolve(load_config(path))
    placement = stack.state_placement("unused-outdir", Path(path).parent)
    content = EndpointContent(stack, state_path=placement.backend_path if placement else None)
    elements = content.elements
    assert len(content._resources) >= 10
    stack, twins = _engine_twins(elements, content.name)
    for element, twin in zip(elements, twins, strict=True):
        assert (element.logical_id, element.path) == (twin.friendly_unique_id, twin.node.path)
    # A reference written in Python resolves to the same text as the engine's own token.
    (caller,) = [i for i, e in enumerate(elements) if e.SECTION == "data"]
    sample = [(0, "arn"), (1, "arn"), (2, "name"), (caller, "account_id")]
    for n, (i, name) in enumerate(sample):
        TerraformOutput(stack, f"engine_token_{n}", value=twins[i].get_string_attribute(name), static_id=True)
    outputs = stack.to_terraform()["output"]
    for n, (i, name) in enumerate(sample):
        assert outputs[f"engine_token_{n}"]["value"] == elements[i].attr(name)
    assert elements[caller].attr("account_id") == "${data.aws_caller_identity.caller.account_id}"


@pytest.mark.parametrize("ids", [
    ["top"],
    ["a", "b"],
    ["ep", "Default", "x"],
    ["chat", "Resource", "role"],
    ["prod-chat", "chat", "policy"],
    ["with space.and:punct", "y"],
    ["l" * 300],
    ["l" * 150, "m" * 150, "n"],
    ["has/slash", "z"],
])
def test_logical_id_and_path_match_the_engine_for_unusual_paths(ids):
    from fastscale.stacks.resources.base import Group, StackContent
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    content = StackContent("s")
    scope = content
    for part in ids[:-1]:
        scope = Group(scope, part)
    role = IamRole(scope, ids[-1], IamRoleProps(name="r", assume_role_policy="{}"))
    _, (twin,) = _engine_twins([role], "s")
    assert (role.logical_id, role.path) == (twin.friendly_unique_id, twin.node.path)


def test_a_construct_id_is_refused_twice_under_the_same_scope_as_the_engine_does():
    from fastscale.stacks.resources.base import Group, StackContent
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    content = StackContent("s")
    IamRole(content, "role", IamRoleProps(name="a", assume_role_policy="{}"))
    with pytest.raises(ValueError, match="There is already a Construct with name 'role' in s$"):
        IamRole(content, "role", IamRoleProps(name="b", assume_role_policy="{}"))
    group = Group(content, "g")
    IamRole(group, "role", IamRoleProps(name="c", assume_role_policy="{}"))  # another scope: allowed
    with pytest.raises(ValueError, match="in s/g$"):
        Group(group, "role")
    assert [e.props.name for e in content.elements] == ["a", "c"]


def _one_role_stack():
    from fastscale.stacks.engine import App
    from fastscale.stacks.engine_stack import ResourceStack
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
    from fastscale.stacks.engine_stack import ResourceStack
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


def test_a_shared_data_source_is_made_once_per_stack():
    from fastscale.stacks.engine import App
    from fastscale.stacks.engine_stack import ResourceStack
    from fastscale.stacks.resources.base import Group
    from fastscale.stacks.role import deploying_account

    stack = ResourceStack(App(), "s")
    first = deploying_account(Group(stack, "a"))
    second = deploying_account(Group(Group(stack, "b"), "c"))
    assert first == second == "${data.aws_caller_identity.caller.account_id}"
    assert list(stack.to_terraform()["data"]["aws_caller_identity"]) == ["caller"]


def test_meta_arguments_are_written_as_the_engine_writes_them():
    from fastscale.stacks.engine import App, GeneratorMetadata, TerraformResource, TerraformResourceLifecycle
    from fastscale.stacks.engine_stack import ResourceStack
    from fastscale.stacks.resources.base import Lifecycle
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


def test_the_layers_add_override_sets_the_attribute_literally_in_both_writers(tmp_path):

    from fastscale.stacks.app import engine_files
    from fastscale.stacks.engine import App
    from fastscale.stacks.engine_stack import ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    app = App(outdir=str(tmp_path), skip_validation=True)
    stack = ResourceStack(app, "s")
    role = IamRole(stack, "role", IamRoleProps(name="r", assume_role_policy="{}"))
    role.add_override("name", "${other}")
    role.add_override("max_session_duration", 7200)
    body = stack.to_terraform()["resource"]["aws_iam_role"]["role"]
    assert (body["name"], body["max_session_duration"]) == ("$${other}", 7200)
    app.synth()
    assert engine_files(stack.content)[0] == (tmp_path / "stacks" / "s" / "cdk.tf.json").read_text()
