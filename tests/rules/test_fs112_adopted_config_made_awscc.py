import pytest


def _adopted(data, **settings):
    ep = data["endpoints"][0]
    ep["adopted"] = {"endpoint": "chat-live", "endpoint_config": "chat-live-config", "model": "chat-live-model"}
    ep.update(settings)
    return data


def test_an_adopted_configuration_on_hashicorp_aws_passes(run_rule, single_model):
    assert run_rule("FS112", _adopted(single_model)) == []


def test_without_adopted_configuration_awscc_settings_pass(run_rule, single_model):
    single_model["endpoints"][0].update(adopted={"endpoint": "chat-live"}, metrics_publish_frequency=10)
    assert run_rule("FS112", single_model) == []


@pytest.mark.parametrize(("settings", "named"), [
    ({"metrics_publish_frequency": 10}, "metrics_publish_frequency"),
    ({"detailed_observability": False}, "detailed_observability"),
    ({"routing": "kv_aware"}, "routing"),
    ({"inference_ami_version": "al2023-ami-sagemaker-inference-gpu-4-1"}, "inference_ami_version"),
    ({"instance_type": "ml.g7e.2xlarge"}, "instance_type"),
    ({"capacity": {"provision_timeout": 600}}, "capacity.provision_timeout"),
])
def test_settings_that_make_the_configuration_awscc_are_refused(run_rule, hits, single_model, settings, named):
    found = run_rule("FS112", _adopted(single_model, **settings))
    assert hits(found) == [("FS112", "error", "endpoints[0].adopted.endpoint_config")]
    assert named in found[0].message and "by ARN" in found[0].message
    assert found[0].hint.startswith("remove adopted.endpoint_config") and f"remove {named}" in found[0].hint
