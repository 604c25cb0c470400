"""fastscale.stacks.testing's Template, snapshot helper and offline Terraform check, on real synthesized stacks."""

from __future__ import annotations

import copy
import json
import shutil

import pytest
import yaml

from fastscale.infra.config import parse_config
from fastscale.stacks.testing import (
    ENGINE_VERSION,
    ConfigInvalid,
    Match,
    Template,
    TerraformUnavailable,
    assert_valid_terraform,
    find_aws_mirror,
    normalize,
    snapshot_json,
    synth,
)
from tests.conftest import BASE_CONFIG
from tests.stacks.conftest import component_config
from tests.stacks.conftest import synth as synth_to_disk

ENDPOINT_CONFIG = "aws_sagemaker_endpoint_configuration"


@pytest.fixture(scope="module")
def component(tmp_path_factory) -> Template:
    return synth(component_config())


def test_synth_gives_the_document_fastscale_synth_writes(tmp_path):
    # The same bytes as a synthesis into <project>/cdktf.out (what `fastscale synth --out cdktf.out` writes).
    on_disk = synth_to_disk(parse_config(copy.deepcopy(BASE_CONFIG)), tmp_path / "cdktf.out").doc
    assert synth(copy.deepcopy(BASE_CONFIG)).document == on_disk
    path = tmp_path / "fastscale.yaml"
    path.write_text(yaml.safe_dump(BASE_CONFIG))
    from_file = synth(path)
    assert from_file.document == on_disk and from_file.project_dir == tmp_path.resolve()
    assert str(tmp_path) not in json.dumps(from_file.document)


def test_synth_refuses_a_config_with_errors_naming_code_line_and_fix(tmp_path):
    data = copy.deepcopy(BASE_CONFIG)
    data["endpoints"][0]["model"]["model_size_gb"] = 500  # does not fit the GPU memory of ml.g6.2xlarge
    path = tmp_path / "fastscale.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigInvalid) as refused:
        synth(path)
    message = str(refused.value)
    assert message.startswith(f"{path} has ") and "nothing was synthesized" in message
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if "model_size_gb" in text)
    assert "FS007 " in message and f"line {line}, endpoints[0].model.model_size_gb: " in message, message and "(fix: " in message


def test_lookups_by_type_pattern_and_one(component):
    variants = component.resources(ENDPOINT_CONFIG)
    assert len(variants) == 1
    assert component.one(ENDPOINT_CONFIG) is not None
    assert set(component.find("aws_cloudwatch_metric_alarm", {"metric_name": "ModelLatency"})) == {
        name for name, body in component.resources("aws_cloudwatch_metric_alarm").items()
        if body.get("metric_name") == "ModelLatency"}
    assert component.find("aws_sagemaker_model", {"name": "nope"}) == {}
    assert component.resources("aws_no_such_type") == {}
    assert "aws_caller_identity" in component.document.get("data", {}) and component.data_sources("aws_caller_identity")


def test_one_with_several_names_them(component):
    alarms = component.resources("aws_cloudwatch_metric_alarm")
    assert len(alarms) > 1
    with pytest.raises(AssertionError) as several:
        component.one("aws_cloudwatch_metric_alarm")
    assert f"expected one aws_cloudwatch_metric_alarm, found {len(alarms)}: " in str(several.value)
    assert all(name in str(several.value) for name in alarms)


