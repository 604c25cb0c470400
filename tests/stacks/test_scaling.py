"""EndpointScaling, read back from the synthesized Terraform JSON.

The constructs are synthesized in a stack of their own, next to stand-in endpoint and component resources,
so these tests pin the scaling wiring whatever the rest of the stack looks like.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
import yaml

from fastscale.infra.config import ConfigError, FastscaleConfig, load_config, parse_config
from fastscale.infra.model.naming import all_endpoint_names
from tests.conftest import EXAMPLES, ROOT

MULTI_MODEL = ROOT / "examples" / "multi-model.yaml"
SINGLE_MODEL = ROOT / "examples" / "qwen3-8b.yaml"
OWN_TYPES = ("aws_appautoscaling_target", "aws_appautoscaling_policy", "aws_cloudwatch_metric_alarm", "aws_cloudwatch_dashboard",
             "terraform_data")
REF = re.compile(r"^\$\{(?P<type>[a-z0-9_]+)\.(?P<id>[^.}]+)\.(?P<attr>[a-z_]+)\}$")


# --------------------------------------------------------------------------------------------- harness


def synth_constructs(config: FastscaleConfig) -> dict[str, Any]:
    """Synthesize EndpointScaling + EndpointAlarms for every endpoint and the StackDashboard; return the JSON.

    Endpoints are stand-in `aws_sagemaker_endpoint` resources and components stand-in
    `awscc_sagemaker_inference_component` resources, with logical ids `ep-<name>` / `ic-<name>`.
    """
    from fastscale.stacks.engine import App
    from fastscale.stacks.engine_stack import ResourceStack
    from fastscale.stacks.monitoring import EndpointAlarms, StackDashboard
    from fastscale.stacks.resources.base import Resource
    from fastscale.stacks.scaling import EndpointScaling

    @dataclass(frozen=True, kw_only=True)
    class Named:
        name: str

    class StandInEndpoint(Resource[Named]):
        TYPE: ClassVar[str] = "aws_sagemaker_endpoint"
        PROVIDER: ClassVar[str] = "aws"

    class StandInComponent(Resource[Named]):
        TYPE: ClassVar[str] = "awscc_sagemaker_inference_component"
        PROVIDER: ClassVar[str] = "awscc"

    stack = ResourceStack(App(), config.project)
    for names in all_endpoint_names(config):
        endpoint = StandInEndpoint(stack, f"ep-{names.spec.name}", Named(name=names.endpoint))
        components = {c.name: StandInComponent(stack, f"ic-{c.spec.name}", Named(name=c.name)) for c in names.components}
        kw = dict(config=config, names=names, endpoint=endpoint, components=components)
        EndpointScaling(stack, f"scaling-{names.spec.name}", **kw)
        EndpointAlarms(stack, f"alarms-{names.spec.name}", **kw)
    StackDashboard(stack, "dashboard", config=config)
    return stack.to_terraform()


@functools.cache
def synth_example(path) -> dict[str, Any]:
    return synth_constructs(load_config(path))


def resources(tf: dict, kind: str) -> dict[str, dict]:
    return tf.get("resource", {}).get(kind, {})


def by_name(tf: dict, kind: str, attr: str = "name") -> dict[str, dict]:
    return {body[attr]: body for body in resources(tf, kind).values()}


def ref(token: str) -> tuple[str, str, str]:
    """'${aws_x.id.attr}' -> ('aws_x', 'id', 'attr'); fails the test for anything else."""
    m = REF.match(token)
    assert m, f"not a Terraform reference: {token!r}"
    return m["type"], m["id"], m["attr"]


def target_of(tf: dict, policy: dict) -> dict:
    """The scalable target a policy refers to (policies name their target by reference)."""
    kinds = {ref(policy[k]) for k in ("resource_id", "scalable_dimension", "service_namespace")}
    assert {(t, i) for t, i, _ in kinds} == {("aws_appautoscaling_target", ref(policy["resource_id"])[1])}
    return resources(tf, "aws_appautoscaling_target")[ref(policy["resource_id"])[1]]


def modified(path, mutate) -> FastscaleConfig:
    """The example at `path` after `mutate(data)` changed its YAML data in place."""
    data = yaml.safe_load(path.read_text())
    mutate(data)
    return parse_config(data)


# --------------------------------------------------------------------------------------------- scale to zero


@pytest.fixture(scope="module")
def multi() -> dict:
    return synth_example(MULTI_MODEL)


def test_multi_model_scales_to_zero_end_to_end(multi):
    config = load_config(MULTI_MODEL)
    (names,) = all_endpoint_names(config)
    targets = by_name(multi, "aws_appautoscaling_target", "resource_id")
    policies = by_name(multi, "aws_appautoscaling_policy")
    alarms = by_name(multi, "aws_cloudwatch_metric_alarm", "alarm_name")
    policy_ids = {body["name"]: pid for pid, body in resources(multi, "aws_appautoscaling_policy").items()}

    for c in names.components:
        target = targets[f"inference-component/{c.name}"]
        assert target["service_namespace"] == "sagemaker"
        assert target["scalable_dimension"] == "sagemaker:inference-component:DesiredCopyCount"
        assert (target["min_capacity"], target["max_capacity"]) == (0, c.spec.copies.max)
        assert target["depends_on"] == [f"awscc_sagemaker_inference_component.ic-{c.spec.name}"]

        tracking = policies[c.target_tracking_policy]
        assert target_of(multi, tracking) is target
        assert tracking["policy_type"] == "TargetTrackingScaling"
        conf = tracking["target_tracking_scaling_policy_configuration"]
        assert conf["predefined_metric_specification"]["predefined_metric_type"] == (
            "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"
        )
        assert conf["target_value"] == c.spec.autoscaling.target_concurrency

        step = policies[c.scale_from_zero_policy]
        assert target_of(multi, step) is target
        assert step["policy_type"] == "StepScaling"
        assert step["step_scaling_policy_configuration"] == {
            "adjustment_type": "ChangeInCapacity",
            "metric_aggregation_type": "Maximum",
            "cooldown": 60,
            "step_adjustment": [{"metric_interval_lower_bound": "0", "scaling_adjustment": 1}],
        }

        alarm = alarms[c.scale_from_zero_alarm]
        # the alarm's only action is the step policy: the ARN token of that very policy
        assert alarm["alarm_actions"] == [f"${{aws_appautoscaling_policy.{policy_ids[c.scale_from_zero_policy]}.arn}}"]
        assert "ok_actions" not in alarm
        assert (alarm["namespace"], alarm["metric_name"]) == ("AWS/SageMaker", "NoCapacityInvocationFailures")
        assert alarm["dimensions"] == {"InferenceComponentName": c.name}
        assert alarm["statistic"] == "Sum"
        assert (alarm["period"], alarm["evaluation_periods"]) == (60, 1)
        assert alarm["threshold"] == 1
        assert alarm["comparison_operator"] == "GreaterThanOrEqualToThreshold"
        assert alarm["treat_missing_data"] == "notBreaching"


def test_cooldowns_come_from_the_config(multi):
    config = load_config(MULTI_MODEL)
    policies = by_name(multi, "aws_appautoscaling_policy")
    for c in all_endpoint_names(config)[0].components:
        conf = policies[c.target_tracking_policy]["target_tracking_scaling_policy_configuration"]
        assert conf["scale_in_cooldown"] == c.spec.autoscaling.scale_in_cooldown
        assert conf["scale_out_cooldown"] == c.spec.autoscaling.scale_out_cooldown


def test_scale_from_zero_settings_flow_into_policy_and_alarm():
    def mutate(data):
        comp = data["endpoints"][0]["inference_components"][1]
        comp["autoscaling"]["scale_from_zero"] = {"period": 120, "evaluation_periods": 2, "cooldown": 30}

    config = modified(MULTI_MODEL, mutate)
    tf = synth_constructs(config)
    c = all_endpoint_names(config)[0].components[1]
    step = by_name(tf, "aws_appautoscaling_policy")[c.scale_from_zero_policy]
    alarm = by_name(tf, "aws_cloudwatch_metric_alarm", "alarm_name")[c.scale_from_zero_alarm]
    assert step["step_scaling_policy_configuration"]["cooldown"] == 30
    assert (alarm["period"], alarm["evaluation_periods"], alarm["datapoints_to_alarm"]) == (120, 2, 2)


def test_components_that_keep_a_copy_get_no_scale_from_zero():
    def mutate(data):
        data["endpoints"][0]["inference_components"][0]["copies"] = {"initial": 1, "min": 1, "max": 4}

    config = modified(MULTI_MODEL, mutate)
    tf = synth_constructs(config)
    kept, *zero = all_endpoint_names(config)[0].components
    step_policies = [p for p in resources(tf, "aws_appautoscaling_policy").values() if p["policy_type"] == "StepScaling"]
    scaled = {target_of(tf, p)["resource_id"] for p in step_policies}
    assert scaled == {c.resource_id for c in zero}
    assert by_name(tf, "aws_appautoscaling_target", "resource_id")[kept.resource_id]["min_capacity"] == 1
    no_capacity = [a for a in resources(tf, "aws_cloudwatch_metric_alarm").values()
                   if a.get("alarm_actions") and "aws_appautoscaling_policy" in a["alarm_actions"][0]]
    assert {a["dimensions"]["InferenceComponentName"] for a in no_capacity} == {c.name for c in zero}


# --------------------------------------------------------------------------------------------- single model


def test_single_model_scales_instances_on_concurrency_per_model():
    config = load_config(SINGLE_MODEL)
    (names,) = all_endpoint_names(config)
    tf = synth_example(SINGLE_MODEL)
    (target,) = resources(tf, "aws_appautoscaling_target").values()
    assert target["resource_id"] == "endpoint/chat-prod-qwen3/variant/AllTraffic"
    assert target["scalable_dimension"] == "sagemaker:variant:DesiredInstanceCount"
    assert (target["min_capacity"], target["max_capacity"]) == (config.endpoints[0].instances.min, config.endpoints[0].instances.max)
    assert target["depends_on"] == ["aws_sagemaker_endpoint.ep-qwen3"]
    (policy,) = resources(tf, "aws_appautoscaling_policy").values()
    assert policy["name"] == names.target_tracking_policy
    assert target_of(tf, policy) is target
    conf = policy["target_tracking_scaling_policy_configuration"]
    assert conf["predefined_metric_specification"]["predefined_metric_type"] == (
        "SageMakerVariantConcurrentRequestsPerModelHighResolution"
    )
    assert conf["target_value"] == 4


def test_invocations_metric_selects_the_one_minute_types():
    def single(data):
        data["endpoints"][0]["model"]["autoscaling"]["metric"] = "invocations"

    def components(data):
        data["endpoints"][0]["inference_components"][2]["autoscaling"]["metric"] = "invocations"

    tf = synth_constructs(modified(SINGLE_MODEL, single))
    (policy,) = resources(tf, "aws_appautoscaling_policy").values()
    spec = policy["target_tracking_scaling_policy_configuration"]["predefined_metric_specification"]
    assert spec["predefined_metric_type"] == "SageMakerVariantInvocationsPerInstance"

    config = modified(MULTI_MODEL, components)
    tf = synth_constructs(config)
    types = {
        target_of(tf, p)["resource_id"]: p["target_tracking_scaling_policy_configuration"]["predefined_metric_specification"]["predefined_metric_type"]
        for p in resources(tf, "aws_appautoscaling_policy").values()
        if p["policy_type"] == "TargetTrackingScaling"
    }
    assert types == {
        "inference-component/assist-qwen3-8b": "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
        "inference-component/assist-llama3-8b": "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
        "inference-component/assist-mistral-7b": "SageMakerInferenceComponentInvocationsPerCopy",
    }


def test_an_invocations_target_is_the_policys_target_value_and_needs_the_invocations_metric():
    def single(data):
        data["endpoints"][0]["model"]["autoscaling"].update(metric="invocations", target_invocations=70)

    tf = synth_constructs(modified(SINGLE_MODEL, single))
    (policy,) = resources(tf, "aws_appautoscaling_policy").values()
    assert policy["target_tracking_scaling_policy_configuration"]["target_value"] == 70

    def wrong(data):
        data["endpoints"][0]["model"]["autoscaling"].update(metric="high_resolution", target_invocations=70)

    with pytest.raises(ConfigError, match="set `metric: invocations`"):
        modified(SINGLE_MODEL, wrong)


def test_disabled_autoscaling_creates_nothing():
    def single(data):
        data["endpoints"][0]["model"]["autoscaling"]["enabled"] = False

    def one_component(data):
        comp = data["endpoints"][0]["inference_components"][0]
        comp["autoscaling"]["enabled"] = False
        comp["copies"] = {"initial": 1, "min": 1, "max": 1}

    tf = synth_constructs(modified(SINGLE_MODEL, single))
    assert not resources(tf, "aws_appautoscaling_target") and not resources(tf, "aws_appautoscaling_policy")

    config = modified(MULTI_MODEL, one_component)
    tf = synth_constructs(config)
    off = all_endpoint_names(config)[0].components[0]
    assert off.resource_id not in by_name(tf, "aws_appautoscaling_target", "resource_id")
    assert len(resources(tf, "aws_appautoscaling_target")) == 2


def test_missing_component_resource_is_a_clear_error():
    from fastscale.stacks.engine import App
    from fastscale.stacks.engine_stack import ResourceStack
    from fastscale.stacks.resources.autoscaling import AppautoscalingTarget, AppautoscalingTargetProps
    from fastscale.stacks.scaling import EndpointScaling

    config = load_config(MULTI_MODEL)
    (names,) = all_endpoint_names(config)
    stack = ResourceStack(App(), "s")
    endpoint = AppautoscalingTarget(stack, "x", AppautoscalingTargetProps(
        service_namespace="sagemaker", scalable_dimension="d", resource_id="r", min_capacity=0, max_capacity=1))
    with pytest.raises(ValueError, match="no inference component resource for assist-llama3-8b, assist-mistral-7b"):
        EndpointScaling(stack, "scaling", config=config, names=names, endpoint=endpoint,
                        components={names.components[0].name: endpoint})


# --------------------------------------------------------------------------------------------- every example


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_scale_out_is_driven_by_a_ten_second_metric_unless_opted_out(path):
    """Every workload with autoscaling on has a target-tracking policy on a HighResolution (10 s) predefined
    metric, unless its config says `metric: invocations`."""
    config = load_config(path)
    tf = synth_example(path)
    tracking = {
        target_of(tf, p)["resource_id"]: p["target_tracking_scaling_policy_configuration"]
        for p in resources(tf, "aws_appautoscaling_policy").values()
        if p["policy_type"] == "TargetTrackingScaling"
    }
    checked = 0
    for names in all_endpoint_names(config):
        workloads = [(names.resource_id, names.spec.model.autoscaling)] if names.spec.model else [
            (c.resource_id, c.spec.autoscaling) for c in names.components
        ]
        for resource_id, autoscaling in workloads:
            if not autoscaling.enabled:
                assert resource_id not in tracking
                continue
            metric_type = tracking[resource_id]["predefined_metric_specification"]["predefined_metric_type"]
            if autoscaling.metric == "invocations":
                assert not metric_type.endswith("HighResolution")
            else:
                assert metric_type.endswith("HighResolution"), f"{resource_id} scales on {metric_type}"
            checked += 1
    assert checked == len(tracking) > 0


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_scaling_resources_match_the_provider_schema(path):
    from tests.contract.schema_check import check_stack

    tf = synth_example(path)
    report = check_stack({"resource": {k: v for k, v in tf["resource"].items() if k in OWN_TYPES}})
    assert report == {}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_scalable_targets_are_tagged(path):
    from fastscale.infra.model.naming import tags

    config = load_config(path)
    tf = synth_example(path)
    expected = {names.resource_id: tags(config, names.spec) for names in all_endpoint_names(config)}
    expected |= {c.resource_id: tags(config, n.spec) for n in all_endpoint_names(config) for c in n.components}
    for target in resources(tf, "aws_appautoscaling_target").values():
        assert target["tags"] == expected[target["resource_id"]]


# --------------------------------------------------------------------------------------------- in EndpointStack


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_endpoint_stack_wires_scaling_to_the_real_resources(path, examples):
    """In the real stack, each scalable target waits for the very endpoint or component it scales, and the
    stack holds the same scaling resources as the constructs synthesized alone."""
    from tests.contract.schema_check import check_stack

    built = examples[path.stem]
    tf = built.doc
    assert check_stack(tf) == {}
    components = {body["inference_component_name"]: f"awscc_sagemaker_inference_component.{rid}"
                  for rid, body in resources(tf, "awscc_sagemaker_inference_component").items()}
    endpoints = {body["name"]: f"aws_sagemaker_endpoint.{rid}" for rid, body in resources(tf, "aws_sagemaker_endpoint").items()}
    for target in resources(tf, "aws_appautoscaling_target").values():
        rid = target["resource_id"]
        if rid.startswith("inference-component/"):
            assert target["depends_on"] == [components[rid.removeprefix("inference-component/")]]
        else:
            assert target["depends_on"] == [endpoints[rid.split("/")[1]]]
    alone = synth_example(path)
    for kind, key in (("aws_appautoscaling_target", "resource_id"), ("aws_appautoscaling_policy", "name"),
                      ("aws_cloudwatch_metric_alarm", "alarm_name")):
        assert set(by_name(tf, kind, key)) == set(by_name(alone, kind, key)) != set()


# --------------------------------------------------------------------------------------------- re-registration


def test_a_variant_target_and_its_policy_are_replaced_when_the_instance_types_change():
    """AWS fails an update that changes the instance type of a registered variant: the target and its policy
    are replaced (deregistered, registered again) exactly when the trigger holding the types changes."""
    tf = synth_example(SINGLE_MODEL)
    [(trigger_id, trigger)] = tf["resource"]["terraform_data"].items()
    assert trigger["input"] == [load_config(SINGLE_MODEL).endpoints[0].instance_type]
    [target] = tf["resource"]["aws_appautoscaling_target"].values()
    [policy] = tf["resource"]["aws_appautoscaling_policy"].values()
    for resource in (target, policy):
        assert resource["lifecycle"]["replace_triggered_by"] == [f"terraform_data.{trigger_id}"]
    # The order that makes the replacement go around the endpoint's update: the target depends on the endpoint.
    [endpoint_id] = tf["resource"]["aws_sagemaker_endpoint"]
    assert target["depends_on"] == [f"aws_sagemaker_endpoint.{endpoint_id}"]


def test_fallback_pools_are_in_the_trigger_in_priority_order(synth_dict):
    data = yaml.safe_load(SINGLE_MODEL.read_text())
    ep = data["endpoints"][0]
    ep["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge", "priority": 3},
                                   {"instance_type": "ml.g6e.2xlarge", "priority": 2}]}
    [trigger] = synth_dict(data).of_type("terraform_data").values()
    assert trigger["input"] == [ep["instance_type"], "ml.g6e.2xlarge", "ml.g5.2xlarge"]


def test_component_targets_are_not_replaced_with_the_instance_type():
    """Components scale copies, not the variant: AWS's rule is about variants registered as targets."""
    tf = synth_example(MULTI_MODEL)
    for target in tf["resource"]["aws_appautoscaling_target"].values():
        assert "replace_triggered_by" not in target.get("lifecycle", {})
