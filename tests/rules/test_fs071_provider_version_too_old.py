import pytest


@pytest.mark.parametrize("aws", ["~> 6.25", ">= 6.21.0", ">= 6.21.0, < 7.0", "= 6.30.1", "~> 6.21.0"])
def test_constraints_at_or_above_every_need_pass(run_rule, components, aws):
    components["providers"] = {"aws": aws}
    assert run_rule("FS071", components) == []


def test_a_single_model_endpoint_runs_on_the_oldest_checked_release(run_rule, single_model):
    single_model["providers"] = {"aws": ">= 5.100.0"}
    assert run_rule("FS071", single_model) == []


def test_inference_components_need_the_release_with_the_execution_role(run_rule, components):
    components["providers"] = {"aws": ">= 5.100.0"}
    [finding] = run_rule("FS071", components)
    assert finding.path == "providers.aws"
    assert "admits hashicorp/aws 5.100.0" in finding.message
    assert "6.21.0 or newer is required for aws_sagemaker_endpoint_configuration.execution_role_arn" in finding.message
    assert finding.hint == 'raise the lower bound, e.g. providers.aws: ">= 6.21.0"'


@pytest.mark.parametrize(("aws", "admitted"), [("< 7.0", "0.0.0"), ("> 5.99", "5.99.1"), ("~> 5.0", "5.0.0")])
def test_constraints_without_a_high_enough_lower_bound_are_errors(run_rule, single_model, aws, admitted):
    single_model["providers"] = {"aws": aws}
    [finding] = run_rule("FS071", single_model)
    assert f"admits hashicorp/aws {admitted}" in finding.message and "5.100.0 or newer" in finding.message


def test_awscc_is_only_checked_when_the_stack_has_awscc_resources(run_rule, single_model, components):
    single_model["providers"] = {"awscc": ">= 1.0"}
    assert run_rule("FS071", single_model) == []
    components["providers"] = {"awscc": ">= 1.0"}
    [finding] = run_rule("FS071", components)
    assert finding.path == "providers.awscc" and "1.106.0 or newer" in finding.message
