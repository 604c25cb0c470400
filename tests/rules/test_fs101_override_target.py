def _override(data, where, overrides):
    where["overrides"] = overrides
    return data


def test_types_the_entry_synthesizes_pass(run_rule, single_model, components):
    ep = single_model["endpoints"][0]
    ep["overrides"] = {"aws_sagemaker_endpoint_configuration": {"production_variants.0.enable_ssm_access": True},
                       "aws_sagemaker_endpoint": {}, "aws_sagemaker_model": {"enable_network_isolation": True}}
    assert run_rule("FS101", single_model) == []
    comp = components["endpoints"][0]["inference_components"][0]
    comp["overrides"] = {"awscc_sagemaker_inference_component": {}, "aws_sagemaker_model": {}}
    assert run_rule("FS101", components) == []


def test_the_other_providers_configuration_is_refused_and_named(run_rule, hits, single_model):
    single_model["endpoints"][0]["overrides"] = {"awscc_sagemaker_endpoint_config": {"production_variants.0.enable_ssm_access": True}}
    found = run_rule("FS101", single_model)
    assert hits(found) == [("FS101", "error", "endpoints[0].overrides.awscc_sagemaker_endpoint_config")]
    assert "aws_sagemaker_endpoint_configuration" in found[0].message
    # With a setting only awscc's configuration has, the endpoint synthesizes awscc's: then the aws type is refused.
    single_model["endpoints"][0]["metrics_publish_frequency"] = 10
    assert run_rule("FS101", single_model) == []
    single_model["endpoints"][0]["overrides"] = {"aws_sagemaker_endpoint_configuration": {}}
    assert hits(run_rule("FS101", single_model)) == [("FS101", "error", "endpoints[0].overrides.aws_sagemaker_endpoint_configuration")]


def test_component_types_belong_to_the_component(run_rule, hits, components):
    components["endpoints"][0]["overrides"] = {"awscc_sagemaker_inference_component": {}, "aws_sagemaker_model": {}}
    components["endpoints"][0]["inference_components"][1]["overrides"] = {"aws_sagemaker_endpoint": {}}
    found = run_rule("FS101", components)
    assert hits(found) == [
        ("FS101", "error", "endpoints[0].overrides.awscc_sagemaker_inference_component"),
        ("FS101", "error", "endpoints[0].overrides.aws_sagemaker_model"),
        ("FS101", "error", "endpoints[0].inference_components[1].overrides.aws_sagemaker_endpoint"),
    ]
    assert "component's `overrides`" in found[1].message


def test_an_unknown_type_gets_a_suggestion(run_rule, hits, single_model):
    single_model["endpoints"][0]["overrides"] = {"aws_sagemaker_endpont": {"x": 1}, "aws_s3_bucket": {}}
    found = run_rule("FS101", single_model)
    assert hits(found) == [("FS101", "error", "endpoints[0].overrides.aws_sagemaker_endpont"),
                           ("FS101", "error", "endpoints[0].overrides.aws_s3_bucket")]
    assert found[0].hint.startswith("did you mean aws_sagemaker_endpoint?")
    assert "aws_sagemaker_endpoint_configuration" in found[1].hint
