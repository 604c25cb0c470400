"""The endpoint construct, read back from the synthesized JSON: components, configurations, models."""

from __future__ import annotations

import re

import pytest

from fastscale.infra.model.naming import all_endpoint_names
from fastscale.stacks.resources.awscc import SagemakerInferenceComponent
from fastscale.stacks.testing import Match
from tests.stacks.conftest import component_config

REF = re.compile(r"^\$\{(?P<type>[a-z0-9_]+)\.(?P<id>[^.}]+)\.(?P<attr>[a-z_]+)\}$")


def ref(value: str) -> tuple[str, str, str]:
    m = REF.match(value)
    assert m, f"{value!r} is not a Terraform reference"
    return m["type"], m["id"], m["attr"]


# --------------------------------------------------------------------------------------------- components


def test_every_component_sets_data_caching_explicitly(examples):
    template = examples["multi-model"].template
    template.resource_count_is("awscc_sagemaker_inference_component", 3)
    template.all_resources_properties("awscc_sagemaker_inference_component", {
        "specification": {"data_cache_config": Match.exact({"enable_caching": True})},
    })


def test_data_caching_off_when_configured(synth_dict):
    synth_dict(component_config(data_cache=False)).template.all_resources_properties(
        "awscc_sagemaker_inference_component",
        {"specification": {"data_cache_config": Match.exact({"enable_caching": False})}},
    )


def test_component_copy_count_is_initial_and_ignored_afterwards(synth_dict):
    stack = synth_dict(component_config(copies={"initial": 2, "min": 0, "max": 4}))
    ic = stack.one("awscc_sagemaker_inference_component")
    assert ic["runtime_config"] == {"copy_count": 2}
    # Auto scaling changes the copy count; Terraform must not set it back on the next apply.
    assert SagemakerInferenceComponent.COPY_COUNT_PATH == "runtime_config.copy_count"
    assert "runtime_config.copy_count" in ic["lifecycle"]["ignore_changes"]


def test_component_references_endpoint_and_its_own_model(examples):
    stack = examples["multi-model"]
    names = all_endpoint_names(stack.config)[0]
    models = stack.of_type("aws_sagemaker_model")
    by_component = {c.name: c for c in names.components}
    for body in stack.of_type("awscc_sagemaker_inference_component").values():
        rtype, rid, attr = ref(body["endpoint_name"])
        assert (rtype, attr) == ("aws_sagemaker_endpoint", "name")
        assert f"aws_sagemaker_endpoint.{rid}" in body["depends_on"]
        mtype, mid, mattr = ref(body["specification"]["model_name"])
        assert (mtype, mattr) == ("aws_sagemaker_model", "name")
        component = by_component[body["inference_component_name"]]
        assert models[mid]["name"] == component.model
        assert models[mid]["primary_container"]["image"] == component.spec.image
        assert body["variant_name"] == names.variant


def test_component_resources_and_timeouts(synth_dict):
    data = component_config(resources={"accelerators": 2, "memory_mb": 4096, "max_memory_mb": 8192, "cpus": 4},
                            model_download_timeout=600)
    data["endpoints"][0]["startup_health_check_timeout"] = 900
    synth_dict(data).template.has_resource_properties("awscc_sagemaker_inference_component", {"specification": {
        "compute_resource_requirements": Match.exact({
            "number_of_accelerator_devices_required": 2,
            "min_memory_required_in_mb": 4096,
            "max_memory_required_in_mb": 8192,
            "number_of_cpu_cores_required": 4,
        }),
        # the component's own value wins, the endpoint's fills the gap
        "startup_parameters": Match.exact({
            "model_data_download_timeout_in_seconds": 600,
            "container_startup_health_check_timeout_in_seconds": 900,
        }),
    }})


# --------------------------------------------------------------------------------------------- configurations