def test_has_resource_properties_passes_and_fails_with_the_closest_resource_and_the_path(component):
    component.has_resource_properties(ENDPOINT_CONFIG, {
        "production_variants": Match.array_with([{"instance_type": "ml.g6.12xlarge"}]),
        "model_name": Match.absent(),
    })
    with pytest.raises(AssertionError) as failed:
        component.has_resource_properties(ENDPOINT_CONFIG, {"production_variants": [{"instance_type": "ml.g5.2xlarge"}],
                                                             "model_name": Match.absent()})
    message = str(failed.value)
    [name] = component.resources(ENDPOINT_CONFIG)
    assert message.startswith(f"no {ENDPOINT_CONFIG} matches the pattern (1 resource(s) of this type).\n"
                              f"The closest is {name}, 1 difference(s):\n"
                              "  /production_variants/0/instance_type: expected 'ml.g5.2xlarge', found 'ml.g6.12xlarge'\n"
                              "Pattern:\n")
    assert '"instance_type": "ml.g5.2xlarge"' in message, "the pattern is shown"
    assert '"model_name": "$absent()"' in message, "matchers in the pattern are shown by name"
    assert f"{name}:\n" in message and '"name_prefix": "demo-chat-"' in message, "the closest resource is shown"


def test_the_closest_resource_is_the_one_with_fewest_differences(component):
    alarms = component.resources("aws_cloudwatch_metric_alarm")
    target_name, target = sorted(alarms.items())[-1]
    pattern = {k: target[k] for k in ("alarm_name", "metric_name", "namespace")} | {"threshold": -1}
    with pytest.raises(AssertionError) as failed:
        component.has_resource_properties("aws_cloudwatch_metric_alarm", pattern)
    assert f"The closest is {target_name}, 1 difference(s):\n  /threshold: expected -1, found " in str(failed.value)


def test_missing_type_lists_the_types_there_are(component):
    with pytest.raises(AssertionError, match=r"the template has no aws_lambda_function resource; its resource types "
                                             r"are: aws_appautoscaling_policy, "):
        component.has_resource_properties("aws_lambda_function", {})


def test_all_resources_properties_names_every_resource_that_differs(component):
    component.all_resources_properties("aws_cloudwatch_metric_alarm", {"alarm_name": Match.string_like_regexp("^demo-")})
    alarms = component.resources("aws_cloudwatch_metric_alarm")
    latency = {n for n, b in alarms.items() if b.get("metric_name") == "ModelLatency"}
    assert latency and len(latency) < len(alarms)
    with pytest.raises(AssertionError) as failed:
        component.all_resources_properties("aws_cloudwatch_metric_alarm", {"metric_name": "ModelLatency"})
    message = str(failed.value)
    assert message.startswith(f"{len(alarms) - len(latency)} of {len(alarms)} aws_cloudwatch_metric_alarm resource(s) "
                              "do not match the pattern:")
    assert all(f"  {n}:" in message for n in set(alarms) - latency)
    assert not any(f"  {n}:" in message for n in latency)
    with pytest.raises(AssertionError, match="has no aws_lambda_function"):
        component.all_resources_properties("aws_lambda_function", {})


def test_counts(component):
    component.resource_count_is("awscc_sagemaker_inference_component", 1)
    with pytest.raises(AssertionError, match=r"expected 2 awscc_sagemaker_inference_component resource\(s\), found 1: "):
        component.resource_count_is("awscc_sagemaker_inference_component", 2)
    component.resource_properties_count_is("aws_cloudwatch_metric_alarm", {"metric_name": "NoSuchMetric"}, 0)
    with pytest.raises(AssertionError, match="matching the pattern, found 0"):
        component.resource_properties_count_is("aws_cloudwatch_metric_alarm", {"metric_name": "NoSuchMetric"}, 1)


def test_from_file_reads_a_synthesized_stack(tmp_path, component):
    path = tmp_path / "cdk.tf.json"
    path.write_text(json.dumps(component.document))
    assert Template.from_file(path).document == component.document


# ------------------------------------------------------------------------------------------------ snapshots


