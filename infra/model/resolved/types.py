"""The resolved stack: what a validated config builds, every name, tag, default and choice decided once.

Immutable: frozen dataclasses, tuples and read-only mappings (``types.MappingProxyType``). Built only by
:func:`infra.model.resolved.resolve`; the stacks read nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from fastscale.infra.config import Serving
from fastscale.infra.model.deployment import Rollout
from fastscale.infra.model.detection import ScalingMetric, WorkloadKind
from fastscale.infra.model.instance_fit import Candidate
from fastscale.infra.model.state import LocalStatePlacement, local_placement

#: Tags, environments and overrides are read-only mappings; an empty one stands for "none".
Tags = Mapping[str, str]
#: `overrides:` of one entry: Terraform type -> attribute path -> value, as the config gives them.
OverrideMap = Mapping[str, Mapping[str, Any]]

EMPTY: Mapping[str, Any] = MappingProxyType({})


#: How many stand-in instance types an endpoint is resolved with (and an insufficient-capacity finding of
#: `explain` names).
FALLBACK_SUGGESTIONS = 3


@dataclass(frozen=True)
class Count:
    """Instance or copy counts: at deploy time, and the range auto scaling keeps them in."""

    initial: int
    min: int
    max: int


@dataclass(frozen=True)
class ZeroAlarm:
    """The scale-from-zero alarm's settings as the config gives them (or defaults), whether or not the workload
    can reach zero: what a what-if without a warm minimum would run with."""

    period: int
    evaluation_periods: int
    cooldown: int


@dataclass(frozen=True)
class ScaleFromZero:
    """The step-scaling policy and alarm that add the first copy of a component scaled to zero."""

    policy: str
    alarm: str
    period: int
    evaluation_periods: int
    cooldown: int


@dataclass(frozen=True)
class ScalingDefaults:
    """What a workload's scaling is when its config leaves it out: for estimates of a workload with no config."""

    metric_setting: Literal["high_resolution", "invocations"]
    scale_from_zero_period: int
    scale_from_zero_evaluation_periods: int


@dataclass(frozen=True)
class ResolvedScaling:
    """How one workload scales: the scalable target (variant instances or component copies) and its policies.

    ``mode``: ``off`` (no scalable target), ``target_tracking``, or ``target_tracking_and_scale_from_zero`` (a
    component whose copies may reach zero also gets the step-scaling pair that brings the first copy back)."""

    kind: WorkloadKind
    enabled: bool
    count: Count
    resource_id: str
    dimension: str
    metric_setting: Literal["high_resolution", "invocations"]
    metric: ScalingMetric
    policy: str | None  # the target-tracking policy's name (None when auto scaling is off on a single model)
    target: float  # in the metric's own unit: concurrency, or invocations per minute
    target_concurrency: float
    target_invocations: float | None
    scale_in_cooldown: int
    scale_out_cooldown: int
    zero_alarm: ZeroAlarm
    scale_from_zero: ScaleFromZero | None  # only when the copies may reach zero with auto scaling on
    #: The scalable target's tags: the stack's, over the live ones an adopted target keeps.
    target_tags: Mapping[str, str]

    @property
    def mode(self) -> Literal["off", "target_tracking", "target_tracking_and_scale_from_zero"]:
        if not self.enabled:
            return "off"
        return "target_tracking_and_scale_from_zero" if self.scale_from_zero is not None else "target_tracking"


@dataclass(frozen=True)
class Secret:
    """A Secrets Manager secret a container is told about (its ARN in `<NAME>_SECRET_ARN`)."""

    arn: str
    policy_resource: str  # the ARN as an IAM policy names it (any version suffix)
    kms_key_arn: str | None


@dataclass(frozen=True)
class DataKey:
    """A customer managed key the model data is encrypted with, and its region."""

    arn: str
    region: str


@dataclass(frozen=True)
class Resources:
    """Compute reserved per copy of a component."""

    accelerators: int | None
    memory_mb: int
    max_memory_mb: int | None
    cpus: float | None


