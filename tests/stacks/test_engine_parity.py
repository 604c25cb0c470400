"""One renderer, two writers: the files `fastscale synth` writes from Python (`stacks.app.engine_files`) are
byte for byte what the engine's `App.synth` writes for the same stack (`stacks.engine_stack`), and the engine's
stack still works with a user's own constructs, overrides, aspects and the engine's `Testing.synth`.

`make test-terrain` runs this file with CDK Terrain as the engine, so both engines are compared."""

from __future__ import annotations

import copy
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fastscale.infra.config import load_config, parse_config
from fastscale.infra.model.resolved import resolve
from tests.conftest import EXAMPLES, ROOT


def _engine_lib():
    from fastscale.stacks.engine import ENGINE

    return importlib.import_module(ENGINE.module)


def _both(config, tmp_path: Path) -> tuple[tuple[str, str], tuple[str, str]]:
    """(stack file, manifest) as the engine writes them and as `engine_files` writes them."""
    from fastscale.stacks.app import build_app, engine_files

    out = tmp_path / "cdktf.out"
    app, stack = build_app(resolve(config), out, tmp_path)
    app.synth()
    engine = ((out / "stacks" / stack.content.name / "cdk.tf.json").read_text(), (out / "manifest.json").read_text())
    return engine, engine_files(stack.content)


def _s3_variant() -> dict:
    data = yaml.safe_load((ROOT / "examples" / "emulator.yaml").read_text())
    data["state"] = {"backend": "s3", "bucket": "state-bucket", "key": "chat/${var.x}/%{if}.tfstate",
                     "dynamodb_table": "locks", "kms_key_id": "alias/state",
                     "endpoint_url": data.get("endpoint_url") or "http://localhost:4566"}
    return data


@pytest.mark.parametrize("path", [*EXAMPLES, "s3-state"], ids=lambda p: getattr(p, "stem", p))
def test_python_writes_the_engines_bytes(path, tmp_path):
    config = parse_config(_s3_variant()) if path == "s3-state" else load_config(path)
    engine, python = _both(config, tmp_path)
    assert python[0] == engine[0]
    assert python[1] == engine[1]
    assert '"overrides": {' in engine[0]  # the stack-level overrides (cut-over variables) are in both


def test_an_adopted_stacks_import_blocks_are_the_same_through_both_writers(tmp_path):
    # Import blocks are rendered in Python (the engine's own `import_from` is not used): the engine's
    # `cdktf synth` output holds them and their metadata exactly as `fastscale synth` writes them.
    from tests.stacks.test_adopted_stack import config

    engine, python = _both(config(), tmp_path)
    assert python[0] == engine[0]
    document = json.loads(engine[0])
    assert len(document["import"]) == 6 and set(document["//"]["metadata"]["imports"]) == {
        "aws_sagemaker_endpoint", "aws_sagemaker_endpoint_configuration", "aws_sagemaker_model",
        "awscc_sagemaker_inference_component", "aws_appautoscaling_target", "aws_appautoscaling_policy"}


def test_unusual_values_are_written_as_the_engine_writes_them(tmp_path):
    """Numbers, key order, escapes and literals that look like the engine's tokens, through both writers."""
    from dataclasses import dataclass
    from typing import Any, ClassVar

    from fastscale.stacks.app import engine_files
    from fastscale.stacks.engine import App
    from fastscale.stacks.engine_stack import ResourceStack
    from fastscale.stacks.resources.base import Group, Output, Resource, StackContent

    @dataclass(frozen=True, kw_only=True)
    class Anything:
        value: Any

    class Thing(Resource[Anything]):
        TYPE: ClassVar[str] = "terraform_data"
        PROVIDER: ClassVar[str] = "terraform"

    content = StackContent("odd")
    value = {
        "floats": [0.1, 2.0, 1e21, 1.5e21, 1e-7, 1.25e-6, 123456789012.5, -0.0, 3.14159, 1e16, 5e-324],
        "ints": [0, -1, 2**40], "flags": [True, False, None], "empty": [[], {}],
        "keys": {"b": 1, "B": 2, "é": 3, "\U0001F600": 4, "\uff5e": 5, "a b": 6, "_": 7},
        "text": ["quote \" backslash \\ tab \t nl \n cr \r bell \x07 del \x7f", "ünï 😀 \u2028",
                 "${TfToken[TOKEN.12]}", "${file(\"/etc/passwd\")}", "%{if true}x%{endif}", "$${kept}"],
    }
    thing = Thing(Group(content, "g/1"), "thing", Anything(value=value))
    thing.add_override("value.text", ["overridden ${x}"])
    Output(content, "out", value={"ref": thing.attr("id"), "literal": "${y}"}, description="d ${z}")
    Output(Group(content, "nested"), "inner", value=1)
    app = App(outdir=str(tmp_path), skip_validation=True)
    ResourceStack(app, content)
    app.synth()
    stack_text, manifest_text = engine_files(content)
    assert stack_text == (tmp_path / "stacks" / "odd" / "cdk.tf.json").read_text()
    assert manifest_text == (tmp_path / "manifest.json").read_text()
    written = json.loads(stack_text)
    assert written["resource"]["terraform_data"][thing.logical_id]["value"]["text"] == ["overridden $${x}"]
    assert written["output"]["out"] == {"description": "d $${z}",
                                        "value": {"literal": "$${y}", "ref": thing.attr("id")}}


