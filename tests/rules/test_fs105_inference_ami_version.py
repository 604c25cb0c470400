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


@pytest.mark.parametrize("instance_type", ["ml.inf2.8xlarge", "ml.trn1.2xlarge", "ml.trn1n.32xlarge", "ml.trn2.48xlarge"])
def test_the_neuron_ami_passes_on_inferentia2_and_trainium(run_rule, single_model, instance_type):
    single_model["endpoints"][0].update(inference_ami_version="al2-ami-sagemaker-inference-neuron-2",
                                        instance_type=instance_type)
    assert run_rule("FS105", single_model) == []


def test_the_neuron_ami_fails_on_first_generation_inferentia(run_rule, hits, single_model):
    single_model["endpoints"][0].update(inference_ami_version="al2-ami-sagemaker-inference-neuron-2",
                                        instance_type="ml.inf1.2xlarge")
    found = run_rule("FS105", single_model)
    assert hits(found) == [("FS105", "error", "endpoints[0].inference_ami_version")]
    assert "ml.inf2.*" in found[0].message and "ml.inf1.2xlarge" in found[0].message
    assert found[0].hint == "leave inference_ami_version unset for SageMaker's default"  # no AMI is listed for inf1


@pytest.mark.parametrize("ami", ["al2-ami-sagemaker-inference-gpu-2", "al2-ami-sagemaker-inference-gpu-2-1"])
@pytest.mark.parametrize("instance_type", ["ml.g4dn.xlarge", "ml.g5.2xlarge", "ml.g6.2xlarge", "ml.p4d.24xlarge",
                                           "ml.p5.48xlarge"])
def test_the_driver_535_amis_pass_on_the_families_aws_lists(run_rule, single_model, ami, instance_type):
    single_model["endpoints"][0].update(inference_ami_version=ami, instance_type=instance_type)
    assert run_rule("FS105", single_model) == []


@pytest.mark.parametrize("instance_type", ["ml.p5e.48xlarge", "ml.g7e.2xlarge", "ml.p6-b200.48xlarge"])
def test_the_driver_535_amis_fail_on_families_aws_does_not_list(run_rule, hits, single_model, instance_type):
    single_model["endpoints"][0].update(inference_ami_version="al2-ami-sagemaker-inference-gpu-2",
                                        instance_type=instance_type)
    found = run_rule("FS105", single_model)
    assert hits(found) == [("FS105", "error", "endpoints[0].inference_ami_version")]
    assert "ml.g4dn.*, ml.g5.*, ml.g6.*, ml.p3.*, ml.p4d.*, ml.p4de.*, ml.p5.*" in found[0].message
    # the AMIs whose families AWS does not list stay as suggestions; the other 535 AMI does not
    assert "al2-ami-sagemaker-inference-gpu-3-1" in found[0].hint
    assert "gpu-2-1" not in found[0].hint


def test_every_family_aws_lists_is_in_the_catalog():
    from fastscale.infra.base import catalog

    families = {spec.family for spec in catalog.all_instances()}
    for ami, listed in aws_facts.INFERENCE_AMI_FAMILIES.items():
        assert set(listed or ()) <= families, ami


def test_the_ami_list_is_botocores():
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    assert set(aws_facts.INFERENCE_AMI_ACCELERATORS) == set(model.shape_for("ProductionVariantInferenceAmiVersion").enum)
    assert set(aws_facts.INFERENCE_AMI_FAMILIES) == set(aws_facts.INFERENCE_AMI_ACCELERATORS)
    assert set(aws_facts.ROUTING_STRATEGIES.values()) == set(model.shape_for("RoutingStrategy").enum)
    prefix = model.shape_for("PrefixAwareRoutingConfig").members
    assert (prefix["PrefixLength"].metadata["min"], prefix["PrefixLength"].metadata["max"]) == aws_facts.PREFIX_LENGTH_RANGE
    threshold = prefix["ConcurrencyThreshold"].metadata
    assert (threshold["min"], threshold["max"]) == aws_facts.CONCURRENCY_THRESHOLD_RANGE
