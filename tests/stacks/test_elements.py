"""Elements of a stack are created in the engine many at a time (stacks/elements.py, node/elements): one engine
call for a whole stack, the same construct tree as one call per element, and never a waiting element missing
from what the engine sees."""

from __future__ import annotations

import dataclasses
import json
import tarfile
from pathlib import Path

import pytest

from fastscale.infra.config import load_config
from tests.conftest import ROOT

NODE_SOURCE = ROOT / "node" / "elements"


def _count_engine_calls(monkeypatch):
    """Every call from Python to the engine goes through these functions of jsii (generated code included)."""
    import jsii

    calls: list[str] = []
    for name in ("create", "sinvoke", "invoke", "get", "set"):
        original = getattr(jsii, name)

        def counted(*args, _original=original, _name=name, **kwargs):
            calls.append(f"sinvoke:{args[1]}" if _name == "sinvoke" else _name)
            return _original(*args, **kwargs)

        monkeypatch.setattr(jsii, name, counted)
    return calls


def test_a_whole_stack_is_created_in_one_engine_call(monkeypatch):
    from fastscale.stacks.app import build_app

    calls = _count_engine_calls(monkeypatch)
    _, stack = build_app(load_config(ROOT / "examples" / "multi-model.yaml"), "unused-outdir", ROOT / "examples")
    elements = len(stack._elements)
    assert elements >= 30
    assert calls.count("sinvoke:create") == 1
    # The rest: the app, the stack and its Python side, the providers and the backend; nothing per element.
    assert calls.count("create") <= 8, calls


def test_the_engine_never_sees_an_element_before_one_made_earlier():
    from fastscale.stacks.engine import App, TerraformOutput
    from fastscale.stacks.resources.base import Group, ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    stack = ResourceStack(App(), "s")
    first = IamRole(stack, "first", IamRoleProps(name="a", assume_role_policy="{}"))
    group = Group(stack, "group")
    inner = IamRole(group, "inner", IamRoleProps(name="b", assume_role_policy="{}"))
    # An element made directly in the engine, after them: they are created first, in order.
    TerraformOutput(stack, "plain", value="x")
    last = IamRole(stack, "last", IamRoleProps(name="c", assume_role_policy="{}"))
    # An engine call on a waiting element creates it (and whatever waits before it) first.
    assert last.node.path == "s/last"
    assert [child.node.id for child in stack.node.children] == ["first", "group", "plain", "last"]
    assert inner.node.path == "s/group/inner" and first.node.scope is stack and inner.node.scope is group
    assert inner.friendly_unique_id == inner.logical_id
    assert set(stack.to_terraform()["resource"]["aws_iam_role"]) == {"first", inner.logical_id, "last"}


def test_elements_made_after_the_stack_are_synthesized(tmp_path):
    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import Group, ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    app = App(outdir=str(tmp_path), skip_validation=True)
    stack = ResourceStack(app, "s")
    IamRole(Group(stack, "g"), "role", IamRoleProps(name="r", assume_role_policy="{}"))
    app.synth()  # the app, not the stack, is what Python sends to node here
    doc = json.loads((tmp_path / "stacks" / "s" / "cdk.tf.json").read_text())
    (body,) = doc["resource"]["aws_iam_role"].values()
    assert body["name"] == "r" and body["//"]["metadata"]["path"] == "s/g/role"


def test_a_python_override_of_the_rendering_still_gets_the_attributes(tmp_path):
    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    class Annotated(ResourceStack):
        def to_terraform(self):
            document = super().to_terraform()
            document["locals"] = {"roles": sorted(document["resource"]["aws_iam_role"])}
            return document

    app = App(outdir=str(tmp_path), skip_validation=True)
    stack = Annotated(app, "s")
    role = IamRole(stack, "role", IamRoleProps(name="before", assume_role_policy="{}"))
    role.props = dataclasses.replace(role.props, name="after")
    app.synth()
    doc = json.loads((tmp_path / "stacks" / "s" / "cdk.tf.json").read_text())
    assert doc["resource"]["aws_iam_role"]["role"]["name"] == "after"
    assert doc["locals"] == {"roles": ["role"]}


def test_an_engine_override_of_an_attribute_is_refused_with_its_address():
    """The layer's `add_override` sets attributes in Python (below); the engine's own `addOverride`, reached
    past it, would clash with the attributes the layer hands over, and is refused."""
    from fastscale.stacks.engine import App, TerraformResource
    from fastscale.stacks.resources.base import ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    stack = ResourceStack(App(), "s")
    role = IamRole(stack, "role", IamRoleProps(name="r", assume_role_policy="{}"))
    TerraformResource.add_override(role, "name", "other")
    with pytest.raises(RuntimeError, match=r'aws_iam_role\.role: attributes \["name"\] are also set by the engine'):
        stack.to_terraform()


def test_the_layers_add_override_sets_the_attribute_literally():
    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    stack = ResourceStack(App(), "s")
    role = IamRole(stack, "role", IamRoleProps(name="r", assume_role_policy="{}"))
    role.add_override("name", "${other}")
    role.add_override("max_session_duration", 7200)
    body = stack.to_terraform()["resource"]["aws_iam_role"]["role"]
    assert (body["name"], body["max_session_duration"]) == ("$${other}", 7200)


def test_the_shipped_node_package_is_built_from_the_source_in_the_tree():
    from fastscale.stacks import elements

    tarball = Path(elements.__file__).parent / "_jsii" / elements.ASSEMBLY.filename
    package = json.loads((NODE_SOURCE / "package.json").read_text())
    assert elements.ASSEMBLY.name == package["name"] and elements.ASSEMBLY.version == package["version"]
    assert elements.ASSEMBLY.filename == f"{package['name']}-{package['version']}.tgz"
    with tarfile.open(tarball) as packed:
        def read(name: str) -> bytes:
            member = packed.extractfile(f"package/{name}")
            assert member is not None, name
            return member.read()

        # `make engine-elements` rebuilds it; this fails when the source changed without a rebuild.
        assert read("lib/index.ts") == (NODE_SOURCE / "lib" / "index.ts").read_bytes()
        assert json.loads(read("package.json"))["version"] == package["version"]
        types = json.loads(read(".jsii"))["types"]
    assert set(types) == {"fastscale-elements.ElementBatch", "fastscale-elements.ElementSource"}


def test_an_engine_error_while_creating_waiting_elements_reaches_the_caller():
    from fastscale.stacks.engine import App
    from fastscale.stacks.resources.base import ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    stack = ResourceStack(App(), "s")
    IamRole(stack, "role", IamRoleProps(name="a", assume_role_policy="{}"))
    IamRole(stack, "role", IamRoleProps(name="b", assume_role_policy="{}"))  # waits: no engine call yet
    with pytest.raises(RuntimeError, match="There is already a Construct with name 'role'"):
        stack.to_terraform()
