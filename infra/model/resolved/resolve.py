"""`resolve(config)`: a validated config as the stack it builds (`infra.model.resolved.types`), computed once.

Every decision a consumer would otherwise make again is made here, from the helpers that own it: names and
tags (`infra.model.naming`), instance pools and what runs on each (`infra.model.capacity`), the scaling
metric (`infra.model.detection`), update settings (`infra.model.deployment`), cut-over variables
(`infra.model.cutover`) and the endpoint-level defaults a workload inherits.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from fastscale.infra.base import aws_facts, catalog
from fastscale.infra.config import (
    Adopted,
    Autoscaling,
    EndpointSpec,
    FastscaleConfig,
    InferenceComponentSpec,
    ModelOverride,
    ModelSpec,
    S3State,
)
from fastscale.infra.config import Capacity as CapacitySetting
from fastscale.infra.config import (
    ScaleFromZero as ScaleFromZeroSetting,
)
from fastscale.infra.config.secrets import container_environment, parse_kms_key_arn, policy_resource
from fastscale.infra.model import capacity, cutover, naming
from fastscale.infra.model.deployment import rollouts
from fastscale.infra.model.detection import WorkloadKind, scaling_metric
from fastscale.infra.model.instance_fit import fallback_candidates
from fastscale.infra.model.resolved.types import (
    EMPTY,
    FALLBACK_SUGGESTIONS,
    Count,
    DataKey,
    Metrics,
    OverrideMap,
    Placement,
    ResolvedAlarms,
    ResolvedComponent,
    ResolvedEndpoint,
    ResolvedPool,
    ResolvedRouting,
    ResolvedScaling,
    ResolvedStack,
    ResolvedWorkload,
    Resources,
    S3Backend,
    ScaleFromZero,
    ScaleIn,
    ScalingDefaults,
    Secret,
    TaggedResource,
    Vpc,
    ZeroAlarm,
)


def resolve(config: FastscaleConfig) -> ResolvedStack:
    """The stack ``config`` builds; ``config`` must have passed validation (`infra.rules`)."""
    state = config.state
    s3 = (
        S3Backend(bucket=state.bucket, key=state.key, region=state.region or config.region,
                  use_lockfile=state.use_lockfile, dynamodb_table=state.dynamodb_table, encrypt=state.encrypt,
                  kms_key_id=state.kms_key_id, endpoint_url=state.endpoint_url)
        if isinstance(state, S3State)
        else None
    )
    endpoints = tuple(_endpoint(config, i, ep) for i, ep in enumerate(config.endpoints))
    configured_rollouts = tuple(rollouts(config))
    return ResolvedStack(
        name=naming.stack_name(config),
        project=config.project,
        region=config.region,
        tags=_frozen(naming.tags(config)),
        endpoint_url=config.endpoint_url,
        sends_credentials_to_endpoint=config.sends_credentials_to_endpoint,
        s3_backend=s3,
        local_state_path=None if isinstance(state, S3State) else state.path,
        aws_provider=config.providers.aws,
        awscc_provider=config.providers.awscc,
        needs_awscc=any(ep.needs_awscc for ep in endpoints),
        dashboard=naming.dashboard_name(config) if config.dashboard.enabled else None,
        dashboard_name=naming.dashboard_name(config),
        dashboard_marker=naming.dashboard_marker(config),
        cutover_variables=MappingProxyType({k: MappingProxyType(v) for k, v in cutover.variables(config).items()}),
        # An AWS emulator neither performs nor stores a deployment configuration (moto drops it), so the
        # provider would read it back empty and plan to replace the endpoint on every deploy: none there.
        rollouts=configured_rollouts if config.endpoint_url is None else (),
        endpoints=endpoints,
        adopted_resources=frozenset(naming.adopted_resources(config)),
        configured_rollouts=configured_rollouts,
        written_tags=tuple(_written_tags(config)),
    )


#: The config's own defaults for a workload's scaling.
SCALING_DEFAULTS = ScalingDefaults(
    metric_setting=Autoscaling().metric,
    scale_from_zero_period=ScaleFromZeroSetting().period,
    scale_from_zero_evaluation_periods=ScaleFromZeroSetting().evaluation_periods,
)


def as_resolved(value: object) -> ResolvedStack:
    """``value`` if it is a resolved stack, else the validated config ``value`` resolved: for entry points that
    projects' own code calls with a config (the `main.py` earlier releases of `fastscale init` wrote)."""
    if isinstance(value, ResolvedStack):
        return value
    if isinstance(value, FastscaleConfig):
        return resolve(value)
    raise TypeError(f"expected a ResolvedStack or a FastscaleConfig, not {type(value).__name__}")


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping)) if mapping else EMPTY


