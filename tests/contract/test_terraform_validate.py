"""`terraform validate` of the aws part of every synthesized example, offline, against a provider mirror.

The schema contract tests compare attribute names and shapes with the committed provider schemas; this
runs the real Terraform on the real JSON: references, meta-arguments, interpolation, the data source.
There is no registry access here, so it needs a filesystem mirror holding hashicorp/aws (one with
aws 5.100.0 sits on the CI machines; see tests/tf_mirror.py). The awscc part cannot be installed offline and
is cut out first: its resources, its provider, and every reference to it (a reference becomes a plain
string, a dependency on it is dropped). The aws constraint (`~> 6.25`) is relaxed to the mirror's version.

Skips, with the reason, where there is no terraform binary or no mirror with hashicorp/aws.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from typing import Any

import pytest

from fastscale.infra.base import aws_facts, catalog
from fastscale.infra.config import load_config, parse_config
from fastscale.infra.project.scaffold import ProjectOptions, model_choices, render_config
from fastscale.stacks.testing.terraform import (
    AWS_PROVIDER,
    ENDPOINT_CONFIGURATION,
    PLACEHOLDER_MODEL,
    STAND_IN,
    aws_part,
    find_aws_mirror,
    literal_stand_ins,
    where_looked,
)
from tests.conftest import EXAMPLES
from tests.stacks.conftest import synth, variant_configs
from tests.tf_mirror import Validation, validate_children

# aws_part: the awscc cut and the 5.x adjustment (an endpoint configuration for inference components has
# `execution_role_arn` and variants without `model_name`, which aws 5.x rejects), shared with users' tests.

TERRAFORM = shutil.which("terraform")
MIRROR = find_aws_mirror()
pytestmark = [
    pytest.mark.terraform,
    pytest.mark.skipif(TERRAFORM is None, reason="needs the terraform binary on PATH"),
    pytest.mark.skipif(
        MIRROR is None,
        reason=f"no provider mirror with {AWS_PROVIDER} (looked in {where_looked()}) "
        "and no registry access to download one",
    ),
]


def init_presets() -> dict[str, dict[str, Any]]:
    """What `fastscale init` writes: every model preset, steady and scaling to zero, and the emulator project."""
    import yaml

    out = {}
    for model in model_choices():
        for zero in (False, True):
            text = render_config(ProjectOptions(project="demo-llm", model=model, scale_to_zero=zero))
            out[f"init-{model}{'-zero' if zero else ''}"] = yaml.safe_load(text)
    emulator = render_config(ProjectOptions(project="demo-llm", ci="none", emulator="http://127.0.0.1:5000"))
    out["init-emulator"] = yaml.safe_load(emulator)
    return out


def validate_modules(root, docs: dict[str, dict[str, Any]]) -> Validation:
    assert MIRROR is not None and TERRAFORM is not None
    return validate_children(root, docs, TERRAFORM, MIRROR[0])


def problems_of(diagnostics: list[dict[str, Any]]) -> list[str]:
    return [f"{d['severity']}: {d['summary']}: {d.get('detail', '')} ({d.get('address') or d.get('range', {}).get('filename')})"
            for d in diagnostics]


#: Values of a production variant hashicorp/aws refuses, planted one per copy of a synthesized configuration.
PLANTED = {
    "volume_size_in_gb": 99999,
    "container_startup_health_check_timeout_in_seconds": 5,
    "model_data_download_timeout_in_seconds": 3601,
    "initial_instance_count": 0,
    "inference_ami_version": "al2023-ami-sagemaker-inference-gpu-4-1",
    "instance_type": "ml.g7e.2xlarge",
    "routing_config": [{"routing_strategy": "PREFIX_AWARE"}],
}
#: The module names of the documents built to make the provider fail (or, once, not): beside the stacks.
PLANTED_PREFIX = "planted-"
SKIPPED, TYPES, VALUES = "check-skipped", "check-types", "check-values"


def planted_documents(parts: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each value of PLANTED in a copy of a synthesized configuration whose other values still hold
    references (the cut-over count, the model's name)."""
    doc = json.loads(json.dumps(next(parts[n] for n in ("qwen3-8b", "single-overrides-ami", "emulator")
                                     if ENDPOINT_CONFIGURATION in parts.get(n, {}).get("resource", {}))))
    (rid, _), = doc["resource"][ENDPOINT_CONFIGURATION].items()
    planted = {}
    for attribute, value in PLANTED.items():
        copy = json.loads(json.dumps(doc))
        variant = copy["resource"][ENDPOINT_CONFIGURATION][rid]["production_variants"][0]
        variant.update({attribute: value, "model_name": "${aws_sagemaker_model.m.name}"})
        copy["resource"].setdefault("aws_sagemaker_model", {})["m"] = {
            "name": "m", "execution_role_arn": "arn:aws:iam::123456789012:role/r",
            "primary_container": [{"image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0"}]}
        planted[PLANTED_PREFIX + attribute.replace("_", "-")], _ = literal_stand_ins(copy)
    return planted