@dataclass(frozen=True)
class ResolvedWorkload:
    """A single model or an inference component's model, as it runs on one instance pool.

    ``key`` is the component's config name (the endpoint's for a single model), ``model`` the SageMaker model's
    name (content-named, or the adopted live one), ``environment`` what the container gets (secrets included
    as their ARNs), the timeouts the workload's own or else the endpoint's."""

    kind: WorkloadKind
    key: str
    path: str  # config path below the endpoint: "model" or "inference_components[i]"
    name: str  # in AWS: the component's, or the endpoint's for a single model
    model: str
    image: str
    model_data: str | None
    model_data_key: DataKey | None
    model_data_as_url: bool  # the adopted model names its data as a URL, kept so it is not replaced
    accept_eula: bool
    environment: Mapping[str, str]
    secrets: tuple[Secret, ...]
    download_timeout: int | None
    health_check_timeout: int | None
    resources: Resources | None  # components only
    data_cache: bool | None  # components only (None: not written, the API's default)
    model_size_gb: float | None
    image_size_gb: float | None
    #: how the container serves (measured rates, limits, model shape): the config's own settings, read only
    serving: Serving
    scaling: ResolvedScaling
    model_tags: Tags
    adopted_model: str | None  # the live model this workload adopted
    # -- for the rules about what will be built (`infra.rules.stack_rule`)
    #: the settings a fallback pool's override sets for this workload (`image`, `environment`, `resources`...):
    #: empty on the endpoint's own type and where the pool runs it unchanged
    pool_overrides: frozenset[str] = frozenset()

    @property
    def is_component(self) -> bool:
        return self.kind == "component"


@dataclass(frozen=True)
class ResolvedComponent:
    """One inference component: its names, tags, copies, scaling and what it runs on each pool."""

    key: str  # config name
    path: str  # "inference_components[i]"
    name: str  # in AWS (`<project>-<key>`, or the adopted live name)
    workload: ResolvedWorkload
    #: the workload on every pool of the endpoint, in config order (the first is `workload` itself)
    on_pools: tuple[ResolvedWorkload, ...]
    tags: Tags
    overrides: OverrideMap
    alarms: Mapping[str, str]  # kind -> name of its own rollback alarms
    stuck_at_zero_alarm: str | None
    adopted_arn: str | None
    adopted_scalable_target: bool
    adopted_scaling_policy: str | None

    @property
    def scaling(self) -> ResolvedScaling:
        return self.workload.scaling

    @property
    def copies(self) -> Count:
        return self.workload.scaling.count

    @property
    def data_cache(self) -> bool | None:
        return self.workload.data_cache


@dataclass(frozen=True)
class ResolvedPool:
    """An instance pool of the endpoint's variant: the endpoint's own type (index 0) or a fallback."""

    index: int  # position in config order: 0 the endpoint's own type, i + 1 `capacity.fallback[i]`
    priority: int
    instance_type: str
    path: str
    # -- for the rules about what will be built (`infra.rules.stack_rule`)
    priority_set: bool = False  # written in the config (else the list order's default)


@dataclass(frozen=True)
class ResolvedRouting:
    """The variant's routing: the config's setting, the API value written (None: no RoutingConfig), and the
    strategy in effect (AWS's default, random, when none is written)."""

    setting: str | None
    strategy: str | None
    in_effect: str
    prefix_length: int | None
    concurrency_threshold: int | None


@dataclass(frozen=True)
class ResolvedAlarms:
    """The endpoint's operational alarms: their names by kind and the thresholds they share with its components."""

    enabled: bool
    names: Mapping[str, str]
    sns_topic_arn: str | None  # notified only while alarms are enabled
    period: int
    evaluation_periods: int
    model_latency_ms: float
    errors_5xx: int
    gpu_memory_percent: float
    gpus_per_instance: int  # the GPU-memory alarm's threshold is per GPU; 1 for an unknown type
    stuck_at_zero_minutes: int


