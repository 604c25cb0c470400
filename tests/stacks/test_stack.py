"""The stack as a whole: providers, backend, outputs, tags, deterministic output."""

from __future__ import annotations

import json
import stat

import pytest

from fastscale.infra.model.naming import TAG_ENDPOINT, TAG_STACK, all_endpoint_names, stack_name
from fastscale.infra.model.resolved import resolve
from fastscale.infra.model.state import StateLayoutError
from tests.contract.schema_check import resource_schema
from tests.stacks.conftest import component_config


def test_provider_pins(examples):
    """aws in every stack; awscc (bounded below its next major version) only where awscc resources exist."""
    for stack in examples.values():
        required = stack.doc["terraform"]["required_providers"]
        assert required["aws"] == {"source": "hashicorp/aws", "version": stack.config.providers.aws}
        if stack.config.endpoint_url:  # the emulator example: every service the stack uses goes to the emulator
            [aws] = stack.doc["provider"]["aws"]
            assert aws["region"] == stack.config.region and aws["endpoints"]
            assert {url for block in aws["endpoints"] for url in block.values()} == {stack.config.endpoint_url}
        else:
            assert stack.doc["provider"]["aws"] == [{"region": stack.config.region}]
        has_awscc = any(rtype.startswith("awscc_") for rtype in stack.doc["resource"])
        assert has_awscc == any(ep.needs_awscc for ep in stack.config.endpoints)
        if has_awscc:
            assert required["awscc"] == {"source": "hashicorp/awscc", "version": ">= 1.106.0, < 2.0"}
            assert stack.doc["provider"]["awscc"] == [{"region": stack.config.region}]
        else:
            assert "awscc" not in required and "awscc" not in stack.doc["provider"]
    assert {"awscc" in s.doc["provider"] for s in examples.values()} == {True, False}  # both kinds are covered


def test_local_state_is_relative_named_with_the_region_and_outside_the_output_directory(examples):
    for stack in examples.values():
        path = stack.doc["terraform"]["backend"]["local"]["path"]
        assert path == f"../../../terraform.{stack_name(stack.config)}.{stack.config.region}.tfstate"
        # resolved from the stack directory, Terraform finds it in the project root, next to the output directory
        assert (stack.result.stack_dir / path).resolve().parent == stack.result.outdir.resolve().parent


def test_configured_local_state_path(synth_dict):
    data = component_config()
    data["state"] = {"backend": "local", "path": "state/demo.tfstate"}
    assert synth_dict(data).doc["terraform"]["backend"]["local"]["path"] == "../../../state/demo.tfstate"
    # outside the project: never handed to Terraform (rule FS095 says so at validate)
    data["state"] = {"backend": "local", "path": "/var/lib/fastscale/demo.tfstate"}
    with pytest.raises(StateLayoutError, match="is an absolute path"):
        synth_dict(data)


def test_stack_file_and_directory_are_owner_only(examples):
    for stack in examples.values():
        assert stat.S_IMODE(stack.result.stack_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(stack.result.stack_dir.stat().st_mode) == 0o700


def test_s3_backend(synth_dict):
    data = component_config()
    data["state"] = {"backend": "s3", "bucket": "tf-state", "key": "fastscale/demo.tfstate", "dynamodb_table": "locks"}
    backend = synth_dict(data).doc["terraform"]["backend"]
    assert backend == {
        "s3": {
            "bucket": "tf-state",
            "key": "fastscale/demo.tfstate",
            "region": "us-east-1",
            "encrypt": True,
            "use_lockfile": True,
            "dynamodb_table": "locks",
        }
    }


def test_outputs_name_everything_needed_next(examples):
    stack = examples["multi-model"]
    (output,) = stack.doc["output"].values()
    value = output["value"]
    assert value["endpoint_name"].startswith("${aws_sagemaker_endpoint.") and value["endpoint_name"].endswith(".name}")
    assert value["endpoint_arn"].endswith(".arn}")
    assert value["execution_role_arn"].startswith("${aws_iam_role.")
    assert len(value["inference_component_names"]) == 3
    assert len(value["model_names"]) == 3
    assert value["endpoint_config_name"] == stack.one("aws_sagemaker_endpoint")["endpoint_config_name"]


def test_every_taggable_resource_is_tagged(examples):
    for stack in examples.values():
        names = all_endpoint_names(stack.config)
        checked = 0
        for rtype, rid, body in stack.all_resources():
            schema = resource_schema(rtype)
            if schema is None or "tags" not in schema["attributes"]:
                continue
            checked += 1
            tags = body.get("tags")
            assert tags, f"{rtype}.{rid} has no tags"
            as_map = {t["key"]: t["value"] for t in tags} if isinstance(tags, list) else tags
            assert as_map[TAG_STACK] == stack_name(stack.config), f"{rtype}.{rid}"
            for key, value in stack.config.tags.items():
                assert as_map[key] == value, f"{rtype}.{rid} misses the user tag {key}"
            if rtype.startswith(("aws_sagemaker", "awscc_sagemaker", "aws_iam_role")) and rtype != "aws_iam_role_policy":
                assert as_map[TAG_ENDPOINT] in {n.endpoint for n in names}
        assert checked >= 4


def _files(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_synthesis_is_deterministic(tmp_path, examples):
    from fastscale.infra.config import load_config
    from fastscale.stacks.app import synthesize
    from tests.conftest import EXAMPLES

    path = next(p for p in EXAMPLES if p.stem == "multi-model")
    first = synthesize(resolve(load_config(path)), tmp_path / "a" / "out", project_root=tmp_path / "a")
    second = synthesize(resolve(load_config(path)), tmp_path / "b", project_root=tmp_path)
    a, b = _files(first.outdir), _files(second.outdir)
    assert set(a) == {first.stack_file.relative_to(first.outdir), first.outdir.joinpath("manifest.json").relative_to(first.outdir)}
    assert a == b
    # and the session's earlier synthesis of the same file, in the same process, agrees byte for byte
    assert _files(examples["multi-model"].result.outdir) == a
    manifest = json.loads((first.outdir / "manifest.json").read_text())
    assert str(tmp_path) not in json.dumps(manifest) and str(tmp_path) not in a[first.stack_file.relative_to(first.outdir)].decode()


def test_synth_result_counts_resources(examples):
    stack = examples["multi-model"]
    counts = stack.result.resource_counts
    assert counts["awscc_sagemaker_inference_component"] == 3
    assert counts["aws_sagemaker_model"] == 3
    assert counts == {rtype: len(items) for rtype, items in stack.doc["resource"].items()}
    assert stack.result.stack_dir == stack.result.outdir / "stacks" / "assist"