def behind_a_reference(parts: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], str]:
    """A value the provider refuses, in a block that also holds a reference; and the configuration's id."""
    doc = json.loads(json.dumps(parts["qwen3-8b"] if ENDPOINT_CONFIGURATION in parts["qwen3-8b"]["resource"]
                                else parts["emulator"]))
    ((rid, body),) = doc["resource"][ENDPOINT_CONFIGURATION].items()
    body["production_variants"][0].update(volume_size_in_gb=99999, model_name="${aws_sagemaker_endpoint.x.name}")
    doc["resource"].setdefault("aws_sagemaker_endpoint", {})["x"] = {"name": "x", "endpoint_config_name": "c"}
    return doc, rid


def catalog_types() -> tuple[dict[str, Any], list[str]]:
    """One endpoint configuration per accelerator type of the catalog, `t<i>` for the i-th type."""
    assert MIRROR is not None
    types = sorted(spec.instance_type for spec in catalog.all_instances())
    doc = {
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": MIRROR[1]}}},
        "resource": {ENDPOINT_CONFIGURATION: {f"t{i}": {"name": f"t{i}", "production_variants": [{
            "model_name": "m", "instance_type": t, "initial_instance_count": 1}]} for i, t in enumerate(types)}},
    }
    return doc, types


def variant_values() -> tuple[dict[str, Any], list[tuple[str, Any, bool]]]:
    """One endpoint configuration (`c<i>`) per value just inside (True) or just outside (False) each enum and
    range fastscale records for the provider."""
    assert MIRROR is not None
    cases = {}
    for attribute, values in aws_facts.AWS_PROVIDER_VARIANT_ENUMS.items():
        accepted = values
        refused = ("PREFIX_AWARE", "KV_AWARE") if attribute == "routing_strategy" else (
            "al2023-ami-sagemaker-inference-gpu-4-1",)
        for ok, group in ((True, accepted), (False, refused)):
            for value in group:
                field = {"routing_config": [{"routing_strategy": value}]} if attribute == "routing_strategy" else {attribute: value}
                cases[(attribute, value, ok)] = field
    for attribute, (low, high) in aws_facts.AWS_PROVIDER_VARIANT_RANGES.items():
        cases[(attribute, low, True)] = {attribute: low}
        cases[(attribute, low - 1, False)] = {attribute: low - 1}
        if high is not None:
            cases[(attribute, high, True)] = {attribute: high}
            cases[(attribute, high + 1, False)] = {attribute: high + 1}
    keys = list(cases)
    doc = {
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": MIRROR[1]}}},
        "resource": {ENDPOINT_CONFIGURATION: {f"c{i}": {"name": f"c{i}", "production_variants": [{
            "model_name": "m", "instance_type": "ml.g6.2xlarge", "initial_instance_count": 1, **cases[k]}]}
            for i, k in enumerate(keys)}},
    }
    return doc, keys


