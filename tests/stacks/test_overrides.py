"""`overrides:` reach cdk.tf.json as ordinary attributes, literally, on the resources of their entry only, and
the real Terraform (hashicorp/aws from the offline mirror) accepts them and rejects a misspelt one."""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from fastscale.stacks.resources.base import OverrideError, apply_override
from fastscale.stacks.testing.terraform import aws_part, find_aws_mirror
from tests.conftest import BASE_CONFIG
from tests.stacks.conftest import component_config
from tests.tf_mirror import validate_children

ENDPOINT_CONFIG = "aws_sagemaker_endpoint_configuration"
HOSTILE = '${file("/etc/hostname")}'


def single(**overrides):
    data = copy.deepcopy(BASE_CONFIG)
    data["endpoints"][0]["overrides"] = overrides
    return data


def test_an_endpoint_override_reaches_the_configuration_as_written(synth_dict):
    out = synth_dict(single(aws_sagemaker_endpoint_configuration={"production_variants.0.enable_ssm_access": True}))
    variant = out.one(ENDPOINT_CONFIG)["production_variants"][0]
    assert variant["enable_ssm_access"] is True
    # Added next to what fastscale writes, which stays.
    assert variant["routing_config"] == [{"routing_strategy": "LEAST_OUTSTANDING_REQUESTS"}]
    assert variant["variant_name"] and variant["instance_type"] == "ml.g6.2xlarge"


def test_override_strings_stay_literal_nested_ones_too(synth_dict, tmp_path):
    out = synth_dict(single(
        aws_sagemaker_model={"primary_container.environment.GREETING": HOSTILE},
        aws_sagemaker_endpoint_configuration={
            "production_variants.0.core_dump_config": {"destination_s3_uri": "s3://dumps/%{ if true }x%{ endif }"},
            "data_capture_config": {"destination_s3_uri": "s3://capture/", "initial_sampling_percentage": 10,
                                    "capture_options": [{"capture_mode": "${var.mode}"}]},
        },
    ))
    text = out.result.stack_file.read_text()
    model = out.one("aws_sagemaker_model")
    assert model["primary_container"]["environment"]["GREETING"] == '$${file("/etc/hostname")}'
    config = out.one(ENDPOINT_CONFIG)
    assert config["production_variants"][0]["core_dump_config"] == {
        "destination_s3_uri": "s3://dumps/%%{ if true }x%%{ endif }"}
    assert config["data_capture_config"]["capture_options"] == [{"capture_mode": "$${var.mode}"}]
    assert HOSTILE not in text.replace("$" + HOSTILE, "")  # only ever escaped
    # The model's other environment is untouched by the override of one key.
    assert model["primary_container"]["image"].startswith("763104351884.dkr.ecr")


def test_replacing_a_list_element_attribute_keeps_the_others(synth_dict):
    out = synth_dict(single(aws_sagemaker_endpoint_configuration={
        "production_variants.0.routing_config.0.routing_strategy": "RANDOM"}))
    assert out.one(ENDPOINT_CONFIG)["production_variants"][0]["routing_config"] == [{"routing_strategy": "RANDOM"}]


def test_component_overrides_reach_only_that_component_and_its_model(synth_dict):
    data = component_config(overrides={
        "awscc_sagemaker_inference_component": {"specification.startup_parameters.model_data_download_timeout_in_seconds": 900},
        "aws_sagemaker_model": {"enable_network_isolation": True},
    })
    other = copy.deepcopy(data["endpoints"][0]["inference_components"][0])
    other.update(name="other", overrides={})
    data["endpoints"][0]["inference_components"].append(other)
    out = synth_dict(data)
    components = {b["inference_component_name"]: b for b in out.of_type("awscc_sagemaker_inference_component").values()}
    assert len(components) == 2
    qwen = next(b for n, b in components.items() if n.endswith("qwen"))
    rest = next(b for n, b in components.items() if n.endswith("other"))
    assert qwen["specification"]["startup_parameters"] == {"model_data_download_timeout_in_seconds": 900}
    assert "startup_parameters" not in rest["specification"]
    isolated = [b["name"] for b in out.of_type("aws_sagemaker_model").values() if b.get("enable_network_isolation")]
    assert len(isolated) == 1 and "qwen" in isolated[0]


