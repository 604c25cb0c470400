import pytest

from fastscale.infra.base import aws_facts


@pytest.mark.parametrize("ami", ["al2-ami-sagemaker-inference-gpu-3-1", "al2023-ami-sagemaker-inference-gpu-4-1"])
def test_a_gpu_ami_on_a_gpu_type_passes(run_rule, single_model, ami):
    single_model["endpoints"][0]["inference_ami_version"] = ami
    assert run_rule("FS105", single_model) == []


def test_the_neuron_ami_on_inferentia_passes_and_on_a_gpu_fails(run_rule, hits, single_model):
    ep = single_model["endpoints"][0]
    ep.update(inference_ami_version="al2-ami-sagemaker-inference-neuron-2", instance_type="ml.inf2.8xlarge")
    assert run_rule("FS105", single_model) == []
    ep["instance_type"] = "ml.g6.2xlarge"
    found = run_rule("FS105", single_model)
    assert hits(found) == [("FS105", "error", "endpoints[0].inference_ami_version")]
    assert "al2-ami-sagemaker-inference-gpu-3-1" in found[0].hint


def test_a_fallback_type_of_another_accelerator_fails(run_rule, hits, single_model):
    ep = single_model["endpoints"][0]
    ep.update(inference_ami_version="al2-ami-sagemaker-inference-gpu-2",
              capacity={"fallback": [{"instance_type": "ml.inf2.8xlarge"}]})
    found = run_rule("FS105", single_model)
    assert hits(found) == [("FS105", "error", "endpoints[0].inference_ami_version")]
    assert "capacity.fallback[0]" in found[0].message


def test_an_unknown_ami_gets_a_suggestion(run_rule, hits, single_model):
    single_model["endpoints"][0]["inference_ami_version"] = "al2-ami-sagemaker-inference-gpu-3"
    found = run_rule("FS105", single_model)
    assert hits(found) == [("FS105", "error", "endpoints[0].inference_ami_version")]
    assert found[0].hint.startswith("did you mean al2-ami-sagemaker-inference-gpu-3-1?")


def test_the_ami_list_is_botocores():
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    assert set(aws_facts.INFERENCE_AMI_ACCELERATORS) == set(model.shape_for("ProductionVariantInferenceAmiVersion").enum)
    assert set(aws_facts.ROUTING_STRATEGIES.values()) == set(model.shape_for("RoutingStrategy").enum)
    prefix = model.shape_for("PrefixAwareRoutingConfig").members
    assert (prefix["PrefixLength"].metadata["min"], prefix["PrefixLength"].metadata["max"]) == aws_facts.PREFIX_LENGTH_RANGE
    threshold = prefix["ConcurrencyThreshold"].metadata
    assert (threshold["min"], threshold["max"]) == aws_facts.CONCURRENCY_THRESHOLD_RANGE