@dataclass
class Validated:
    validation: Validation
    parts: dict[str, dict[str, Any]]  # the stacks' aws parts, by example, variant or init preset
    cut: list[str]
    skipped_id: str  # the endpoint configuration of SKIPPED
    types: list[str]  # the instance types of TYPES, by index
    values: list[tuple[str, Any, bool]]  # the cases of VALUES, by index


@pytest.fixture(scope="module")
def validated(tmp_path_factory) -> Validated:
    """Every example, the variants that reach the optional blocks and every config `fastscale init` writes,
    their references inside blocks given literal stand-ins so the provider checks every value there; beside
    them, in the same run, the documents the tests below build to make the provider refuse values."""
    assert MIRROR is not None
    root = tmp_path_factory.mktemp("tf-validate")
    synthesized = {p.stem: synth(load_config(p), root / "synth" / p.stem).doc for p in EXAMPLES}
    synthesized.update({n: synth(parse_config(d), root / "synth" / n).doc for n, d in variant_configs().items()})
    synthesized.update({n: synth(parse_config(d), root / "synth" / n).doc for n, d in init_presets().items()})
    parts, cut = {}, []
    for name, doc in synthesized.items():
        part, removed = aws_part(doc, MIRROR[1])
        parts[name], _ = literal_stand_ins(part)
        cut += removed
    skipped, skipped_id = behind_a_reference(parts)
    types_doc, types = catalog_types()
    values_doc, values = variant_values()
    checks = {**planted_documents(parts), SKIPPED: skipped, TYPES: types_doc, VALUES: values_doc}
    assert not set(checks) & set(parts)
    return Validated(validate_modules(root, {**parts, **checks}), parts, cut, skipped_id, types, values)


def test_the_aws_part_of_every_example_passes_terraform_validate(validated):
    validation, cut = validated.validation, validated.cut
    stacks = [d for name in validated.parts for d in validation.by_module[name]]
    problems = problems_of(stacks + validation.unattributed)
    assert not [d for d in stacks if d["severity"] == "error"], "\n".join(problems)
    assert stacks == [] and validation.unattributed == [], "\n".join(
        [*problems, f"(a provider block shared in the root: {validation.shared_providers})"])
    # Only the inference-component endpoint configurations needed the 5.x adjustment, and only it.
    touched = {c.rsplit(".", 1)[-1] if "production_variants" not in c else "model_name" for c in cut}
    assert touched <= {"execution_role_arn", "model_name"}, cut


def test_inference_component_endpoint_configurations_are_the_only_aws6_difference(validated):
    parts, cut = validated.parts, validated.cut
    component_configs = {
        f"{ENDPOINT_CONFIGURATION}.{rid}"
        for doc in parts.values()
        for rid, body in doc["resource"].get(ENDPOINT_CONFIGURATION, {}).items()
        if any(v.get("model_name") == PLACEHOLDER_MODEL for v in body.get("production_variants", []))
    }
    if MIRROR is not None and int(MIRROR[1].split(".")[0]) >= 6:
        assert cut == []
    else:
        assert component_configs, "the variants include an inference-component endpoint configuration"
        assert {c.split(".execution_role_arn")[0].split(".production_variants")[0] for c in cut} == component_configs


def test_what_was_validated_is_the_stack_and_not_an_empty_shell(validated):
    parts = validated.parts
    assert {p.stem for p in EXAMPLES} <= set(parts)
    for name, doc in parts.items():
        types = set(doc["resource"])
        assert {"aws_sagemaker_endpoint", "aws_sagemaker_model"} <= types, name
        if "aws_iam_role" in types:  # the trust policy's account comes from the data source
            assert "aws_caller_identity" in doc["data"], name
    for example in EXAMPLES:
        assert "aws_iam_role" in parts[example.stem]["resource"], example.stem
        assert "awscc" not in json.dumps(doc["terraform"]) and not any(t.startswith("awscc_") for t in types)