def _overrides(overrides: Mapping[str, Mapping[str, Any]]) -> OverrideMap:
    return MappingProxyType({type_: MappingProxyType(dict(paths)) for type_, paths in overrides.items()})


def _count(setting: CapacitySetting) -> Count:
    return Count(initial=setting.initial, min=setting.min, max=setting.max)


def _endpoint(config: FastscaleConfig, index: int, ep: EndpointSpec) -> ResolvedEndpoint:
    names = naming.endpoint_names(config, ep)
    own_tags = naming.tags(config, ep)
    kept = ep.adopted.tags if ep.adopted is not None else None
    pools = tuple(ResolvedPool(index=i, priority=p.priority, instance_type=p.instance_type, path=p.path,
                               priority_set=p.fallback is not None and p.fallback.priority is not None)
                  for i, p in enumerate(capacity.pools(ep)))
    role = names.execution_role

    def workload(kind: WorkloadKind, key: str, path: str, name: str, spec: ModelSpec | InferenceComponentSpec, model: str,
                 adopted: Adopted | None, live_model_tags: Mapping[str, str], scaling: ResolvedScaling,
                 override: ModelOverride | None) -> ResolvedWorkload:
        key_arn = spec.model_data_kms_key_arn
        parsed = parse_kms_key_arn(key_arn) if key_arn else None
        return ResolvedWorkload(
            kind=kind, key=key, path=path, name=name, model=model, image=spec.image, model_data=spec.model_data,
            model_data_key=DataKey(arn=key_arn, region=parsed.region) if key_arn and parsed else None,
            # The form of an adopted model's data is part of the model, which cannot change; a URL cannot
            # carry the license acceptance, so `accept_eula` always takes the source form.
            model_data_as_url=bool(adopted is not None and adopted.model_data_url and model == adopted.model
                                   and not spec.accept_eula),
            accept_eula=spec.accept_eula,
            environment=_frozen(container_environment(spec)),
            secrets=tuple(Secret(arn=ref.arn, policy_resource=policy_resource(ref.arn), kms_key_arn=ref.kms_key_arn)
                          for _, ref in sorted(spec.secrets.items())),
            download_timeout=spec.model_download_timeout or ep.model_download_timeout,
            health_check_timeout=spec.startup_health_check_timeout or ep.startup_health_check_timeout,
            resources=Resources(accelerators=spec.resources.accelerators, memory_mb=spec.resources.memory_mb,
                                max_memory_mb=spec.resources.max_memory_mb, cpus=spec.resources.cpus)
            if isinstance(spec, InferenceComponentSpec) else None,
            data_cache=spec.data_cache if isinstance(spec, InferenceComponentSpec) else None,
            model_size_gb=spec.model_size_gb, image_size_gb=spec.image_size_gb, serving=spec.serving, scaling=scaling,
            model_tags=_frozen(naming.with_live_tags(own_tags, live_model_tags)),
            adopted_model=adopted.model if adopted is not None else None,
            pool_overrides=_set_keys(override),
        )

    model = model_on_pools = None
    if ep.model is not None:
        assert names.model is not None, "a single-model endpoint names its model"
        live = kept.model if kept else {}
        scaling = _scaling("model", ep.model.autoscaling, _count(ep.instances), names.resource_id,
                           aws_facts.VARIANT_INSTANCES, names.target_tracking_policy, None,
                           naming.with_live_tags(own_tags, kept.scalable_target if kept else {}))
        model_on_pools = tuple(
            workload("model", ep.name, "model", names.endpoint, on_pool,
                     names.model if i == 0 else naming.model_name(names.endpoint, ep, on_pool, role), ep.adopted, live,
                     scaling, p.fallback.model if p.fallback else None)
            for i, (p, on_pool) in enumerate((p, capacity.model_on(p, ep.model)) for p in capacity.pools(ep)))
        model = model_on_pools[0]

    components = []
    for i, (c, cn) in enumerate(zip(ep.inference_components, names.components, strict=True)):
        path = f"inference_components[{i}]"
        live = c.adopted.tags.model if c.adopted is not None else {}
        zero = (
            ScaleFromZero(policy=cn.scale_from_zero_policy, alarm=cn.scale_from_zero_alarm,
                          period=c.autoscaling.scale_from_zero.period,
                          evaluation_periods=c.autoscaling.scale_from_zero.evaluation_periods,
                          cooldown=c.autoscaling.scale_from_zero.cooldown)
            if cn.scale_from_zero_policy and cn.scale_from_zero_alarm else None
        )
        copies = _scaling("component", c.autoscaling, _count(c.copies), cn.resource_id, aws_facts.COMPONENT_COPIES,
                          cn.target_tracking_policy, zero,
                          naming.with_live_tags(own_tags, c.adopted.tags.scalable_target if c.adopted else {}))
        on_pools = tuple(
            workload("component", c.name, path, cn.name, on_pool,
                     cn.model if j == 0 else naming.model_name(cn.name, ep, on_pool, role), c.adopted, live, copies,
                     capacity.component_override(p, c))
            for j, (p, on_pool) in enumerate((p, capacity.component_on(p, c)) for p in capacity.pools(ep)))
        components.append(ResolvedComponent(
            key=c.name, path=path, name=cn.name, workload=on_pools[0], on_pools=on_pools,
            tags=_frozen(naming.with_live_tags(own_tags, c.adopted.tags.component if c.adopted is not None else {})),
            overrides=_overrides(c.overrides), alarms=_frozen(cn.alarms), stuck_at_zero_alarm=cn.stuck_at_zero_alarm,
            adopted_arn=c.adopted.arn if c.adopted is not None else None,
            adopted_scalable_target=bool(c.adopted is not None and c.adopted.scalable_target),
            adopted_scaling_policy=c.adopted.scaling_policy if c.adopted is not None else None,
        ))

    every: list[ResolvedWorkload] = []
    for pool_index in range(len(pools)):
        for w in [*(model_on_pools or ())[pool_index:pool_index + 1], *(c.on_pools[pool_index] for c in components)]:
            if _content(w) not in [_content(x) for x in every]:
                every.append(w)

    alarms = ep.alarms
    instance = catalog.get(ep.instance_type)
    cap = ep.capacity
    return ResolvedEndpoint(
        key=ep.name, path=f"endpoints[{index}]", name=names.endpoint, region=config.region, variant=names.variant,
        resource_id=names.resource_id, endpoint_config=names.endpoint_config,
        endpoint_config_prefix=names.endpoint_config_prefix, execution_role=role,
        execution_role_arn=ep.execution_role_arn,
        tags=_frozen(own_tags),
        role_tags=_frozen(naming.tags(config, ep, global_resource=True)),
        endpoint_tags=_frozen(naming.with_live_tags(own_tags, kept.endpoint if kept else {})),
        config_tags=_frozen(naming.with_live_tags(own_tags, kept.endpoint_config if kept else {})),
        instance_type=ep.instance_type, pools=pools, instances=_count(ep.instances),
        routing=ResolvedRouting(
            setting=ep.routing,
            strategy=aws_facts.ROUTING_STRATEGIES[ep.routing] if ep.routing is not None else None,
            in_effect=ep.routing_in_effect,
            prefix_length=ep.prefix_routing.prefix_length if ep.prefix_routing else None,
            concurrency_threshold=ep.prefix_routing.concurrency_threshold if ep.prefix_routing else None,
        ),
        awscc_config=ep.needs_awscc_config, needs_awscc=ep.needs_awscc,
        inference_ami_version=ep.inference_ami_version, kms_key_arn=ep.kms_key_arn,
        vpc=Vpc(subnets=tuple(sorted(ep.vpc.subnets)), security_groups=tuple(sorted(ep.vpc.security_groups)))
        if ep.vpc else None,
        volume_size_gb=ep.volume_size_gb,
        metrics=Metrics(publish_frequency=ep.metrics_publish_frequency, enhanced=ep.enhanced_metrics,
                        detailed_observability=bool(ep.detailed_observability)),
        provision_timeout=cap.provision_timeout, reservation_arn=cap.reservation_arn or None,
        scale_in=ScaleIn(strategy=ep.scale_in.strategy, cooldown_minutes=ep.scale_in.cooldown_minutes,
                         max_step=ep.scale_in.max_step) if ep.scale_in is not None else None,
        placement=Placement(strategy=cap.placement.strategy, az_balance=cap.placement.az_balance is not None,
                            max_imbalance=cap.placement.az_balance.max_imbalance if cap.placement.az_balance else None)
        if cap.placement is not None else None,
        alarms=ResolvedAlarms(
            enabled=alarms.enabled, names=_frozen(names.alarms),
            sns_topic_arn=alarms.sns_topic_arn if alarms.enabled else None, period=alarms.period,
            evaluation_periods=alarms.evaluation_periods, model_latency_ms=alarms.model_latency_ms,
            errors_5xx=alarms.errors_5xx, gpu_memory_percent=alarms.gpu_memory_percent,
            # Unknown types are reported by validation; one GPU keeps the threshold as configured.
            gpus_per_instance=instance.accelerator_count if instance is not None else 1,
            stuck_at_zero_minutes=alarms.stuck_at_zero_minutes,
        ),
        cutover_variable=cutover.variable_name(ep),
        overrides=_overrides(ep.overrides),
        adopted=ep.adopted is not None,
        adopted_model=ep.adopted.model if ep.adopted is not None else None,
        adopted_scalable_target=bool(ep.adopted is not None and ep.adopted.scalable_target),
        adopted_scaling_policy=ep.adopted.scaling_policy if ep.adopted is not None else None,
        model=model, model_on_pools=model_on_pools or (), components=tuple(components),
        every_workload=tuple(every),
        pool_models=tuple(names.pool_models),
        fallback_candidates=tuple(fallback_candidates(ep, exclude=capacity.instance_types(ep), n=FALLBACK_SUGGESTIONS)),
        awscc_reasons=tuple(ep.awscc_config_reasons),
        tagged_resources=tuple(_tagged_resources(config, ep, f"endpoints[{index}]")),
        deployment_keys=frozenset(k for k in ("blue_green", "rolling", "components")
                                  # `components` has a default: written only when the file sets it
                                  if (k in ep.deployment.model_fields_set if k == "components"
                                      else getattr(ep.deployment, k) is not None)),
    )


