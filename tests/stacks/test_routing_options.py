"""Routing strategies and the inference AMI in the synthesized endpoint configuration."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import BASE_CONFIG
from tests.stacks.conftest import component_config

PREFIX = {"prefix_length": 4096, "concurrency_threshold": 8}


def test_prefix_aware_routing_is_awscc_s_configuration_with_its_settings(synth_dict):
    data = component_config()
    data["endpoints"][0].update(routing="prefix_aware", prefix_routing=PREFIX)
    out = synth_dict(data)
    assert out.of_type("aws_sagemaker_endpoint_configuration") == {}
    variant = out.one("awscc_sagemaker_endpoint_config")["production_variants"][0]
    assert variant["routing_config"] == {"routing_strategy": "PREFIX_AWARE", "prefix_aware_routing_config": PREFIX}


@pytest.mark.parametrize("config", ["single", "components"])
def test_kv_aware_routing_is_awscc_s_configuration_without_prefix_settings(synth_dict, config):
    data = copy.deepcopy(BASE_CONFIG) if config == "single" else component_config()
    data["endpoints"][0]["routing"] = "kv_aware"
    variant = synth_dict(data).one("awscc_sagemaker_endpoint_config")["production_variants"][0]
    assert variant["routing_config"] == {"routing_strategy": "KV_AWARE"}


def test_least_outstanding_requests_stays_on_the_aws_configuration(synth_dict):
    out = synth_dict(copy.deepcopy(BASE_CONFIG))
    assert out.of_type("awscc_sagemaker_endpoint_config") == {}
    variant = out.one("aws_sagemaker_endpoint_configuration")["production_variants"][0]
    assert variant["routing_config"] == [{"routing_strategy": "LEAST_OUTSTANDING_REQUESTS"}]
    assert "inference_ami_version" not in variant  # unset: SageMaker's default for the type


def test_the_inference_ami_version_reaches_either_configuration(synth_dict):
    data = copy.deepcopy(BASE_CONFIG)
    data["endpoints"][0]["inference_ami_version"] = "al2-ami-sagemaker-inference-gpu-3-1"
    variant = synth_dict(data).one("aws_sagemaker_endpoint_configuration")["production_variants"][0]
    assert variant["inference_ami_version"] == "al2-ami-sagemaker-inference-gpu-3-1"
    data["endpoints"][0]["routing"] = "kv_aware"
    variant = synth_dict(data).one("awscc_sagemaker_endpoint_config")["production_variants"][0]
    assert variant["inference_ami_version"] == "al2-ami-sagemaker-inference-gpu-3-1"


@pytest.mark.parametrize("setting", [{"routing": "kv_aware"}, {"capacity": {"provision_timeout": 600}},
                                     {"scale_in": {"strategy": "IDLE_RELEASE"}}])
def test_an_awscc_configuration_alone_brings_the_awscc_provider(synth_dict, setting):
    """A single-model endpoint whose one awscc resource is its configuration still gets the awscc provider,
    in the config's region and with the config's version constraint."""
    data = copy.deepcopy(BASE_CONFIG)
    data["endpoints"][0].update(setting)
    doc = synth_dict(data).doc
    assert "awscc_sagemaker_endpoint_config" in doc["resource"]
    assert doc["terraform"]["required_providers"]["awscc"]["source"] == "hashicorp/awscc"
    assert doc["provider"]["awscc"] == [{"region": "us-east-1"}]