def test_component_endpoint_configuration(synth_dict):
    template = synth_dict(component_config()).template
    template.has_resource_properties("aws_sagemaker_endpoint_configuration", {
        "production_variants": [{
            "model_name": Match.absent(),  # a component endpoint's variant runs no model itself
            "managed_instance_scaling": Match.exact({"status": "ENABLED", "min_instance_count": 1, "max_instance_count": 2}),
            "routing_config": Match.exact([{"routing_strategy": "LEAST_OUTSTANDING_REQUESTS"}]),
        }],
        "execution_role_arn": Match.string_like_regexp(r"^\$\{aws_iam_role\.[^.}]+\.arn\}$"),
        "name_prefix": "demo-chat-",
        "lifecycle": {"create_before_destroy": True},
    })


def test_single_model_configuration(examples):
    stack = examples["inferentia"]
    cfg = stack.one("aws_sagemaker_endpoint_configuration")
    (variant,) = cfg["production_variants"]
    rtype, rid, attr = ref(variant["model_name"])
    assert (rtype, attr) == ("aws_sagemaker_model", "name")
    assert "execution_role_arn" not in cfg and "managed_instance_scaling" not in variant
    ep = stack.config.endpoints[0]
    assert variant["instance_type"] == ep.instance_type
    # The cut-over variable, defaulting to instances.initial, set only at creation (infra.model.cutover).
    assert variant["initial_instance_count"] == "${var.cutover_instances_llama3-neuron}"
    assert stack.doc["variable"]["cutover_instances_llama3-neuron"]["default"] == ep.instances.initial
    assert cfg["lifecycle"]["ignore_changes"] == ["production_variants[0].initial_instance_count"]
    assert variant["volume_size_in_gb"] == ep.volume_size_gb
    assert variant["model_data_download_timeout_in_seconds"] == ep.model_download_timeout
    assert cfg["kms_key_arn"] == ep.kms_key_arn
    assert cfg["name_prefix"] == all_endpoint_names(stack.config)[0].endpoint_config_prefix
    assert cfg["lifecycle"]["create_before_destroy"] is True


def test_random_routing(synth_dict):
    data = component_config()
    data["endpoints"][0]["routing"] = "random"
    synth_dict(data).template.has_resource_properties("aws_sagemaker_endpoint_configuration", {
        "production_variants": [{"routing_config": Match.exact([{"routing_strategy": "RANDOM"}])}],
    })


def test_endpoint_references_its_configuration(examples):
    for stack in examples.values():
        endpoint = stack.one("aws_sagemaker_endpoint")
        rtype, rid, attr = ref(endpoint["endpoint_config_name"])
        assert rid in stack.of_type(rtype)
        assert attr == ("name" if rtype == "aws_sagemaker_endpoint_configuration" else "endpoint_config_name")
        assert endpoint["name"] == all_endpoint_names(stack.config)[0].endpoint


def test_metrics_publish_frequency_uses_awscc_configuration(examples):
    stack = examples["multi-model"]
    assert not stack.of_type("aws_sagemaker_endpoint_configuration")
    cfg = stack.one("awscc_sagemaker_endpoint_config")
    assert cfg["metrics_config"] == {"metric_publish_frequency_in_seconds": 10, "enable_detailed_observability": False}
    (variant,) = cfg["production_variants"]
    assert "model_name" not in variant and ref(cfg["execution_role_arn"])[0] == "aws_iam_role"
    assert variant["routing_config"] == {"routing_strategy": "LEAST_OUTSTANDING_REQUESTS"}
    assert cfg["lifecycle"]["create_before_destroy"] is True
    assert {"key": "managed-by", "value": "fastscale"} in cfg["tags"]


def _awscc_config_name(synth_dict, mutate) -> str:
    data = component_config()
    data["endpoints"][0]["metrics_publish_frequency"] = 10
    mutate(data)
    return synth_dict(data).one("awscc_sagemaker_endpoint_config")["endpoint_config_name"]