def _written_tags(config: FastscaleConfig) -> Iterator[tuple[str, Mapping[str, str]]]:
    yield "tags", _frozen(config.tags)
    for i, ep in enumerate(config.endpoints):
        if ep.adopted is not None:
            for kind, kept in ep.adopted.tags:
                yield f"endpoints[{i}].adopted.tags.{kind}", _frozen(kept)
        for j, c in enumerate(ep.inference_components):
            if c.adopted is not None:
                for kind, kept in c.adopted.tags:
                    yield f"endpoints[{i}].inference_components[{j}].adopted.tags.{kind}", _frozen(kept)


def _tagged_resources(config: FastscaleConfig, ep: EndpointSpec, path: str) -> Iterator[TaggedResource]:
    base = naming.tags(config, ep)
    if ep.execution_role_arn:
        yield TaggedResource("resources", None, "tags", _frozen(base))
    else:
        yield TaggedResource("execution_role", None, "tags", _frozen(naming.tags(config, ep, global_resource=True)))
    if ep.adopted is not None:
        for kind, kept in ep.adopted.tags:
            if kept:
                yield TaggedResource(kind, None, f"{path}.adopted.tags.{kind}", _frozen(naming.with_live_tags(base, kept)))
    for j, c in enumerate(ep.inference_components):
        if c.adopted is not None:
            for kind, kept in c.adopted.tags:
                if kept:
                    yield TaggedResource(kind, c.name, f"{path}.inference_components[{j}].adopted.tags.{kind}",
                                         _frozen(naming.with_live_tags(base, kept)))


