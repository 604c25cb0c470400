"""The resolved stack: one test per decision `resolve` makes (names, tags, defaults, capacity, scaling mode,
routing, overrides, adopted names), and that what it returns cannot be changed."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from fastscale.infra.config import parse_config
from fastscale.infra.model.resolved import FALLBACK_SUGGESTIONS, SCALING_DEFAULTS, resolve

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
ADOPTED_ARN = "arn:aws:sagemaker:us-east-1:123456789012:inference-component/live-ic"


def components_config(base: dict, *components: dict, **endpoint: object) -> dict:
    config = copy.deepcopy(base)
    ep = config["endpoints"][0]
    ep.pop("model")
    ep["inference_components"] = list(components) or [
        {"name": "a", "image": IMAGE, "resources": {"memory_mb": 1024, "accelerators": 1},
         "copies": {"initial": 1, "min": 0, "max": 2}}
    ]
    ep.update(endpoint)
    return config


def test_names_are_prefixed_with_the_project(base_config):
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert (ep.key, ep.name, ep.path) == ("chat", "demo-chat", "endpoints[0]")
    assert ep.endpoint_config_prefix == "demo-chat-" and ep.endpoint_config is None
    assert ep.execution_role == "demo-chat-sagemaker-us-east-1" and ep.execution_role_arn is None
    assert ep.variant == "AllTraffic" and ep.resource_id == "endpoint/demo-chat/variant/AllTraffic"
    assert ep.model is not None and ep.model.model.startswith("demo-chat-")
    assert ep.alarms.names == {k: f"demo-chat-{k}" for k in ("model-latency", "5xx-errors", "gpu-memory")}


def test_the_configs_own_role_means_no_role_is_named(base_config):
    base_config["endpoints"][0]["execution_role_arn"] = "arn:aws:iam::123456789012:role/mine"
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert ep.execution_role is None and ep.execution_role_arn == "arn:aws:iam::123456789012:role/mine"


def test_stack_names_dashboard_and_its_marker(base_config):
    stack = resolve(parse_config(base_config))
    assert (stack.name, stack.dashboard) == ("demo", "demo-fastscale")
    assert stack.dashboard_marker == "Managed by fastscale: fastscale:stack=demo, fastscale:region=us-east-1."
    base_config["dashboard"] = {"enabled": False}
    assert resolve(parse_config(base_config)).dashboard is None


def test_tags_merge_the_users_under_fastscales_own(base_config):
    base_config["tags"] = {"team": "ml", "managed-by": "someone", "fastscale:region": "elsewhere"}
    stack = resolve(parse_config(base_config))
    ep = stack.endpoints[0]
    assert stack.tags == {"fastscale:stack": "demo", "managed-by": "fastscale", "team": "ml"}
    assert ep.tags == {**stack.tags, "fastscale:endpoint": "demo-chat"}
    # a global resource (the IAM role) also carries the region; regional ones never do
    assert ep.role_tags == {**ep.tags, "fastscale:region": "us-east-1"}
    assert list(ep.tags) == sorted(ep.tags)


def test_adopted_resources_keep_their_live_tags_under_the_stacks(base_config):
    base_config["endpoints"][0]["adopted"] = {
        "endpoint": "live-ep", "tags": {"endpoint": {"owner": "ops", "fastscale:stack": "x"}, "model": {"cost": "1"},
                                        "scalable_target": {"team": "ml"}}}
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert ep.endpoint_tags == {**ep.tags, "owner": "ops"}  # the stack's key wins
    assert ep.config_tags == ep.tags
    assert ep.model is not None and ep.model.model_tags == {**ep.tags, "cost": "1"}
    assert ep.model.scaling.target_tags == {**ep.tags, "team": "ml"}


def test_adopted_names_replace_the_generated_ones(base_config):
    base_config["endpoints"][0]["adopted"] = {
        "endpoint": "live-ep", "endpoint_config": "live-config", "variant": "Main", "model": "live-model",
        "model_data_url": True, "scalable_target": True, "scaling_policy": "live-policy"}
    stack = resolve(parse_config(base_config))
    ep = stack.endpoints[0]
    assert (ep.name, ep.endpoint_config, ep.variant) == ("live-ep", "live-config", "Main")
    assert ep.endpoint_config_prefix == "demo-chat-", "the prefix of a replacement configuration stays the project's"
    assert ep.resource_id == "endpoint/live-ep/variant/Main"
    assert ep.model is not None and (ep.model.model, ep.model.adopted_model) == ("live-model", "live-model")
    assert ep.model.model_data_as_url
    assert ep.scaling is not None and ep.scaling.policy == "live-policy" and ep.adopted_scalable_target
    assert ep.adopted_scaling_policy == "live-policy"
    assert stack.adopted_resources == {("endpoint", "live-ep"), ("endpoint-config", "live-config"),
                                       ("model", "live-model"), ("scalable-target", "endpoint/live-ep/variant/main")}


def test_an_adopted_model_with_an_accepted_eula_takes_the_source_form(base_config):
    base_config["endpoints"][0]["adopted"] = {"endpoint": "live-ep", "model": "live-model", "model_data_url": True}
    base_config["endpoints"][0]["model"]["accept_eula"] = True
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert ep.model is not None and not ep.model.model_data_as_url


def test_adopted_component_names(base_config):
    config = components_config(base_config, {
        "name": "a", "image": IMAGE, "resources": {"memory_mb": 1024},
        "adopted": {"name": "live-ic", "arn": ADOPTED_ARN, "model": "live-ic-model", "scaling_policy": "p"}})
    config["endpoints"][0]["adopted"] = {"endpoint": "live-ep"}
    (c,) = resolve(parse_config(config)).endpoints[0].components
    assert (c.name, c.adopted_arn, c.workload.model) == ("live-ic", ADOPTED_ARN, "live-ic-model")
    assert c.scaling.policy == "p" and c.scaling.resource_id == "inference-component/live-ic"
    assert c.adopted_scaling_policy == "p" and not c.adopted_scalable_target


def test_workload_timeouts_default_to_the_endpoints(base_config):
    ep_config = base_config["endpoints"][0]
    ep_config.update(model_download_timeout=600, startup_health_check_timeout=900)
    ep_config["model"]["startup_health_check_timeout"] = 1200
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert ep.model is not None and (ep.model.download_timeout, ep.model.health_check_timeout) == (600, 1200)


def test_secrets_reach_the_container_as_their_arns(base_config):
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token"
    base_config["endpoints"][0]["model"].update(environment={"A": "1"}, secrets={"HF_TOKEN": arn})
    model = resolve(parse_config(base_config)).endpoints[0].model
    assert model is not None and model.environment == {"A": "1", "HF_TOKEN_SECRET_ARN": arn}
    assert [(s.arn, s.policy_resource) for s in model.secrets] == [(arn, f"{arn}-??????")]


def test_alarm_defaults_and_the_topic_only_while_enabled(base_config):
    base_config["endpoints"][0]["alarms"] = {"sns_topic_arn": "arn:aws:sns:us-east-1:123456789012:t"}
    alarms = resolve(parse_config(base_config)).endpoints[0].alarms
    assert (alarms.period, alarms.evaluation_periods, alarms.gpus_per_instance) == (60, 5, 1)
    assert alarms.sns_topic_arn == "arn:aws:sns:us-east-1:123456789012:t"
    base_config["endpoints"][0]["alarms"]["enabled"] = False
    off = resolve(parse_config(base_config)).endpoints[0].alarms
    assert off.sns_topic_arn is None and not off.enabled


def test_detailed_observability_defaults_to_off(base_config):
    metrics = resolve(parse_config(base_config)).endpoints[0].metrics
    assert (metrics.publish_frequency, metrics.enhanced, metrics.detailed_observability) == (None, False, False)
    base_config["endpoints"][0]["detailed_observability"] = True
    assert resolve(parse_config(base_config)).endpoints[0].metrics.detailed_observability is True


def test_capacity_pools_priorities_and_what_runs_on_each(base_config):
    other = "763104351884.dkr.ecr.us-east-1.amazonaws.com/other:1"
    base_config["endpoints"][0]["capacity"] = {"fallback": [
        {"instance_type": "ml.g5.2xlarge", "priority": 4, "model": {"image": other}},
        {"instance_type": "ml.g6e.2xlarge"},  # default: its position plus 2
    ]}
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert [(p.index, p.priority, p.instance_type) for p in ep.pools] == [
        (0, 1, "ml.g6.2xlarge"), (1, 4, "ml.g5.2xlarge"), (2, 3, "ml.g6e.2xlarge")]
    assert [p.index for p in ep.pools_by_priority] == [0, 2, 1]
    assert [m.image for m in ep.model_on_pools] == [IMAGE, other, IMAGE]
    own, overridden, same = ep.model_on_pools
    assert overridden.model != own.model and same.model == own.model  # a pool's model is named by its content
    assert [w.image for w in ep.every_workload] == [IMAGE, other]
    assert ep.awscc_config and ep.has_pools


def test_component_resources_on_a_pool(base_config):
    config = components_config(base_config, {"name": "a", "image": IMAGE, "resources": {"memory_mb": 1024}})
    config["endpoints"][0]["capacity"] = {"fallback": [
        {"instance_type": "ml.g5.2xlarge", "components": {"a": {"resources": {"memory_mb": 2048}}}}]}
    (c,) = resolve(parse_config(config)).endpoints[0].components
    assert [w.resources.memory_mb for w in c.on_pools if w.resources] == [1024, 2048]
    assert c.on_pools[1].model == c.workload.model, "resources alone do not make another model"


@pytest.mark.parametrize(("autoscaling", "copies_min", "mode"), [
    ({"enabled": False}, 0, "off"),
    ({}, 1, "target_tracking"),
    ({}, 0, "target_tracking_and_scale_from_zero"),
])
def test_scaling_mode(base_config, autoscaling, copies_min, mode):
    config = components_config(base_config, {"name": "a", "image": IMAGE, "resources": {"memory_mb": 1},
                                             "copies": {"initial": 1, "min": copies_min, "max": 2},
                                             "autoscaling": autoscaling})
    (c,) = resolve(parse_config(config)).endpoints[0].components
    assert c.scaling.mode == mode
    assert (c.scaling.scale_from_zero is not None) == (mode == "target_tracking_and_scale_from_zero")
    if c.scaling.scale_from_zero is not None:
        assert (c.scaling.scale_from_zero.policy, c.scaling.scale_from_zero.alarm) == (
            "demo-a-scale-from-zero", "demo-a-no-capacity")
        assert c.stuck_at_zero_alarm == "demo-a-stuck-at-zero"


def test_single_model_scales_instances_on_high_resolution_concurrency(base_config):
    scaling = resolve(parse_config(base_config)).endpoints[0].scaling
    assert scaling is not None and scaling.mode == "target_tracking"
    assert scaling.dimension == "sagemaker:variant:DesiredInstanceCount"
    assert scaling.metric.predefined_metric_type == "SageMakerVariantConcurrentRequestsPerModelHighResolution"
    assert (scaling.count.min, scaling.count.max, scaling.policy) == (1, 2, "demo-chat-target-tracking")
    assert scaling.target == scaling.target_concurrency


def test_invocations_scaling_tracks_its_own_target(base_config):
    base_config["endpoints"][0]["model"]["autoscaling"] = {"metric": "invocations", "target_invocations": 40}
    scaling = resolve(parse_config(base_config)).endpoints[0].scaling
    assert scaling is not None and scaling.target == 40 and scaling.metric_setting == "invocations"
    assert scaling.metric.predefined_metric_type == "SageMakerVariantInvocationsPerInstance"


def test_single_model_without_autoscaling_has_no_policy(base_config):
    base_config["endpoints"][0]["model"]["autoscaling"] = {"enabled": False}
    scaling = resolve(parse_config(base_config)).endpoints[0].scaling
    assert scaling is not None and scaling.mode == "off" and scaling.policy is None


@pytest.mark.parametrize(("setting", "strategy", "in_effect"), [
    ("__default__", "LEAST_OUTSTANDING_REQUESTS", "least_outstanding_requests"),
    ("random", "RANDOM", "random"),
    (None, None, "random"),
    ("kv_aware", "KV_AWARE", "kv_aware"),
])
def test_routing(base_config, setting, strategy, in_effect):
    if setting != "__default__":
        base_config["endpoints"][0]["routing"] = setting
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert (ep.routing.strategy, ep.routing.in_effect) == (strategy, in_effect)
    assert ep.awscc_config == (setting == "kv_aware")


def test_prefix_routing_settings(base_config):
    base_config["endpoints"][0]["routing"] = "prefix_aware"
    base_config["endpoints"][0]["prefix_routing"] = {"prefix_length": 2048, "concurrency_threshold": 8}
    routing = resolve(parse_config(base_config)).endpoints[0].routing
    assert (routing.strategy, routing.prefix_length, routing.concurrency_threshold) == ("PREFIX_AWARE", 2048, 8)


def test_overrides_per_entry(base_config):
    config = components_config(base_config, {"name": "a", "image": IMAGE, "resources": {"memory_mb": 1},
                                             "overrides": {"awscc_sagemaker_inference_component": {"x": 1}}},
                               overrides={"aws_sagemaker_endpoint": {"y": 2}})
    ep = resolve(parse_config(config)).endpoints[0]
    assert ep.overrides == {"aws_sagemaker_endpoint": {"y": 2}}
    assert ep.components[0].overrides == {"awscc_sagemaker_inference_component": {"x": 1}}


def test_cutover_variable_defaults_to_the_initial_count(base_config):
    stack = resolve(parse_config(base_config))
    ep = stack.endpoints[0]
    assert ep.cutover_variable == "cutover_instances_chat"
    assert stack.cutover_variables[ep.cutover_variable]["default"] == 1


def test_rollouts_are_left_out_against_an_emulator(base_config):
    assert [r.target for r in resolve(parse_config(base_config)).rollouts] == ["demo-chat"]
    base_config["endpoint_url"] = "http://localhost:4566"
    assert resolve(parse_config(base_config)).rollouts == ()


def test_awscc_provider_only_when_a_resource_needs_it(base_config):
    base_config["providers"] = {"aws": "~> 6.30"}
    stack = resolve(parse_config(base_config))
    assert not stack.needs_awscc
    assert (stack.aws_provider, stack.awscc_provider) == ("~> 6.30", ">= 1.106.0, < 2.0")
    assert resolve(parse_config(components_config(base_config))).needs_awscc


def test_s3_state_region_defaults_to_the_stacks(base_config):
    base_config["state"] = {"backend": "s3", "bucket": "b", "key": "k"}
    stack = resolve(parse_config(base_config))
    assert stack.s3_backend is not None and stack.s3_backend.region == "us-east-1"
    assert stack.state_placement("out") is None


def test_the_resolved_stack_cannot_be_changed(base_config):
    base_config["tags"] = {"team": "ml"}
    stack = resolve(parse_config(base_config))
    ep = stack.endpoints[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ep.name = "other"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ep.tags["team"] = "other"  # type: ignore[index]
    with pytest.raises(TypeError):
        ep.overrides["x"] = {}  # type: ignore[index]
    assert isinstance(stack.endpoints, tuple) and isinstance(ep.pools, tuple)


def test_as_resolved_takes_a_config_or_a_resolved_stack(base_config):
    from fastscale.infra.model.resolved import as_resolved

    config = parse_config(base_config)
    stack = resolve(config)
    assert as_resolved(stack) is stack
    assert as_resolved(config) == stack
    with pytest.raises(TypeError, match="not dict"):
        as_resolved(base_config)


def test_the_scale_from_zero_alarm_settings_are_there_without_scale_to_zero(base_config):
    """A what-if without a warm minimum runs with the alarm the config would get: its settings are resolved even
    while the copies never reach zero (and no scale-from-zero policy is named)."""
    config = components_config(base_config, {"name": "a", "image": IMAGE, "resources": {"memory_mb": 1},
                                             "copies": {"initial": 1, "min": 1, "max": 2},
                                             "autoscaling": {"scale_from_zero": {"cooldown": 90}}})
    (c,) = resolve(parse_config(config)).endpoints[0].components
    assert c.scaling.scale_from_zero is None
    assert (c.scaling.zero_alarm.period, c.scaling.zero_alarm.evaluation_periods, c.scaling.zero_alarm.cooldown) == (
        SCALING_DEFAULTS.scale_from_zero_period, SCALING_DEFAULTS.scale_from_zero_evaluation_periods, 90)
    assert SCALING_DEFAULTS.metric_setting == "high_resolution"


def test_what_an_analysis_reads_of_a_workload(base_config):
    config = components_config(base_config, {
        "name": "a", "image": IMAGE, "resources": {"memory_mb": 1, "accelerators": 1}, "model_size_gb": 16,
        "image_size_gb": 9, "data_cache": False, "serving": {"max_concurrency": 12}})
    config["endpoints"][0]["capacity"] = {"fallback": [
        {"instance_type": "ml.g5.2xlarge", "components": {"a": {"model_size_gb": 8}}}]}
    ep = resolve(parse_config(config)).endpoints[0]
    (w,) = ep.workloads
    assert (w.key, w.name, w.is_component, w.data_cache) == ("a", "demo-a", True, False)
    assert (w.model_size_gb, w.image_size_gb, w.serving.max_concurrency) == (16, 9, 12)
    assert ep.next_pool is not None and ep.next_pool.instance_type == "ml.g5.2xlarge"
    assert ep.on_pool(w, ep.next_pool).model_size_gb == 8
    single = resolve(parse_config(base_config)).endpoints[0]
    assert single.next_pool is None and single.workloads == (single.model,)
    assert single.model is not None and not single.model.is_component and single.model.data_cache is None


def test_fallback_candidates_leave_out_the_configured_pools(base_config):
    base_config["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge"}]}
    ep = resolve(parse_config(base_config)).endpoints[0]
    types = [c.instance_type for c in ep.fallback_candidates]
    assert types and len(types) <= FALLBACK_SUGGESTIONS
    assert not {"ml.g6.2xlarge", "ml.g5.2xlarge"} & set(types)
    prices = [c.price_per_hour_usd for c in ep.fallback_candidates]
    assert prices == sorted(prices)


# -- what the rules about what will be built read (`infra.rules.stack_rule`)


def test_a_pool_knows_whether_its_priority_is_written(base_config):
    base_config["endpoints"][0]["capacity"] = {"fallback": [
        {"instance_type": "ml.g5.2xlarge", "priority": 2}, {"instance_type": "ml.g6e.2xlarge"}]}
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert [(p.priority, p.priority_set) for p in ep.pools] == [(1, False), (2, True), (3, False)]


def test_a_workload_on_a_pool_knows_what_the_pools_override_sets(base_config):
    config = components_config(
        base_config,
        {"name": "a", "image": IMAGE, "resources": {"memory_mb": 1024}},
        {"name": "b", "image": IMAGE, "resources": {"memory_mb": 1024}})
    config["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge", "components": {
        # the same memory as the component's own: still the override's setting
        "a": {"resources": {"memory_mb": 1024}, "environment": {"X": "1"}}}}]}
    a, b = resolve(parse_config(config)).endpoints[0].components
    assert [w.pool_overrides for w in a.on_pools] == [frozenset(), {"resources", "environment"}]
    assert [w.pool_overrides for w in b.on_pools] == [frozenset(), frozenset()]


def test_the_reasons_for_awscc_endpoint_configuration_in_config_order(base_config):
    assert resolve(parse_config(base_config)).endpoints[0].awscc_reasons == ()
    base_config["endpoints"][0].update(metrics_publish_frequency=10, routing="kv_aware")
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert [setting for setting, _why in ep.awscc_reasons] == ["routing", "metrics_publish_frequency"]
    assert ep.awscc_config


def test_configured_rollouts_are_kept_against_an_emulator(base_config):
    base_config["endpoint_url"] = "http://localhost:4566"
    stack = resolve(parse_config(base_config))
    assert stack.rollouts == ()
    assert [(r.target, r.settings_path) for r in stack.configured_rollouts] == [
        ("demo-chat", "endpoints[0].deployment.blue_green")]


def test_the_update_settings_an_endpoint_writes(base_config):
    assert resolve(parse_config(base_config)).endpoints[0].deployment_keys == frozenset()
    base_config["endpoints"][0]["deployment"] = {"rolling": {"batch": {"type": "INSTANCE_COUNT", "value": 1}},
                                                  "components": {}}
    ep = resolve(parse_config(base_config)).endpoints[0]
    assert ep.deployment_keys == {"rolling", "components"}  # `components` written, even as its default


def test_every_tag_map_the_config_writes_with_its_path(base_config):
    base_config["tags"] = {"team": "ml"}
    base_config["endpoints"][0]["adopted"] = {"endpoint": "live", "tags": {"endpoint": {"owner": "ops"}}}
    written = resolve(parse_config(base_config)).written_tags
    assert [(path, dict(tags)) for path, tags in written] == [
        ("tags", {"team": "ml"}),
        ("endpoints[0].adopted.tags.endpoint", {"owner": "ops"}),
        ("endpoints[0].adopted.tags.endpoint_config", {}),
        ("endpoints[0].adopted.tags.model", {}),
        ("endpoints[0].adopted.tags.scalable_target", {}),
    ]


def test_the_resources_whose_tags_are_not_the_endpoints(base_config):
    base_config["endpoints"][0]["adopted"] = {"endpoint": "live", "tags": {"model": {"owner": "ops"}}}
    ep = resolve(parse_config(base_config)).endpoints[0]
    role, model = ep.tagged_resources
    assert (role.kind, role.path, role.tags) == ("execution_role", "tags", ep.role_tags)
    # an adopted resource with live tags keeps them under the stack's; one without them is the endpoint's own
    assert (model.kind, model.component, model.path) == ("model", None, "endpoints[0].adopted.tags.model")
    assert model.tags == {**ep.tags, "owner": "ops"} == ep.model.model_tags
    base_config["endpoints"][0]["execution_role_arn"] = "arn:aws:iam::123456789012:role/mine"
    (own,) = resolve(parse_config(base_config)).endpoints[0].tagged_resources[:1]
    assert (own.kind, own.tags) == ("resources", ep.tags)