def test_normalized_replaces_the_engine_stamp_and_project_paths_only(component, tmp_path):
    from fastscale.stacks.engine import ENGINE

    assert component.document["//"]["metadata"]["version"] == ENGINE.version
    normalized = component.normalized()
    assert normalized["//"]["metadata"]["version"] == ENGINE_VERSION
    assert component.document["//"]["metadata"]["version"] == ENGINE.version, "the template is not changed"
    normalized["//"]["metadata"]["version"] = ENGINE.version
    assert normalized == component.document, "nothing else changes"
    doc = {"//": {"metadata": {"version": "0.21.0"}}, "a": {"path": f"{tmp_path}/state.tfstate", str(tmp_path): 1}}
    assert normalize(doc, {str(tmp_path): "<project>"}) == {
        "//": {"metadata": {"version": ENGINE_VERSION}}, "a": {"path": "<project>/state.tfstate", "<project>": 1}}
    assert doc["//"]["metadata"]["version"] == "0.21.0"


def test_project_directory_in_the_stack_becomes_a_placeholder(tmp_path):
    data = copy.deepcopy(BASE_CONFIG)
    data["endpoints"][0]["model"]["environment"] = {"WHERE": str(tmp_path / "weights")}
    path = tmp_path / "fastscale.yaml"
    path.write_text(yaml.safe_dump(data))
    template = synth(path)
    assert str(tmp_path.resolve()) in json.dumps(template.document)
    assert str(tmp_path.resolve()) not in json.dumps(template.normalized())
    assert "<project>/weights" in json.dumps(template.normalized())


def test_snapshot_json_is_what_syrupy_writes(component):
    from syrupy.extensions.json import JSONSnapshotExtension

    text = snapshot_json(component.document)
    assert text == JSONSnapshotExtension().serialize(component.normalized())
    doc = {"b": {"z": "ü", "a": [3, {"y": 1, "x": None}]}, "a": True}
    assert snapshot_json(doc) == JSONSnapshotExtension().serialize(doc)


# --------------------------------------------------------------------------------------- terraform validate


needs_terraform = pytest.mark.skipif(
    shutil.which("terraform") is None or find_aws_mirror() is None,
    reason="needs terraform on PATH and a provider mirror with hashicorp/aws (FASTSCALE_TF_MIRROR)")


@pytest.mark.terraform
@needs_terraform
def test_assert_valid_terraform_accepts_a_synthesized_stack(component):
    report = assert_valid_terraform(component)
    assert report.valid and report.removed_types == ["awscc_sagemaker_inference_component"]
    if int(report.provider_version.split(".")[0]) < 6:
        assert any(a.endswith(".execution_role_arn") for a in report.adjusted)


@pytest.mark.terraform
@needs_terraform
def test_assert_valid_terraform_rejects_a_broken_stack_with_terraforms_own_words(component):
    broken = copy.deepcopy(component.document)
    endpoint = next(iter(broken["resource"]["aws_sagemaker_endpoint"].values()))
    endpoint["no_such_argument"] = 1
    with pytest.raises(AssertionError) as rejected:
        assert_valid_terraform(broken)
    message = str(rejected.value)
    assert "terraform validate (hashicorp/aws " in message and "rejects the stack" in message
    [name] = component.resources("aws_sagemaker_endpoint")
    assert ('error: Extraneous JSON object property: No argument or block type is named "no_such_argument". '
            f"(in resource.aws_sagemaker_endpoint.{name})") in message, message


def test_no_mirror_or_no_binary_is_unavailable_and_says_why(component, tmp_path, monkeypatch):
    monkeypatch.setenv("FASTSCALE_TF_MIRROR", str(tmp_path / "empty-mirror"))
    if shutil.which("terraform") or shutil.which("tofu"):
        with pytest.raises(TerraformUnavailable, match=r"no provider mirror holding registry.terraform.io/hashicorp/aws "
                                                       r"\(looked in FASTSCALE_TF_MIRROR.*set FASTSCALE_TF_MIRROR=DIR"):
            assert_valid_terraform(component)
    monkeypatch.setenv("FASTSCALE_TERRAFORM", str(tmp_path / "no-terraform-here"))
    with pytest.raises(TerraformUnavailable, match=r"cannot check the Terraform offline: FASTSCALE_TERRAFORM="):
        assert_valid_terraform(component)