def _set_keys(override: ModelOverride | None) -> frozenset[str]:
    """The settings ``override`` sets (those it leaves unset are inherited)."""
    return frozenset(k for k in type(override).model_fields if getattr(override, k) is not None) if override else frozenset()


def _content(w: ResolvedWorkload) -> tuple[object, ...]:
    """What makes two workloads the same for the execution role (name and paths aside)."""
    return (w.image, w.model_data, w.model_data_key, tuple(w.environment.items()), w.secrets)


def _scaling(kind: WorkloadKind, autoscaling: Autoscaling, count: Count, resource_id: str, dimension: str,
             policy: str | None, zero: ScaleFromZero | None, target_tags: Mapping[str, str]) -> ResolvedScaling:
    return ResolvedScaling(
        kind=kind, enabled=autoscaling.enabled, count=count, resource_id=resource_id, dimension=dimension,
        metric_setting=autoscaling.metric, metric=scaling_metric(kind, autoscaling), policy=policy,
        target=autoscaling.tracking_target, target_concurrency=autoscaling.target_concurrency,
        target_invocations=autoscaling.target_invocations, scale_in_cooldown=autoscaling.scale_in_cooldown,
        scale_out_cooldown=autoscaling.scale_out_cooldown,
        zero_alarm=ZeroAlarm(period=autoscaling.scale_from_zero.period,
                             evaluation_periods=autoscaling.scale_from_zero.evaluation_periods,
                             cooldown=autoscaling.scale_from_zero.cooldown),
        scale_from_zero=zero,
        target_tags=_frozen(target_tags),
    )