def test_an_awscc_configuration_override_renames_the_configuration(synth_dict):
    """awscc's configuration is immutable and named by a digest of its content: an override must change it."""
    def name(overrides):
        data = single(**overrides)
        data["endpoints"][0]["metrics_publish_frequency"] = 10
        return synth_dict(data).one("awscc_sagemaker_endpoint_config")["endpoint_config_name"]

    plain = name({})
    changed = name({"awscc_sagemaker_endpoint_config": {"production_variants.0.enable_ssm_access": True}})
    assert plain != changed
    assert changed == name({"awscc_sagemaker_endpoint_config": {"production_variants.0.enable_ssm_access": True}})


@pytest.mark.parametrize(("path", "expected"), [
    ("a.b", {"a": {"b": 1}, "keep": [{"x": 0}]}),
    ("keep.0.y", {"keep": [{"x": 0, "y": 1}]}),
    ("keep.1.x", {"keep": [{"x": 0}, {"x": 1}]}),  # the next element is created
    ("new.0.z", {"keep": [{"x": 0}], "new": [{"z": 1}]}),
])
def test_apply_override_follows_the_path(path, expected):
    attributes = {"keep": [{"x": 0}]}
    apply_override(attributes, path, 1)
    expected.setdefault("keep", [{"x": 0}])
    assert attributes == expected


def test_apply_override_refuses_a_path_that_does_not_fit_and_never_shares_the_value():
    with pytest.raises(OverrideError, match="past the end"):
        apply_override({"keep": [{"x": 0}]}, "keep.2.x", 1)
    with pytest.raises(OverrideError, match="must be an index"):
        apply_override({"keep": [{"x": 0}]}, "keep.x", 1)
    with pytest.raises(OverrideError, match="single value"):
        apply_override({"keep": 3}, "keep.x", 1)
    value = {"inner": {"a": 1}}
    attributes: dict = {}
    apply_override(attributes, "block", value)
    apply_override(attributes, "block.inner.b", 2)
    assert value == {"inner": {"a": 1}}  # the config's data is never changed through the attributes
    assert attributes == {"block": {"inner": {"a": 1, "b": 2}}}


TERRAFORM = shutil.which("terraform")
MIRROR = find_aws_mirror()


@pytest.mark.terraform
@pytest.mark.skipif(TERRAFORM is None or MIRROR is None, reason="needs terraform and the hashicorp/aws provider mirror")
def test_terraform_validate_accepts_an_override_and_rejects_a_misspelt_one(synth_dict, tmp_path):
    """The override is an ordinary attribute to Terraform (so `plan` shows it); a misspelt one, were it not
    refused by FS102 first (parse_config runs no rules), is what the provider would reject."""
    assert MIRROR is not None and TERRAFORM is not None
    mirror, version = MIRROR
    good = synth_dict(single(aws_sagemaker_endpoint_configuration={"production_variants.0.enable_ssm_access": True},
                             aws_sagemaker_model={"primary_container.environment.GREETING": HOSTILE}))
    bad = synth_dict(single(aws_sagemaker_endpoint_configuration={"production_variants.0.enable_ssm_acess": True}))
    # Both as child modules of one root: one init and one validate, each diagnostic attributed to its module.
    validation = validate_children(tmp_path, {name: aws_part(out.doc, version)[0]
                                              for name, out in {"good": good, "bad": bad}.items()}, TERRAFORM, mirror)
    assert validation.errors("good") == [], validation.by_module["good"]
    assert [d for d in validation.unattributed if d["severity"] == "error"] == [], validation.unattributed
    assert validation.errors("bad") != []
    assert any("enable_ssm_acess" in json.dumps(d) for d in validation.by_module["bad"])


def test_a_model_override_renames_the_model(synth_dict):
    """SageMaker models are replaced, never updated, and created before the old one goes: an override that
    forces a new model must give it a new name, or the two would collide."""
    def names(data):
        return sorted(b["name"] for b in synth_dict(data).of_type("aws_sagemaker_model").values())

    plain = names(single())
    isolated = names(single(aws_sagemaker_model={"enable_network_isolation": True}))
    assert plain != isolated and len(isolated) == 1
    assert names(single(aws_sagemaker_endpoint={"deployment_config.blue_green_update_policy.termination_wait_in_seconds": 30})) == plain
    component = component_config(overrides={"aws_sagemaker_model": {"enable_network_isolation": True}})
    assert names(component) != names(component_config())
