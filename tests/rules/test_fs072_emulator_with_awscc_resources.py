URL = "http://localhost:4566"


def test_single_model_endpoint_against_an_emulator_passes(run_rule, single_model):
    single_model["endpoint_url"] = URL
    assert run_rule("FS072", single_model) == []


def test_components_without_an_emulator_are_not_checked(run_rule, components):
    assert run_rule("FS072", components) == []


def test_inference_components_against_an_emulator_are_refused(run_rule, components):
    components["endpoint_url"] = URL
    [finding] = run_rule("FS072", components)
    assert finding.path == "endpoints[0].inference_components"
    assert "hashicorp/awscc" in finding.message and "real AWS" in finding.message


def test_a_metrics_configuration_against_an_emulator_is_refused(run_rule, single_model):
    single_model.update(endpoint_url=URL)
    single_model["endpoints"][0]["metrics_publish_frequency"] = 10
    [finding] = run_rule("FS072", single_model)
    assert finding.path == "endpoints[0].metrics_publish_frequency"


def test_enhanced_metrics_against_an_emulator_is_refused_at_its_own_field(run_rule, single_model):
    single_model.update(endpoint_url=URL)
    single_model["endpoints"][0]["enhanced_metrics"] = True
    [finding] = run_rule("FS072", single_model)
    assert finding.path == "endpoints[0].enhanced_metrics" and "metrics configuration" in finding.message
    ep = single_model["endpoints"][0]
    ep.pop("enhanced_metrics")
    ep["inference_ami_version"] = "al2023-ami-sagemaker-inference-gpu-4-1"
    [finding] = run_rule("FS072", single_model)
    assert finding.path == "endpoints[0].inference_ami_version" and "list of AMIs lacks" in finding.message


def test_routing_and_capacity_settings_against_an_emulator_are_refused(run_rule, single_model):
    """They make the endpoint configuration awscc's, which would not go to the emulator."""
    single_model.update(endpoint_url=URL)
    ep = single_model["endpoints"][0]
    ep["routing"] = "kv_aware"
    [finding] = run_rule("FS072", single_model)
    assert finding.path == "endpoints[0].routing" and "kv_aware" in finding.message
    ep["routing"] = "least_outstanding_requests"
    ep["capacity"] = {"provision_timeout": 600}
    [finding] = run_rule("FS072", single_model)
    assert finding.path == "endpoints[0].capacity.provision_timeout"
    ep.pop("capacity")
    ep["scale_in"] = {"strategy": "IDLE_RELEASE"}
    [finding] = run_rule("FS072", single_model)
    assert finding.path == "endpoints[0].scale_in"
