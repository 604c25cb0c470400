"""The synthesized attributes make valid SageMaker API requests.

The providers turn each resource into a Create* call. This rebuilds that call from the synthesized JSON,
guided by botocore's service model (every attribute must find its API member, so an attribute the API
does not know fails here), replaces `${...}` references with plausible values, and validates the request
with botocore's own ParamValidator. ParamValidator checks types, required members and minimums; enum
membership, patterns and maximums are checked on top, from the same model.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import botocore.session
import pytest
from botocore.model import ListShape, MapShape, Shape, StructureShape
from botocore.validate import validate_parameters

from fastscale.infra.config import load_config, parse_config
from fastscale.infra.model.naming import NAME_PREFIX_SUFFIX_LEN
from tests.conftest import EXAMPLES
from tests.stacks.conftest import synth, variant_configs

VARIANTS = variant_configs()
META = {"//", "lifecycle", "depends_on", "count", "for_each", "provider"}
TOKEN = re.compile(r"^\$\{(?P<type>[a-z0-9_]+)\.(?P<id>[^.}]+)\.(?P<attr>[a-z_]+)\}$")
#: The stack's cut-over count variables (infra.model.cutover): a number at apply time.
CUTOVER_VARIABLE = re.compile(r"^\$\{var\.cutover_instances_[^}]+\}$")

#: resource type -> (operation, {attribute: API member} where the names differ beyond case and underscores)
OPERATIONS = {
    "aws_sagemaker_model": ("CreateModel", {"name": "ModelName"}),
    "aws_sagemaker_endpoint_configuration": ("CreateEndpointConfig", {"name_prefix": "EndpointConfigName",
                                                                      "kms_key_arn": "KmsKeyId"}),
    "awscc_sagemaker_endpoint_config": ("CreateEndpointConfig", {}),
    "aws_sagemaker_endpoint": ("CreateEndpoint", {"name": "EndpointName"}),
    "awscc_sagemaker_inference_component": ("CreateInferenceComponent", {}),
}


@functools.cache
def sagemaker():
    return botocore.session.get_session().get_service_model("sagemaker")


def placeholder(token: str) -> str:
    """A value of the kind the reference resolves to at apply time."""
    if CUTOVER_VARIABLE.match(token):
        return 1  # type: ignore[return-value]
    m = TOKEN.match(token)
    assert m, f"unexpected expression {token!r}"
    if m["attr"] == "arn":
        return {"aws_iam_role": "arn:aws:iam::123456789012:role/placeholder-role"}.get(
            m["type"], "arn:aws:sagemaker:us-east-1:123456789012:placeholder/placeholder"
        )
    if m["attr"] == "alarm_name":
        return f"placeholder-alarm-{m['id'][:20].strip('_-').replace('_', '-')}"
    assert m["attr"] in {"name", "endpoint_config_name", "inference_component_name"}, token
    return f"placeholder-{m['id'][:20].strip('_-').replace('_', '-')}"


def _key(name: str) -> str:
    return name.replace("_", "").lower()


def to_api(value: Any, shape: Shape, aliases: dict[str, str], path: str = "") -> Any:
    """Terraform JSON -> API parameters, shaped by the botocore model."""
    if isinstance(value, str) and "${" in value:
        value = placeholder(value)
    if isinstance(shape, StructureShape):
        if isinstance(value, list):  # a Terraform block list the API takes as one structure
            assert len(value) == 1, f"{path}: {len(value)} blocks for the single structure {shape.name}"
            value = value[0]
        members = {_key(m): m for m in shape.members}
        out = {}
        for attr, item in value.items():
            if attr in META:
                continue
            member = aliases.get(attr) if not path else None
            member = member or members.get(_key(attr))
            assert member, f"{path}{attr}: no member of {shape.name} matches (members: {sorted(shape.members)})"
            out[member] = to_api(item, shape.members[member], aliases, f"{path}{attr}.")
        return out
    if isinstance(shape, ListShape):
        if isinstance(value, dict) and shape.member.name == "Tag":  # hashicorp/aws tags are a map
            return [{"Key": k, "Value": v} for k, v in value.items()]
        return [to_api(v, shape.member, aliases, f"{path}[{i}].") for i, v in enumerate(value)]
    if isinstance(shape, MapShape):
        return {k: to_api(v, shape.value, aliases, f"{path}{k}.") for k, v in value.items()}
    return value


#: Attributes the create call does not take, and the update call they go to (resource type -> attribute ->
#: (operation, member)). An inference component's deployment_config only matters when it is updated.
UPDATE_ONLY = {
    "awscc_sagemaker_inference_component": {"deployment_config": ("UpdateInferenceComponent", "DeploymentConfig")},
}


def request(rtype: str, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    operation, aliases = OPERATIONS[rtype]
    body = {k: v for k, v in body.items() if k not in UPDATE_ONLY.get(rtype, {})}
    params = to_api(body, sagemaker().operation_model(operation).input_shape, aliases)
    if rtype == "aws_sagemaker_endpoint_configuration":
        # name_prefix: the provider appends its unique suffix
        params["EndpointConfigName"] += "0" * NAME_PREFIX_SUFFIX_LEN
    return operation, params


def model_problems(value: Any, shape: Shape, path: str = "") -> list[str]:
    """What ParamValidator leaves out: enums, patterns (as whole-value matches, stricter than the model's
    unanchored form) and maximums."""
    problems = []
    if isinstance(shape, StructureShape):
        for name, item in value.items():
            problems += model_problems(item, shape.members[name], f"{path}{name}.")
    elif isinstance(shape, ListShape):
        if "max" in shape.metadata and len(value) > shape.metadata["max"]:
            problems.append(f"{path}: more than {shape.metadata['max']} items")
        for i, item in enumerate(value):
            problems += model_problems(item, shape.member, f"{path}[{i}].")
    elif isinstance(shape, MapShape):
        for k, v in value.items():
            problems += model_problems(k, shape.key, f"{path}<key>.") + model_problems(v, shape.value, f"{path}{k}.")
    elif shape.type_name == "string":
        if shape.enum and value not in shape.enum:
            problems.append(f"{path}: {value!r} is not one of {shape.name}")
        if "max" in shape.metadata and len(value) > shape.metadata["max"]:
            problems.append(f"{path}: {value!r} is longer than {shape.metadata['max']}")
        pattern = shape.metadata.get("pattern")
        if pattern:
            try:
                regex = re.compile(pattern)
            except re.error:  # a Java-only construct; nothing to check with Python
                regex = None
            if regex and not regex.fullmatch(value):
                problems.append(f"{path}: {value!r} does not match {pattern}")
    elif shape.type_name in {"integer", "long", "float", "double"} and "max" in shape.metadata:
        if value > shape.metadata["max"]:
            problems.append(f"{path}: {value} is above {shape.metadata['max']}")
    return problems


def update_request(rtype: str, body: dict[str, Any], attr: str) -> tuple[dict[str, Any], Shape]:
    """The update call an update-only attribute goes to, with the names it needs, and its input shape."""
    operation, member = UPDATE_ONLY[rtype][attr]
    shape = sagemaker().operation_model(operation).input_shape
    value = to_api(body[attr], shape.members[member], {}, f"{attr}.")
    name = to_api(body["inference_component_name"], shape.members["InferenceComponentName"], {})
    return {"InferenceComponentName": name, member: value}, shape


@pytest.fixture(scope="module")
def stacks(tmp_path_factory):
    root = tmp_path_factory.mktemp("api")
    out = {p.stem: synth(load_config(p), root / p.stem) for p in EXAMPLES}
    out.update({name: synth(parse_config(data), root / name) for name, data in VARIANTS.items()})
    return out


@pytest.mark.parametrize("name", [p.stem for p in EXAMPLES] + list(VARIANTS))
def test_resources_make_valid_api_requests(stacks, name):
    seen = set()
    for rtype, rid, body in stacks[name].all_resources():
        if rtype not in OPERATIONS:
            continue
        operation, params = request(rtype, body)
        shape = sagemaker().operation_model(operation).input_shape
        validate_parameters(params, shape)  # raises ParamValidationError with every problem
        assert model_problems(params, shape) == [], f"{rtype}.{rid}"
        seen.add(operation)
        for attr, (update, _member) in UPDATE_ONLY.get(rtype, {}).items():
            if attr in body:
                params, shape = update_request(rtype, body, attr)
                validate_parameters(params, shape)
                assert model_problems(params, shape) == [], f"{rtype}.{rid}.{attr}"
                seen.add(update)
    assert {"CreateModel", "CreateEndpointConfig", "CreateEndpoint"} <= seen


def test_component_request_carries_the_fast_scaling_settings(stacks):
    components = stacks["multi-model"].of_type("awscc_sagemaker_inference_component").values()
    assert components
    for body in components:
        _, params = request("awscc_sagemaker_inference_component", body)
        assert params["Specification"]["DataCacheConfig"] == {"EnableCaching": True}
        assert params["RuntimeConfig"]["CopyCount"] >= 1, "the API refuses to create a component with 0 copies"
        assert params["VariantName"] == "AllTraffic"
        assert params["Specification"]["ModelName"].startswith("placeholder-")


def test_enums_come_from_the_model(stacks):
    """The values the stacks write for the key enums, checked by name so a model change is noticed."""
    instance_types = sagemaker().shape_for("ProductionVariantInstanceType").enum
    strategies = sagemaker().shape_for("RoutingStrategy").enum
    for stack in stacks.values():
        for rtype in ("aws_sagemaker_endpoint_configuration", "awscc_sagemaker_endpoint_config"):
            for body in stack.of_type(rtype).values():
                _, params = request(rtype, body)
                for variant in params["ProductionVariants"]:
                    # One instance type, or instance pools in its place (the API takes one or the other).
                    assert ("InstanceType" in variant) != ("InstancePools" in variant)
                    types = [variant["InstanceType"]] if "InstanceType" in variant else [
                        p["InstanceType"] for p in variant["InstancePools"]]
                    assert set(types) <= set(instance_types)
                    assert variant["RoutingConfig"]["RoutingStrategy"] in strategies
                    policy = variant.get("ManagedInstanceScaling", {}).get("ScaleInPolicy")
                    if policy:
                        assert policy["Strategy"] in sagemaker().shape_for("ManagedInstanceScalingScaleInStrategy").enum


def test_fallback_example_requests_pools_timeout_scale_in_and_per_type_specifications(stacks):
    (config,) = stacks["capacity-fallback"].of_type("awscc_sagemaker_endpoint_config").values()
    _, params = request("awscc_sagemaker_endpoint_config", config)
    (variant,) = params["ProductionVariants"]
    assert "InstanceType" not in variant
    assert [(p["Priority"], p["InstanceType"]) for p in variant["InstancePools"]] == [
        (1, "ml.g6.12xlarge"), (2, "ml.g5.12xlarge"), (3, "ml.g6e.12xlarge")]
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 900
    assert variant["ManagedInstanceScaling"]["ScaleInPolicy"] == {
        "Strategy": "CONSOLIDATION", "CooldownInMinutes": 10, "MaximumStepSize": 1}

    (component,) = stacks["capacity-fallback"].of_type("awscc_sagemaker_inference_component").values()
    _, params = request("awscc_sagemaker_inference_component", component)
    assert "Specification" not in params, "Specification and Specifications are mutually exclusive"
    specs = params["Specifications"]
    assert [s["InstanceType"] for s in specs] == ["ml.g6.12xlarge", "ml.g5.12xlarge", "ml.g6e.12xlarge"]
    assert [s["ComputeResourceRequirements"]["NumberOfAcceleratorDevicesRequired"] for s in specs] == [2, 2, 1]
    # The L40S pool runs its own model (other tensor-parallel setting); the other two share one.
    refs = [s["model_name"] for s in component["specifications"]]
    assert refs[0] == refs[1] != refs[2]
    for spec in specs:
        assert spec["SchedulingConfig"] == {"PlacementStrategy": "SPREAD",
                                            "AvailabilityZoneBalance": {"EnforcementMode": "PERMISSIVE", "MaxImbalance": 1}}
        assert spec["DataCacheConfig"] == {"EnableCaching": True}


def test_short_tail_example_requests_scale_to_zero_with_its_scale_in_policy(stacks):
    (config,) = stacks["scale-to-zero-short-tail"].of_type("awscc_sagemaker_endpoint_config").values()
    _, params = request("awscc_sagemaker_endpoint_config", config)
    (variant,) = params["ProductionVariants"]
    assert variant["InstanceType"] == "ml.g6.2xlarge" and "InstancePools" not in variant
    assert variant["ManagedInstanceScaling"] == {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 3,
                                                 "ScaleInPolicy": {"Strategy": "IDLE_RELEASE", "CooldownInMinutes": 5}}
    # awscc's configuration always states detailed observability (off unless the config turns it on)
    assert params["MetricsConfig"] == {"EnableDetailedObservability": False}


def test_single_model_pools_override_the_model_and_reservation_is_requested(stacks):
    (config,) = stacks["single-instance-pools"].of_type("awscc_sagemaker_endpoint_config").values()
    _, params = request("awscc_sagemaker_endpoint_config", config)
    pools = params["ProductionVariants"][0]["InstancePools"]
    assert [("ModelNameOverride" in p) for p in pools] == [False, True, False]
    assert len(stacks["single-instance-pools"].of_type("aws_sagemaker_model")) == 2
    (config,) = stacks["single-capacity-reservation"].of_type("awscc_sagemaker_endpoint_config").values()
    _, params = request("awscc_sagemaker_endpoint_config", config)
    assert params["ProductionVariants"][0]["CapacityReservationConfig"] == {
        "CapacityReservationPreference": "capacity-reservations-only",
        "MlReservationArn": "arn:aws:sagemaker:us-east-1:123456789012:training-plan/g6-for-inference"}


def test_validation_catches_capacity_values_out_of_the_api_limits():
    shape = sagemaker().operation_model("CreateEndpointConfig").input_shape
    variant = {"VariantName": "AllTraffic", "VariantInstanceProvisionTimeoutInSeconds": 3700,
               "InstancePools": [{"InstanceType": "ml.g6.2xlarge", "Priority": 6}],
               "ManagedInstanceScaling": {"ScaleInPolicy": {"Strategy": "IDLE_RELEASE", "MaximumStepSize": 101}}}
    problems = model_problems({"EndpointConfigName": "demo", "ProductionVariants": [variant]}, shape)
    assert len(problems) == 3, problems


def test_conversion_rejects_attributes_the_api_does_not_have():
    """The check can fail: an attribute without an API member is reported, not dropped."""
    body = {"name": "demo", "execution_role_arn": "arn:aws:iam::123456789012:role/r",
            "primary_container": {"image": "x", "model_data_urll": "s3://b/k"}}
    with pytest.raises(AssertionError, match="model_data_urll"):
        request("aws_sagemaker_model", body)


def test_validation_catches_a_bad_enum():
    shape = sagemaker().operation_model("CreateEndpointConfig").input_shape
    params = {"EndpointConfigName": "demo", "ProductionVariants": [
        {"VariantName": "AllTraffic", "InstanceType": "ml.g6.2xlarge",
         "RoutingConfig": {"RoutingStrategy": "LEAST_OUTSTANDING"}}]}
    assert any("LEAST_OUTSTANDING" in p for p in model_problems(params, shape))


def test_validation_catches_a_name_the_api_refuses():
    shape = sagemaker().operation_model("CreateModel").input_shape
    assert model_problems({"ModelName": "qwen3_8b"}, shape)
    assert model_problems({"ModelName": "qwen3-8b-" + "a" * 60}, shape)
    assert not model_problems({"ModelName": "qwen3-8b"}, shape)


def test_every_update_carries_a_deployment_configuration_with_rollback(stacks):
    """Single-model endpoints: UpdateEndpoint's DeploymentConfig (CreateEndpoint keeps it for later updates);
    components: UpdateInferenceComponent's. Both roll back on alarms."""
    for name in [p.stem for p in EXAMPLES]:
        stack = stacks[name]
        components = stack.of_type("awscc_sagemaker_inference_component")
        for body in components.values():
            params, _ = update_request("awscc_sagemaker_inference_component", body, "deployment_config")
            config = params["DeploymentConfig"]
            assert config["RollingUpdatePolicy"]["MaximumBatchSize"] == {"Type": "COPY_COUNT", "Value": 1}
            assert 0 < config["RollingUpdatePolicy"]["WaitIntervalInSeconds"] <= 3600
            assert len(config["AutoRollbackConfiguration"]["Alarms"]) == 2, name
        for body in stack.of_type("aws_sagemaker_endpoint").values():
            _, params = request("aws_sagemaker_endpoint", body)
            if name == "emulator":  # emulators neither store nor roll out one (docs/emulator.md)
                assert "DeploymentConfig" not in params
                continue
            if components:
                assert "DeploymentConfig" not in params, "component endpoints update per component"
                continue
            policy = params["DeploymentConfig"]["BlueGreenUpdatePolicy"]
            assert policy["TrafficRoutingConfiguration"]["Type"] == "ALL_AT_ONCE"
            assert len(params["DeploymentConfig"]["AutoRollbackConfiguration"]["Alarms"]) == 2, name


def test_validation_catches_deployment_values_out_of_the_api_limits():
    shape = sagemaker().operation_model("UpdateInferenceComponent").input_shape
    config = {"RollingUpdatePolicy": {"MaximumBatchSize": {"Type": "COPY_COUNT", "Value": 1},
                                      "WaitIntervalInSeconds": 3601, "MaximumExecutionTimeoutInSeconds": 28801},
              "AutoRollbackConfiguration": {"Alarms": [{"AlarmName": f"a{i}"} for i in range(11)]}}
    problems = model_problems({"InferenceComponentName": "demo", "DeploymentConfig": config}, shape)
    assert len(problems) == 3, problems
    config["RollingUpdatePolicy"]["MaximumBatchSize"]["Type"] = "INSTANCE_COUNT"  # an endpoint's type
    assert any("InferenceComponentCapacitySizeType" in p
               for p in model_problems({"InferenceComponentName": "demo", "DeploymentConfig": config}, shape))
