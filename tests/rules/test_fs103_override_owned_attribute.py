import pytest


@pytest.mark.parametrize(("type_", "path", "value"), [
    ("aws_sagemaker_endpoint", "tags", {"fastscale:project": "other"}),
    ("aws_sagemaker_endpoint", "tags.fastscale:project", "other"),
    ("aws_sagemaker_endpoint", "name", "other"),
    ("aws_sagemaker_endpoint_configuration", "name_prefix", "x-"),
    ("aws_sagemaker_endpoint_configuration", "production_variants.0.variant_name", "v"),
    ("aws_sagemaker_endpoint_configuration", "production_variants.0.initial_instance_count", 3),
    ("aws_sagemaker_model", "execution_role_arn", "arn:aws:iam::123456789012:role/r"),
])
def test_owned_attributes_are_refused(run_rule, hits, single_model, type_, path, value):
    single_model["endpoints"][0]["overrides"] = {type_: {path: value}}
    found = run_rule("FS103", single_model)
    assert [h[:2] for h in hits(found)] == [("FS103", "error")]
    assert found[0].path.endswith(f'["{path}"]') or found[0].path.endswith(f".{path}")
    assert "belongs to fastscale" in found[0].message


def test_replacing_a_block_that_holds_an_owned_attribute_is_refused(run_rule, hits, single_model, components):
    single_model["endpoints"][0]["overrides"] = {"aws_sagemaker_endpoint_configuration": {
        "production_variants.0": {"instance_type": "ml.g6.2xlarge", "initial_instance_count": 1, "variant_name": "x"}}}
    found = run_rule("FS103", single_model)
    assert [h[:2] for h in hits(found)] == [("FS103", "error")]
    assert "replaces production_variants whole" in found[0].message
    comp = components["endpoints"][0]["inference_components"][0]
    comp["overrides"] = {"awscc_sagemaker_inference_component": {"runtime_config": {"copy_count": 3}}}
    found = run_rule("FS103", components)
    assert hits(found) == [("FS103", "error",
                            "endpoints[0].inference_components[0].overrides.awscc_sagemaker_inference_component.runtime_config")]
    assert "auto scaling owns it" in found[0].message


def test_attributes_fastscale_does_not_own_pass(run_rule, single_model):
    single_model["endpoints"][0]["overrides"] = {"aws_sagemaker_endpoint_configuration": {
        "production_variants.0.enable_ssm_access": True, "production_variants.0.instance_type": "ml.g6.4xlarge"}}
    assert run_rule("FS103", single_model) == []


@pytest.mark.parametrize("type_", ["aws_sagemaker_endpoint", "aws_sagemaker_endpoint_configuration", "aws_sagemaker_model"])
def test_the_region_of_any_resource_is_owned(run_rule, hits, single_model, type_):
    """hashicorp/aws 6 places each resource in its own region: moved, status, verify-cleanup and sweep never see it."""
    single_model["endpoints"][0]["overrides"] = {type_: {"region": "eu-west-1"}}
    found = run_rule("FS103", single_model)
    assert hits(found) == [("FS103", "error", f"endpoints[0].overrides.{type_}.region")]
    assert "region" in found[0].message and "set `region` in the config instead" in found[0].message


def test_the_region_is_owned_on_awscc_types_too_though_their_schema_has_none(run_rule, hits, components):
    comp = components["endpoints"][0]["inference_components"][0]
    comp["overrides"] = {"awscc_sagemaker_inference_component": {"region": "eu-west-1"}}
    found = run_rule("FS103", components)
    assert hits(found) == [("FS103", "error",
                            "endpoints[0].inference_components[0].overrides.awscc_sagemaker_inference_component.region")]
    assert run_rule("FS102", components) == []  # owned, not "unknown": the next provider release may have it


@pytest.mark.parametrize(("type_", "value"), [
    ("aws_sagemaker_endpoint_configuration", {"shadow_production_variants.0.model_name": "team-a-model"}),
    ("aws_sagemaker_endpoint_configuration", {"shadow_production_variants": [
        {"variant_name": "shadow", "model_name": "team-a-model", "instance_type": "ml.g6.2xlarge", "initial_instance_count": 1}]}),
])
def test_a_shadow_variants_model_is_owned(run_rule, hits, single_model, type_, value):
    single_model["endpoints"][0]["overrides"] = {type_: value}
    found = run_rule("FS103", single_model)
    assert [h[:2] for h in hits(found)] == [("FS103", "error")]
    assert "shadow variant's model" in found[0].message


def test_a_shadow_variants_model_on_the_awscc_configuration_is_owned(run_rule, hits, single_model):
    ep = single_model["endpoints"][0]
    ep["metrics_publish_frequency"] = 10  # makes the awscc configuration the synthesized one
    ep["overrides"] = {"awscc_sagemaker_endpoint_config": {"shadow_production_variants.0.model_name": "team-a-model"}}
    found = run_rule("FS103", single_model)
    assert [h[:2] for h in hits(found)] == [("FS103", "error")]
    assert "shadow variant's model" in found[0].message
