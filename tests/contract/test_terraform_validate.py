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
import subprocess
from typing import Any

import pytest

from fastscale.infra.config import load_config, parse_config
from fastscale.stacks.testing.terraform import (
    AWS_PROVIDER,
    ENDPOINT_CONFIGURATION,
    PLACEHOLDER_MODEL,
    aws_part,
    find_aws_mirror,
    offline_env,
    where_looked,
)
from tests.conftest import EXAMPLES
from tests.stacks.conftest import synth, variant_configs

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


@pytest.fixture(scope="module")
def validated(tmp_path_factory) -> tuple[dict[str, Any], dict[str, dict[str, Any]], list[str]]:
    """Every example (and the variants that reach the optional blocks) as one child module each of a
    single root module: one `init` and one `validate` for all of them."""
    assert MIRROR is not None
    mirror, version = MIRROR
    root = tmp_path_factory.mktemp("tf-validate")
    synthesized = {p.stem: synth(load_config(p), root / "synth" / p.stem).doc for p in EXAMPLES}
    synthesized.update({n: synth(parse_config(d), root / "synth" / n).doc for n, d in variant_configs().items()})
    module_root = root / "validate"
    parts, cut = {}, []
    for name, doc in synthesized.items():
        parts[name], removed = aws_part(doc, version)
        cut += removed
        (module_root / name).mkdir(parents=True)
        (module_root / name / "main.tf.json").write_text(json.dumps(parts[name], indent=1))
    calls = {name.replace("-", "_"): {"source": f"./{name}"} for name in parts}
    (module_root / "main.tf.json").write_text(json.dumps({"module": calls}, indent=1))
    env = offline_env(root, mirror)
    init = subprocess.run([TERRAFORM, "init", "-backend=false", "-input=false", "-no-color"], cwd=module_root,
                          env=env, capture_output=True, text=True, timeout=300)
    assert init.returncode == 0, init.stdout + init.stderr
    run = subprocess.run([TERRAFORM, "validate", "-json", "-no-color"], cwd=module_root, env=env,
                         capture_output=True, text=True, timeout=300)
    return json.loads(run.stdout), parts, cut


def test_the_aws_part_of_every_example_passes_terraform_validate(validated):
    report, parts, cut = validated
    problems = [f"{d['severity']}: {d['summary']}: {d.get('detail', '')} ({d.get('range', {}).get('filename')})"
                for d in report["diagnostics"]]
    assert report["valid"] is True and report["error_count"] == 0, "\n".join(problems)
    assert report["warning_count"] == 0, "\n".join(problems)
    # Only the inference-component endpoint configurations needed the 5.x adjustment, and only it.
    touched = {c.rsplit(".", 1)[-1] if "production_variants" not in c else "model_name" for c in cut}
    assert touched <= {"execution_role_arn", "model_name"}, cut


def test_inference_component_endpoint_configurations_are_the_only_aws6_difference(validated):
    _, parts, cut = validated
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
    _, parts, _ = validated
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