def test_awscc_configuration_name_changes_exactly_with_its_content(synth_dict):
    """Without name_prefix the name carries a content digest: new content -> new name (so the endpoint
    switches over), same content -> same name (so an unrelated change never redeploys the endpoint)."""
    base = _awscc_config_name(synth_dict, lambda d: None)
    assert base.startswith("demo-chat-") and len(base) <= 63
    assert _awscc_config_name(synth_dict, lambda d: None) == base

    def more_instances(d):
        d["endpoints"][0]["instances"]["max"] = 3

    def other_alarm_threshold(d):
        d["endpoints"][0]["alarms"] = {"model_latency_ms": 1}

    def more_copies(d):
        d["endpoints"][0]["inference_components"][0]["copies"]["max"] = 8

    assert _awscc_config_name(synth_dict, more_instances) != base
    assert _awscc_config_name(synth_dict, other_alarm_threshold) == base
    assert _awscc_config_name(synth_dict, more_copies) == base


# --------------------------------------------------------------------------------------------- models


@pytest.mark.parametrize(
    ("model_data", "data_type", "compression"),
    [
        ("s3://demo-models/qwen3-8b/", "S3Prefix", "None"),
        ("s3://demo-models/qwen3-8b/model.tar.gz", "S3Object", "Gzip"),
    ],
)
def test_model_data_source(synth_dict, model_data, data_type, compression):
    data = component_config(model_data=model_data)
    model = synth_dict(data).one("aws_sagemaker_model")
    assert model["primary_container"]["model_data_source"] == {
        "s3_data_source": [{"s3_uri": model_data, "s3_data_type": data_type, "compression_type": compression}]
    }


def test_accept_eula_reaches_the_models_s3_data_source(synth_dict):
    data = component_config(model_data="s3://demo-models/llama/", accept_eula=True)
    stack = synth_dict(data)
    [source] = stack.one("aws_sagemaker_model")["primary_container"]["model_data_source"]["s3_data_source"]
    assert source["model_access_config"] == {"accept_eula": True}
    # The component runs that model by name: the acceptance travels with it.
    component = stack.one("awscc_sagemaker_inference_component")
    model_id = next(iter(stack.of_type("aws_sagemaker_model")))
    assert component["specification"]["model_name"] == f"${{aws_sagemaker_model.{model_id}.name}}"


def test_accept_eula_renames_the_model_only_when_set():
    from fastscale.infra.config import parse_config
    from fastscale.infra.model.naming import all_endpoint_names

    def model(**extra):
        return all_endpoint_names(parse_config(component_config(model_data="s3://demo-models/llama/", **extra)))[0]

    assert model().components[0].model == model(accept_eula=False).components[0].model  # live stacks keep their names
    assert model().components[0].model != model(accept_eula=True).components[0].model  # a new model is a new name


def test_models_are_created_before_the_old_ones_are_destroyed(examples):
    for stack in examples.values():
        names = all_endpoint_names(stack.config)[0]
        expected = ({names.model} if names.model else {c.model for c in names.components}) | set(names.pool_models)
        models = stack.of_type("aws_sagemaker_model")
        assert {m["name"] for m in models.values()} == expected
        for model in models.values():
            assert model["lifecycle"]["create_before_destroy"] is True
            assert any(d.startswith("aws_iam_role_policy.") for d in model["depends_on"])


def test_vpc_goes_on_every_model(synth_dict):
    data = component_config()
    data["endpoints"][0]["vpc"] = {"subnets": ["subnet-b", "subnet-a"], "security_groups": ["sg-1"]}
    model = synth_dict(data).one("aws_sagemaker_model")
    assert model["vpc_config"] == {"security_group_ids": ["sg-1"], "subnets": ["subnet-a", "subnet-b"]}


def test_user_brought_role_is_used_and_none_created(synth_dict):
    data = component_config()
    arn = "arn:aws:iam::123456789012:role/my-sagemaker-role"
    data["endpoints"][0]["execution_role_arn"] = arn
    stack = synth_dict(data)
    assert not stack.of_type("aws_iam_role") and not stack.of_type("aws_iam_role_policy")
    assert stack.one("aws_sagemaker_model")["execution_role_arn"] == arn
    assert stack.one("aws_sagemaker_endpoint_configuration")["execution_role_arn"] == arn


