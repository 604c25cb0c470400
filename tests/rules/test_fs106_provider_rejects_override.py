import pytest

CONFIG = "aws_sagemaker_endpoint_configuration"


def _override(data, path, value):
    data["endpoints"][0]["overrides"] = {CONFIG: {path: value}}
    return data


@pytest.mark.parametrize(("path", "value", "fix"), [
    ("production_variants.0.volume_size_in_gb", 99999, "set it to 512"),
    ("production_variants.0.volume_size_in_gb", 0, "set it to 1"),
    ("production_variants.0.container_startup_health_check_timeout_in_seconds", 5, "set it to 60"),
    ("production_variants.0.model_data_download_timeout_in_seconds", 3601, "set it to 3600"),
    ("production_variants.0.routing_config.0.routing_strategy", "PREFIX_AWARE", "routing"),
    ("production_variants.0.routing_config", [{"routing_strategy": "KV_AWARE"}], "routing"),
    ("production_variants.0.inference_ami_version", "al2023-ami-sagemaker-inference-gpu-4-1", "inference_ami_version"),
])
def test_a_value_hashicorp_aws_refuses_is_an_error(run_rule, hits, single_model, path, value, fix):
    found = run_rule("FS106", _override(single_model, path, value))
    assert hits(found) == [("FS106", "error", f'endpoints[0].overrides.{CONFIG}["{path}"]')]
    assert fix in found[0].hint


@pytest.mark.parametrize(("path", "value"), [
    ("production_variants.0.volume_size_in_gb", 512),
    ("production_variants.0.volume_size_in_gb", 1),
    ("production_variants.0.container_startup_health_check_timeout_in_seconds", 60),
    ("production_variants.0.model_data_download_timeout_in_seconds", 3600),
    ("production_variants.0.routing_config.0.routing_strategy", "RANDOM"),
    ("production_variants.0.inference_ami_version", "al2-ami-sagemaker-inference-gpu-3-1"),
    ("production_variants.0.enable_ssm_access", True),
])
def test_a_value_hashicorp_aws_accepts_passes(run_rule, single_model, path, value):
    assert run_rule("FS106", _override(single_model, path, value)) == []


def test_awscc_configurations_are_not_this_rules(run_rule, single_model):
    single_model["endpoints"][0]["metrics_publish_frequency"] = 10
    single_model["endpoints"][0]["overrides"] = {
        "awscc_sagemaker_endpoint_config": {"production_variants.0.volume_size_in_gb": 100}}
    assert run_rule("FS106", single_model) == []