def test_fastscale_synth_does_not_load_the_engine(tmp_path):
    code = ("import sys; from fastscale.infra.config import load_config; from fastscale.stacks.app import synthesize; "
            "from fastscale.infra.model.resolved import resolve; "
            f"synthesize(resolve(load_config({str(EXAMPLES[0])!r})), {str(tmp_path / 'out')!r}, {str(tmp_path)!r}); "
            "print(sorted(m for m in ('jsii', 'cdktf', 'cdktn', 'constructs') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "out" / "manifest.json").is_file()


# ------------------------------------------------------------------------------------------------ users' constructs


def _qwen_stack(tmp_path: Path):
    from fastscale.stacks.app import build_app

    app, stack = build_app(resolve(load_config(ROOT / "examples" / "qwen3-8b.yaml")), tmp_path / "cdktf.out", tmp_path)
    return app, stack, stack.endpoints["qwen3"].endpoint


def _user_constructs(stack, endpoint) -> None:
    """What a user adds with the engine's own constructs: a reference to the endpoint's name and ARN, and a
    dependency on it, from an output, a local and a resource."""
    lib = _engine_lib()
    lib.TerraformOutput(stack, "user_endpoint", value=endpoint.attr("name"), depends_on=[endpoint], static_id=True)
    lib.TerraformLocal(stack, "user_arn", endpoint.arn)
    user = lib.TerraformResource(stack, "user_data", terraform_resource_type="terraform_data",
                                 terraform_generator_metadata=lib.TerraformProviderGeneratorMetadata(
                                     provider_name="terraform"),
                                 depends_on=[endpoint])
    user.add_override("input", endpoint.arn)


def _check_user_constructs(document: dict, endpoint) -> None:
    assert document["output"]["user_endpoint"]["value"] == f"${{aws_sagemaker_endpoint.{endpoint.logical_id}.name}}"
    assert document["output"]["user_endpoint"]["depends_on"] == [endpoint.address]
    assert document["locals"]["user_arn"] == f"${{aws_sagemaker_endpoint.{endpoint.logical_id}.arn}}"
    (user,) = document["resource"]["terraform_data"]["user_data"]["depends_on"]
    assert user == endpoint.address == f"aws_sagemaker_endpoint.{endpoint.logical_id}"
    assert document["resource"]["terraform_data"]["user_data"]["input"] == endpoint.arn
    # fastscale's own resources are all still there.
    assert document["resource"]["aws_sagemaker_endpoint"][endpoint.logical_id]["name"] == "chat-prod-qwen3"
    assert document["output"]["endpoint_qwen3"]["value"]["endpoint_arn"] == endpoint.arn


def test_a_users_construct_references_and_depends_on_a_resource_through_the_app(tmp_path):
    app, stack, endpoint = _qwen_stack(tmp_path)
    _user_constructs(stack, endpoint)
    app.synth()
    written = json.loads((tmp_path / "cdktf.out" / "stacks" / "chat-prod" / "cdk.tf.json").read_text())
    _check_user_constructs(written, endpoint)


def test_a_users_construct_references_and_depends_on_a_resource_through_testing_synth(tmp_path):
    _, stack, endpoint = _qwen_stack(tmp_path)
    _user_constructs(stack, endpoint)
    _check_user_constructs(json.loads(_engine_lib().Testing.synth(stack)), endpoint)


def test_a_users_construct_with_the_address_of_a_resource_is_refused(tmp_path):
    from fastscale.stacks.engine_stack import ElementClashError

    _, stack, endpoint = _qwen_stack(tmp_path)
    lib = _engine_lib()
    lib.TerraformResource(stack, endpoint.logical_id, terraform_resource_type="aws_sagemaker_endpoint",
                          terraform_generator_metadata=lib.TerraformProviderGeneratorMetadata(provider_name="aws"))
    with pytest.raises(ElementClashError, match=rf"chat-prod/{endpoint.logical_id} has the address of "
                                                r"fastscale's chat-prod/qwen3/endpoint"):
        stack.to_terraform()


def test_stack_overrides_of_a_user_survive_in_both_renderings(tmp_path):
    app, stack, endpoint = _qwen_stack(tmp_path)
    (variable,) = stack.to_terraform()["variable"]
    stack.add_override(f"resource.aws_sagemaker_endpoint.{endpoint.logical_id}.tags.owner", "team-a")
    stack.add_override(f"variable.{variable}.default", 3)
    stack.add_override("terraform.required_version", ">= 1.10")
    endpoint.add_override("tags.extra", "x")  # the resource's own override, under the user's stack override
    for document in (stack.to_terraform(), json.loads(_engine_lib().Testing.synth(stack))):
        tags = document["resource"]["aws_sagemaker_endpoint"][endpoint.logical_id]["tags"]
        assert tags["owner"] == "team-a" and tags["extra"] == "x" and tags["managed-by"] == "fastscale"
        assert document["variable"][variable]["default"] == 3
        assert document["terraform"]["required_version"] == ">= 1.10"
        assert document["terraform"]["required_providers"]["aws"]["source"] == "hashicorp/aws"
    app.synth()
    written = json.loads((tmp_path / "cdktf.out" / "stacks" / "chat-prod" / "cdk.tf.json").read_text())
    assert written["resource"]["aws_sagemaker_endpoint"][endpoint.logical_id]["tags"]["owner"] == "team-a"
    assert written["variable"][variable]["default"] == 3


def test_an_aspect_sees_the_engines_constructs_and_can_change_a_resource_through_the_stack(tmp_path):
    lib = _engine_lib()
    app, stack, endpoint = _qwen_stack(tmp_path)
    seen: list[str] = []

    @__import__("jsii").implements(lib.IAspect)
    class Tagger:
        def visit(self, node):
            seen.append(node.node.path)
            if isinstance(node, lib.TerraformStack):
                node.add_override(f"resource.aws_sagemaker_endpoint.{endpoint.logical_id}.tags.aspect", "yes")

    lib.Aspects.of(stack).add(Tagger())
    app.synth()
    written = json.loads((tmp_path / "cdktf.out" / "stacks" / "chat-prod" / "cdk.tf.json").read_text())
    assert written["resource"]["aws_sagemaker_endpoint"][endpoint.logical_id]["tags"]["aspect"] == "yes"
    assert {"chat-prod", "chat-prod/aws", "chat-prod/awscc"} <= set(seen)


def test_props_changed_after_construction_are_rendered_by_both_writers(tmp_path):
    import dataclasses

    from fastscale.stacks.app import engine_files

    app, stack, endpoint = _qwen_stack(tmp_path)
    endpoint.props = dataclasses.replace(endpoint.props, name="renamed")
    before = copy.deepcopy(stack.to_terraform())
    assert before["resource"]["aws_sagemaker_endpoint"][endpoint.logical_id]["name"] == "renamed"
    app.synth()
    assert engine_files(stack.content)[0] == (tmp_path / "cdktf.out" / "stacks" / "chat-prod" / "cdk.tf.json").read_text()


def test_a_stack_override_made_before_the_resource_exists_survives(tmp_path):
    from fastscale.stacks.app import engine_files
    from fastscale.stacks.engine import App
    from fastscale.stacks.engine_stack import ResourceStack
    from fastscale.stacks.resources.iam import IamRole, IamRoleProps

    app = App(outdir=str(tmp_path), skip_validation=True)
    stack = ResourceStack(app, "s")
    stack.add_override("resource.aws_iam_role.role.tags.owner", "team-a")  # before fastscale's role is made
    IamRole(stack, "role", IamRoleProps(name="r", assume_role_policy="{}", tags={"managed-by": "fastscale"}))
    app.synth()
    written = json.loads((tmp_path / "stacks" / "s" / "cdk.tf.json").read_text())
    assert written["resource"]["aws_iam_role"]["role"]["tags"] == {"managed-by": "fastscale", "owner": "team-a"}
    assert written["resource"]["aws_iam_role"]["role"]["name"] == "r"
    # The Python writer knows nothing of the engine stack's own overrides: they are the engine's to apply.
    assert "owner" not in engine_files(stack.content)[0]