@dataclass(frozen=True)
class Vpc:
    subnets: tuple[str, ...]  # sorted
    security_groups: tuple[str, ...]  # sorted


@dataclass(frozen=True)
class ScaleIn:
    strategy: str
    cooldown_minutes: int | None
    max_step: int | None


@dataclass(frozen=True)
class Placement:
    strategy: str
    az_balance: bool
    max_imbalance: int | None


@dataclass(frozen=True)
class Metrics:
    """The endpoint configuration's MetricsConfig (written only on awscc's configuration)."""

    publish_frequency: int | None
    enhanced: bool
    detailed_observability: bool  # fastscale's default: off wherever it writes a metrics configuration


@dataclass(frozen=True)
class TaggedResource:
    """A resource whose tags are not its endpoint's own: the execution role (which also carries the region)
    or, with the config's own role, the endpoint's resources; and each adopted resource that keeps live tags."""

    #: "execution_role", "resources", or the adopted resource's kind as `adopted.tags` names it (endpoint,
    #: endpoint_config, model, scalable_target, component)
    kind: str
    component: str | None  # the component's config name, for one of its resources
    path: str  # the config path that adds tags to it: "tags", or its `adopted.tags.<kind>`
    tags: Tags  # every tag the stack puts on it


@dataclass(frozen=True)
class ResolvedEndpoint:
    """One endpoint of the stack, resolved."""

    key: str  # config name
    path: str  # "endpoints[i]"
    name: str  # in AWS (`<project>-<key>`, or the adopted live name)
    region: str  # the stack's
    variant: str
    resource_id: str  # the variant's scalable target
    endpoint_config: str | None  # the adopted configuration's live name, kept
    endpoint_config_prefix: str
    execution_role: str | None  # the role fastscale creates; None with the config's own
    execution_role_arn: str | None  # the config's own role
    tags: Tags
    role_tags: Tags  # a global resource's: the region too
    endpoint_tags: Tags  # the stack's over the live ones an adopted endpoint keeps
    config_tags: Tags
    instance_type: str
    pools: tuple[ResolvedPool, ...]  # config order, the endpoint's own type first
    instances: Count
    routing: ResolvedRouting
    awscc_config: bool
    needs_awscc: bool
    inference_ami_version: str | None
    kms_key_arn: str | None
    vpc: Vpc | None
    volume_size_gb: int | None
    metrics: Metrics
    provision_timeout: int | None
    reservation_arn: str | None
    scale_in: ScaleIn | None
    placement: Placement | None
    alarms: ResolvedAlarms
    cutover_variable: str
    overrides: OverrideMap
    adopted: bool
    adopted_model: str | None  # the live model named by the endpoint's `adopted` block
    adopted_scalable_target: bool
    adopted_scaling_policy: str | None
    model: ResolvedWorkload | None
    #: the single model on every pool, config order (empty for components)
    model_on_pools: tuple[ResolvedWorkload, ...]
    components: tuple[ResolvedComponent, ...]
    #: every workload on every pool, without repeats: what the execution role must reach
    every_workload: tuple[ResolvedWorkload, ...]
    #: the extra models of the fallback pools (a pool that runs another image, model data or environment)
    pool_models: tuple[str, ...]
    #: types that could stand in when AWS has no capacity of the endpoint's types (`infra.model.instance_fit`),
    #: cheapest first, at most `FALLBACK_SUGGESTIONS`
    fallback_candidates: tuple[Candidate, ...]
    # -- for the rules about what will be built (`infra.rules.stack_rule`)
    #: (setting, why) for each setting that makes the endpoint configuration awscc's (`awscc_config`), config order
    awscc_reasons: tuple[tuple[str, str], ...] = ()
    #: the update settings the endpoint's `deployment` writes of `blue_green`, `rolling` and `components`
    deployment_keys: frozenset[str] = frozenset()
    #: the resources whose tags differ from `tags`, config order
    tagged_resources: tuple[TaggedResource, ...] = ()

    @property
    def uses_components(self) -> bool:
        return bool(self.components)

    @property
    def scaling(self) -> ResolvedScaling | None:
        """The single model's scaling (instances); None on a component endpoint, whose copies scale."""
        return self.model.scaling if self.model is not None else None

    @property
    def workloads(self) -> tuple[ResolvedWorkload, ...]:
        """The single model, or every component's workload, in config order."""
        return (self.model,) if self.model is not None else tuple(c.workload for c in self.components)

    @property
    def next_pool(self) -> ResolvedPool | None:
        """The pool SageMaker turns to when the first has no capacity (None without fallback types)."""
        return self.pools_by_priority[1] if self.has_pools else None

    def on_pool(self, workload: ResolvedWorkload, pool: ResolvedPool) -> ResolvedWorkload:
        """``workload`` as it runs on ``pool``."""
        if workload.kind == "model":
            return self.model_on_pools[pool.index]
        return next(c for c in self.components if c.key == workload.key).on_pools[pool.index]

    @property
    def has_pools(self) -> bool:
        return len(self.pools) > 1

    @property
    def pools_by_priority(self) -> tuple[ResolvedPool, ...]:
        """The order SageMaker tries the pools in (config order breaks a tie)."""
        return tuple(sorted(self.pools, key=lambda p: p.priority))

    @property
    def all_alarm_names(self) -> tuple[str, ...]:
        names = list(self.alarms.names.values())
        for c in self.components:
            names += c.alarms.values()
            if c.scaling.scale_from_zero is not None:
                names.append(c.scaling.scale_from_zero.alarm)
            if c.stuck_at_zero_alarm:
                names.append(c.stuck_at_zero_alarm)
        return tuple(names)


