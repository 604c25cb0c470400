import pytest

from fastscale.infra.base import aws_facts, catalog

AMI = aws_facts.INFERENCE_AMIS

# Per AMI: a type of a family it serves, and one of a GPU or accelerator family it does not.
CASES = [
    ("al2-ami-sagemaker-inference-gpu-2", "ml.g6.2xlarge", "ml.g6e.2xlarge"),
    ("al2-ami-sagemaker-inference-gpu-2-1", "ml.p5.48xlarge", "ml.p5e.48xlarge"),
    ("al2-ami-sagemaker-inference-gpu-3-1", "ml.g6e.2xlarge", "ml.g7e.2xlarge"),
    ("al2023-ami-sagemaker-inference-gpu-4-1", "ml.p6-b200.48xlarge", "ml.p2.xlarge"),
    ("al2-ami-sagemaker-inference-neuron-2", "ml.trn1.2xlarge", "ml.inf1.2xlarge"),
]


def _families(ami):
    return ", ".join(f"ml.{family}.*" for family in AMI[ami].families)


def test_every_ami_has_a_case():
    assert sorted(ami for ami, _, _ in CASES) == sorted(AMI)


@pytest.mark.parametrize(("ami", "allowed", "refused"), CASES)
def test_an_ami_passes_on_a_family_it_serves_and_is_refused_on_another(run_rule, hits, single_model, ami,
                                                                         allowed, refused):
    ep = single_model["endpoints"][0]
    ep.update(inference_ami_version=ami, instance_type=allowed)
    assert run_rule("FS105", single_model) == []
    ep["instance_type"] = refused
    found = run_rule("FS105", single_model)
    assert hits(found) == [("FS105", "error", "endpoints[0].inference_ami_version")]
    message = found[0].message
    family = catalog.get(refused).family
    assert message.startswith(f"{ami} serves the instance families {_families(ami)} ")
    assert f"{refused} (instance_type) is ml.{family}.*" in message


def test_the_message_says_whose_list_it_is(run_rule, single_model):
    ep = single_model["endpoints"][0]
    ep.update(inference_ami_version="al2-ami-sagemaker-inference-gpu-2", instance_type="ml.p5e.48xlarge")
    (found,) = run_rule("FS105", single_model)
    assert "(AWS lists)" in found.message and "AWS does not list the AMI for that family" in found.message
    ep.update(inference_ami_version="al2-ami-sagemaker-inference-gpu-3-1", instance_type="ml.p6-b200.48xlarge")
    (found,) = run_rule("FS105", single_model)
    assert "(fastscale allows" in found.message
    assert "NVIDIA B200 GPUs the AMI's NVIDIA driver does not run" in found.message


def test_the_hint_names_the_amis_that_serve_the_family(run_rule, single_model):
    ep = single_model["endpoints"][0]
    ep.update(inference_ami_version="al2-ami-sagemaker-inference-gpu-3-1", instance_type="ml.g7e.2xlarge")
    (found,) = run_rule("FS105", single_model)
    assert found.hint == ("use one of al2023-ami-sagemaker-inference-gpu-4-1, or leave inference_ami_version "
                          "unset for SageMaker's default")


def test_the_neuron_ami_on_a_gpu_fails_for_its_accelerator(run_rule, hits, single_model):
    ep = single_model["endpoints"][0]
    ep.update(inference_ami_version="al2-ami-sagemaker-inference-neuron-2", instance_type="ml.g6.2xlarge")
    found = run_rule("FS105", single_model)
    assert hits(found) == [("FS105", "error", "endpoints[0].inference_ami_version")]
    assert "with nvidia-gpu accelerators: its instances could not start" in found[0].message
    assert "al2-ami-sagemaker-inference-gpu-3-1" in found[0].hint


def test_no_ami_serves_first_generation_inferentia(run_rule, single_model):
    single_model["endpoints"][0].update(inference_ami_version="al2-ami-sagemaker-inference-neuron-2",
                                        instance_type="ml.inf1.2xlarge")
    (found,) = run_rule("FS105", single_model)
    assert "ml.inf2.*, ml.trn1.*, ml.trn1n.*, ml.trn2.*" in found.message and "ml.inf1.2xlarge" in found.message
    assert found.hint == "leave inference_ami_version unset for SageMaker's default"


def test_a_fallback_type_the_ami_does_not_serve_fails(run_rule, hits, single_model):
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


@pytest.mark.parametrize("ami", ["al2-ami-sagemaker-inference-gpu-2", "al2-ami-sagemaker-inference-gpu-2-1"])
def test_the_driver_535_amis_serve_exactly_the_families_aws_listed(ami):
    assert AMI[ami].families == ("g4dn", "g5", "g6", "p3", "p4d", "p4de", "p5")
    assert AMI[ami].aws_lists_families


def test_the_families_fastscale_chose_follow_the_driver():
    """gpu-3-1 (driver 550) runs no Blackwell GPU, gpu-4-1 (580) does; neither runs the K80 of ml.p2."""
    gpu = {spec.family: spec.accelerator_name for spec in catalog.all_instances() if spec.accelerator_kind == "nvidia-gpu"}
    blackwell = {family for family, name in gpu.items() if "Blackwell" in name or name.split()[-1].startswith(("B", "GB"))}
    assert blackwell == {"g7", "g7e", "p6-b200", "p6-b300", "p6e-gb200"}
    assert set(AMI["al2023-ami-sagemaker-inference-gpu-4-1"].families) == set(gpu) - {"p2"}
    assert set(AMI["al2-ami-sagemaker-inference-gpu-3-1"].families) == set(gpu) - {"p2"} - blackwell


def test_every_family_in_the_table_is_in_the_catalog():
    families = {spec.family: spec.accelerator_kind for spec in catalog.all_instances()}
    for name, ami in AMI.items():
        assert {families.get(f) for f in ami.families} <= set(ami.accelerators), name


def test_the_ami_list_is_botocores():
    import botocore.session

    model = botocore.session.get_session().get_service_model("sagemaker")
    assert set(AMI) == set(model.shape_for("ProductionVariantInferenceAmiVersion").enum)
    assert set(aws_facts.ROUTING_STRATEGIES.values()) == set(model.shape_for("RoutingStrategy").enum)
    prefix = model.shape_for("PrefixAwareRoutingConfig").members
    assert (prefix["PrefixLength"].metadata["min"], prefix["PrefixLength"].metadata["max"]) == aws_facts.PREFIX_LENGTH_RANGE
    threshold = prefix["ConcurrencyThreshold"].metadata
    assert (threshold["min"], threshold["max"]) == aws_facts.CONCURRENCY_THRESHOLD_RANGE