def test_aws_part_cuts_awscc_references_and_pins_the_mirror_version():
    doc = {
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "~> 6.25"},
                                             "awscc": {"source": "hashicorp/awscc"}},
                      "backend": {"local": {"path": "x"}}},
        "provider": {"aws": [{"region": "us-east-1"}], "awscc": [{"region": "us-east-1"}]},
        "resource": {
            "awscc_sagemaker_inference_component": {"ic": {"endpoint_name": "e"}},
            "aws_appautoscaling_target": {"t": {
                "resource_id": "inference-component/${awscc_sagemaker_inference_component.ic.inference_component_name}",
                "depends_on": ["awscc_sagemaker_inference_component.ic", "aws_sagemaker_endpoint.e"]}},
        },
    }
    part, cut = aws_part(doc, "5.100.0")
    assert part["terraform"] == {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "5.100.0"}}}
    assert part["provider"] == {"aws": [{"region": "us-east-1"}]}
    assert part["resource"] == {"aws_appautoscaling_target": {"t": {
        "resource_id": "inference-component/awscc-removed", "depends_on": ["aws_sagemaker_endpoint.e"]}}}
    assert cut == []


def test_every_value_of_every_variant_reached_the_provider(validated):
    """No reference is left inside a production variant: terraform validate checked each value."""
    parts = validated.parts
    variants = [v for doc in parts.values() for body in doc["resource"].get(ENDPOINT_CONFIGURATION, {}).values()
                for v in body["production_variants"]]
    assert len(variants) >= len(EXAMPLES)
    for variant in variants:
        assert "${" not in json.dumps(variant), variant
    assert {p for p in parts if p.startswith("init-")} >= {f"init-{m}" for m in model_choices()} | {"init-emulator"}


def test_a_planted_out_of_range_variant_value_fails_validation(validated):
    """The check above can fail: each value the provider refuses, planted into a synthesized configuration
    whose other values still hold references (the cut-over count, the model's name), is an error."""
    validation = validated.validation
    planted = {name for name in validation.by_module if name.startswith(PLANTED_PREFIX)}
    assert planted == {PLANTED_PREFIX + attribute.replace("_", "-") for attribute in PLANTED}
    failing = {name for name in planted if validation.errors(name)}
    assert failing == planted, "\n".join(problems_of([d for n in planted for d in validation.by_module[n]]))


def test_without_stand_ins_the_provider_skips_the_block(validated):
    """Why the stand-ins: the same planted value behind a reference in the block goes unchecked."""
    assert validated.validation.errors(SKIPPED) == []
    doc, rid = behind_a_reference(validated.parts)
    standing_in, where = literal_stand_ins(doc)
    assert f"{ENDPOINT_CONFIGURATION}.{rid}.production_variants.0.model_name" in where
    assert standing_in["resource"][ENDPOINT_CONFIGURATION][rid]["production_variants"][0]["model_name"] == STAND_IN


def test_the_instance_types_hashicorp_aws_lacks_are_measured(validated):
    """aws_facts.AWS_PROVIDER_UNKNOWN_INSTANCE_TYPES is what the mirror's provider refuses among the catalog's
    accelerator types, exactly."""
    assert MIRROR is not None and MIRROR[1] == "5.100.0"  # the list is 5.100.0's
    types = validated.types
    refused = {types[int(d["address"].split(".")[-1][1:])] for d in validated.validation.by_module[TYPES]
               if "instance_type" in d["summary"]}
    assert refused == set(aws_facts.AWS_PROVIDER_UNKNOWN_INSTANCE_TYPES)


def test_the_variant_enums_and_ranges_fastscale_records_are_the_providers(validated):
    """aws_facts.AWS_PROVIDER_VARIANT_ENUMS / _RANGES against the mirror's provider: each value just inside
    passes, just outside fails."""
    keys = validated.values
    failed = {keys[int(d["address"].split(".")[-1][1:])] for d in validated.validation.errors(VALUES)}
    assert failed == {k for k in keys if not k[2]}, "\n".join(problems_of(validated.validation.by_module[VALUES]))