@dataclass(frozen=True)
class S3Backend:
    bucket: str
    key: str
    region: str  # the bucket's, else the stack's
    use_lockfile: bool
    dynamodb_table: str | None
    encrypt: bool
    kms_key_id: str | None
    endpoint_url: str | None


@dataclass(frozen=True)
class ResolvedStack:
    """The whole config, resolved: one Terraform stack."""

    name: str
    project: str
    region: str
    tags: Tags  # the stack's own (resources of no endpoint)
    endpoint_url: str | None
    sends_credentials_to_endpoint: bool
    s3_backend: S3Backend | None  # None: local state
    local_state_path: str | None  # the configured path of the local state (None: the default)
    aws_provider: str  # version constraints
    awscc_provider: str
    needs_awscc: bool
    dashboard: str | None  # the dashboard the stack creates, None when disabled
    dashboard_name: str  # its name, looked for at teardown even while disabled
    dashboard_marker: str
    cutover_variables: Mapping[str, Mapping[str, Any]]
    rollouts: tuple[Rollout, ...]  # none against an emulator, which keeps no deployment configuration
    endpoints: tuple[ResolvedEndpoint, ...]
    #: (inventory kind, lower-case name) of every live resource the config adopts
    adopted_resources: frozenset[tuple[str, str]] = field(default=frozenset())
    # -- for the rules about what will be built (`infra.rules.stack_rule`)
    #: the update of every single-model endpoint and every component as configured, in config order, also
    #: against an emulator (where `rollouts` is empty)
    configured_rollouts: tuple[Rollout, ...] = ()
    #: (config path, tags) of every tag map the config writes: its `tags`, then each adopted resource's live
    #: tags (`...adopted.tags.<kind>`, empty ones too), config order
    written_tags: tuple[tuple[str, Tags], ...] = ()

    def endpoint(self, key: str) -> ResolvedEndpoint:
        """The endpoint named ``key`` in the config."""
        return next(ep for ep in self.endpoints if ep.key == key)

    def state_placement(self, outdir: str | Path, project_root: str | Path | None = None) -> LocalStatePlacement | None:
        """Where the local state lies when synthesized into ``outdir`` (None with S3 state); see
        `infra.model.state.local_placement` for what it refuses."""
        if self.s3_backend is not None:
            return None
        return local_placement(self.name, self.region, self.local_state_path, outdir, project_root)