def test_secrets_reach_the_container_as_arns_only(synth_dict):
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf"
    stack = synth_dict(component_config(environment={"OPTION_MAX_MODEL_LEN": "8192"}, secrets={"HF_TOKEN": arn}))
    (model,) = stack.of_type("aws_sagemaker_model").values()
    assert model["primary_container"]["environment"] == {"OPTION_MAX_MODEL_LEN": "8192", "HF_TOKEN_SECRET_ARN": arn}
    assert "HF_TOKEN" not in model["primary_container"]["environment"]


def test_every_routing_value_maps_to_a_strategy_the_api_knows():
    """`routing` is an enum-like string that grows with AWS (prefix- and KV-aware routing): every value the
    config accepts must have a RoutingStrategy, and every strategy must be one botocore knows."""
    import typing

    import botocore.session

    from fastscale.infra.config import EndpointSpec
    from fastscale.stacks.endpoint import ROUTING_STRATEGIES

    # `Literal[...] | None`: None is no strategy at all (no RoutingConfig, AWS's default).
    literal, none = typing.get_args(EndpointSpec.model_fields["routing"].annotation)
    assert none is type(None)
    accepted = set(typing.get_args(literal))
    assert accepted == set(ROUTING_STRATEGIES)
    model = botocore.session.get_session().get_service_model("sagemaker")
    assert set(ROUTING_STRATEGIES.values()) <= set(model.shape_for("RoutingStrategy").enum)
    assert EndpointSpec.model_fields["routing"].default == "least_outstanding_requests"  # documented as deliberate


@pytest.mark.parametrize(("setting", "written"), [(None, False), (False, False), (True, True)])
def test_detailed_observability_is_written_explicitly_on_every_awscc_configuration(synth_dict, setting, written):
    data = component_config()
    ep = data["endpoints"][0]
    ep["capacity"] = {"provision_timeout": 600}  # awscc's configuration, without any metrics setting
    if setting is not None:
        ep["detailed_observability"] = setting
    cfg = synth_dict(data).one("awscc_sagemaker_endpoint_config")
    assert cfg["metrics_config"] == {"enable_detailed_observability": written}


@pytest.mark.parametrize("setting", [True, False])
def test_setting_detailed_observability_makes_the_configuration_awscc(synth_dict, base_config, setting):
    base_config["endpoints"][0]["detailed_observability"] = setting
    stack = synth_dict(base_config)
    assert not stack.of_type("aws_sagemaker_endpoint_configuration")
    assert stack.one("awscc_sagemaker_endpoint_config")["metrics_config"] == {"enable_detailed_observability": setting}


def test_without_the_setting_a_hashicorp_aws_configuration_leaves_aws_its_default(synth_dict, base_config):
    stack = synth_dict(base_config)
    assert "metrics_config" not in stack.one("aws_sagemaker_endpoint_configuration")


@pytest.mark.parametrize(("key", "value"), [("inference_ami_version", "al2023-ami-sagemaker-inference-gpu-4-1"),
                                            ("instance_type", "ml.g7e.2xlarge")])
def test_a_value_hashicorp_aws_does_not_know_makes_the_configuration_awscc(synth_dict, base_config, key, value):
    base_config["endpoints"][0][key] = value
    stack = synth_dict(base_config)
    assert not stack.of_type("aws_sagemaker_endpoint_configuration")
    (variant,) = stack.one("awscc_sagemaker_endpoint_config")["production_variants"]
    assert variant[key] == value


@pytest.mark.parametrize(("key", "value"), [("inference_ami_version", "al2-ami-sagemaker-inference-gpu-3-1"),
                                            ("instance_type", "ml.g6e.2xlarge")])
def test_a_value_hashicorp_aws_knows_keeps_its_configuration(synth_dict, base_config, key, value):
    base_config["endpoints"][0][key] = value
    (variant,) = synth_dict(base_config).one("aws_sagemaker_endpoint_configuration")["production_variants"]
    assert variant[key] == value
