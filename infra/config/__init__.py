"""The typed fastscale configuration, loaded from one YAML file.

The model checks *shape* (types, unknown keys, required fields). Everything that needs judgement about
AWS (does the model fit the GPU, is the image cacheable, are the names legal) lives in ``infra.rules`` so
that all problems are collected and reported together instead of stopping at the first one.
"""

from __future__ import annotations

import difflib
import json
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    PrivateAttr,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from fastscale.infra.base.limits import ApiInt, Number
from fastscale.infra.base.network import refused_reason
from fastscale.infra.base.provider_versions import DEFAULT_AWS, DEFAULT_AWSCC, Constraint, ConstraintError
from fastscale.infra.base.safe_files import SpecialFileError, read_bytes
from fastscale.infra.config import safe_yaml
from fastscale.infra.config.secrets import redact as mask

_ENV_NAME_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def _env_name(name: str) -> str:
    if not _ENV_NAME_RE.fullmatch(name):
        raise ValueError(
            f"{name[:64]!r} is not a valid environment variable name for SageMaker: letters, digits and _ only, "
            "not starting with a digit"
        )
    return name


#: botocore's limits on SageMaker environment maps and tags (EnvironmentKey/Value, TagKey/Value).
EnvName = Annotated[str, StringConstraints(max_length=1024), AfterValidator(_env_name)]
EnvValue = Annotated[str, StringConstraints(max_length=1024)]
TagKey = Annotated[str, StringConstraints(min_length=1, max_length=128)]
TagValue = Annotated[str, StringConstraints(max_length=256)]

#: `overrides:` of an endpoint or component: Terraform resource type -> dotted attribute path -> value.
OverrideType = Annotated[str, StringConstraints(min_length=1, max_length=128)]
OverridePath = Annotated[str, StringConstraints(min_length=1, max_length=1024)]
Overrides = dict[OverrideType, dict[OverridePath, JsonValue]]
_OVERRIDES_HELP = (
    "Raw provider attributes of the resources this entry synthesizes: {<terraform resource type>: {<dotted "
    "attribute path>: value}}, e.g. {aws_sagemaker_endpoint_configuration: {production_variants.0."
    "enable_ssm_access: true}}. Added or replacing what fastscale writes; checked against the provider schema; "
    "strings sent literally (never evaluated by Terraform). See docs/overrides.md for the types each entry "
    "can target and the attributes fastscale keeps."
)

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails


class _Strict(BaseModel):
    """Base for every config section: unknown keys are errors, so a typo never silently does nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)


# --------------------------------------------------------------------------------------------- scaling


class Capacity(_Strict):
    """A min / initial / max triple (instances of an endpoint, or copies of an inference component)."""

    initial: ApiInt = Field(1, description="Count created at deploy time.")
    min: ApiInt = Field(1, description="Lowest count auto scaling may go to (0 enables scale to zero for components).")
    max: ApiInt = Field(1, description="Highest count auto scaling may go to.")


class ScaleFromZero(_Strict):
    """The alarm + step policy that adds the first copy when a component scaled to zero gets traffic."""

    period: ApiInt = Field(
        60,
        description="Alarm period in seconds on NoCapacityInvocationFailures. 60 is the period of AWS's developer "
        "guide; 10/20/30 (AWS's samples use 30) are accepted with a note (FS028): AWS does not document that this "
        "metric is published at high resolution.",
    )
    evaluation_periods: ApiInt = Field(1, description="Datapoints that must breach before the first copy is added.")
    cooldown: ApiInt = Field(60, description="Step-scaling cooldown in seconds.")


class Autoscaling(_Strict):
    """Target tracking on concurrency; high-resolution (10-second) metrics by default."""

    enabled: bool = Field(True, description="Register a scalable target and a target-tracking policy.")
    metric: Literal["high_resolution", "invocations"] = Field(
        "high_resolution",
        description="high_resolution: ConcurrentRequestsPerCopy / ConcurrentRequestsPerModel, emitted every 10 s "
        "(scale-out reacts in ~30 s). invocations: the legacy 1-minute InvocationsPer* metrics (~3 min).",
    )
    target_concurrency: Number = Field(
        4, description="Target value: concurrent requests per copy (components) or per model (single-model endpoints)."
    )
    scale_in_cooldown: ApiInt = Field(300, description="Seconds after a scale-in before another scale-in.")
    scale_out_cooldown: ApiInt = Field(0, description="Seconds after a scale-out before another scale-out.")
    scale_from_zero: ScaleFromZero = Field(
        default_factory=ScaleFromZero, description="Alarm + step policy used when copies.min is 0."
    )


# --------------------------------------------------------------------------------------------- updates

#: The alarms automatic rollback watches unless `rollback_alarms` says otherwise.
DEFAULT_ROLLBACK_ALARMS = ("5xx-errors", "model-latency")

#: Alarm name or alarm kind of this stack (`5xx-errors`, `model-latency`, `gpu-memory`, `stuck-at-zero`).
AlarmRef = Annotated[str, StringConstraints(min_length=1, max_length=255)]


class InstanceStep(_Strict):
    """A step of an endpoint update: a number of instances, or a percentage of the endpoint's instances."""

    type: Literal["INSTANCE_COUNT", "CAPACITY_PERCENT"] = Field(
        "INSTANCE_COUNT", description="INSTANCE_COUNT: `value` instances; CAPACITY_PERCENT: `value` % of the instances."
    )
    value: ApiInt = Field(1, ge=1, description="Instances, or percent of the instances (at least 1).")


class CopyStep(_Strict):
    """A step of a component update: a number of copies, or a percentage of the component's copies."""

    type: Literal["COPY_COUNT", "CAPACITY_PERCENT"] = Field(
        "COPY_COUNT", description="COPY_COUNT: `value` copies; CAPACITY_PERCENT: `value` % of the copies."
    )
    value: ApiInt = Field(1, ge=1, description="Copies, or percent of the copies (at least 1).")


_BAKE_TIME = (
    "Seconds SageMaker watches the rollback alarms after each step before it goes on (WaitIntervalInSeconds, "
    "0-3600). Default: the longest evaluation window of the rollback alarms (period x evaluation periods) plus "
    "one period for the last datapoint to arrive, so an alarm can fire before the step is accepted."
)
_TIMEOUT = (
    "MaximumExecutionTimeoutInSeconds: the whole update fails (and rolls back) when it takes longer. Unset: "
    "SageMaker's default."
)


class ComponentRolling(_Strict):
    """Rolling update of an inference component: new copies replace old ones a batch at a time."""

    batch: CopyStep = Field(
        default_factory=CopyStep, description="Copies started (and old ones stopped) per step (MaximumBatchSize)."
    )
    bake_time: ApiInt | None = Field(None, ge=0, le=3600, description=_BAKE_TIME)
    timeout: ApiInt | None = Field(None, ge=600, le=28800, description=_TIMEOUT)
    rollback_batch: CopyStep | None = Field(
        None,
        description="Copies restored per step when rolling back (RollbackMaximumBatchSize). Unset: all at once, "
        "the fastest way back.",
    )


class EndpointRolling(_Strict):
    """Rolling update of a single-model endpoint: new instances replace old ones a batch at a time."""

    batch: InstanceStep = Field(
        default_factory=InstanceStep, description="Instances started (and old ones stopped) per step (MaximumBatchSize)."
    )
    bake_time: ApiInt | None = Field(None, ge=0, le=3600, description=_BAKE_TIME)
    timeout: ApiInt | None = Field(None, ge=600, le=28800, description=_TIMEOUT + " hashicorp/aws accepts at most 14400.")
    rollback_batch: InstanceStep | None = Field(
        None,
        description="Instances restored per step when rolling back (RollbackMaximumBatchSize). Unset: all at "
        "once, the fastest way back.",
    )


class BlueGreen(_Strict):
    """Blue/green update of a single-model endpoint: a new fleet is started, then traffic moves to it."""

    traffic: Literal["ALL_AT_ONCE", "CANARY", "LINEAR"] = Field(
        "ALL_AT_ONCE",
        description="ALL_AT_ONCE moves every request at once, then bakes; CANARY moves `step` first, bakes, then the "
        "rest; LINEAR moves `step` at a time, baking after each.",
    )
    step: InstanceStep | None = Field(
        None,
        description="CANARY: the canary's size (CanarySize, at most 50 % of the instances); LINEAR: the size of each "
        "step (LinearStepSize, 10-50 % of the instances). Required for both, not allowed with ALL_AT_ONCE.",
    )
    bake_time: ApiInt | None = Field(None, ge=0, le=3600, description=_BAKE_TIME)
    termination_wait: ApiInt = Field(
        0,
        ge=0,
        le=3600,
        description="Seconds the old fleet is kept after all traffic moved, before it is terminated "
        "(TerminationWaitInSeconds, 0-3600).",
    )
    timeout: ApiInt | None = Field(None, ge=600, le=28800, description=_TIMEOUT + " hashicorp/aws accepts at most 14400.")


class Deployment(_Strict):
    """How updates roll out (a new image, model data or setting): strategy, bake time, automatic rollback."""

    auto_rollback: bool = Field(
        True,
        description="Roll the update back when one of `rollback_alarms` fires during it (AutoRollbackConfiguration).",
    )
    rollback_alarms: list[AlarmRef] = Field(
        default_factory=lambda: list(DEFAULT_ROLLBACK_ALARMS),
        min_length=1,
        max_length=10,
        description="Alarms of this stack that roll an update back (1-10): an alarm kind (`5xx-errors`, "
        "`model-latency`, `gpu-memory`, and `stuck-at-zero` for components that scale to zero) or the full name of an "
        "alarm the stack creates. Components watch their own 5xx and latency alarms. The stack creates the "
        "5xx and latency alarms they name even when `alarms.enabled` is false.",
    )
    blue_green: BlueGreen | None = Field(
        None,
        description="Single-model endpoints: blue/green update (the default, ALL_AT_ONCE with a bake time).",
    )
    rolling: EndpointRolling | None = Field(
        None, description="Single-model endpoints: rolling update instead of blue/green (fewer extra instances)."
    )
    components: ComponentRolling = Field(
        default_factory=ComponentRolling,
        description="Inference-component endpoints: the rolling update of every component (one copy at a time by "
        "default); a component's own `deployment` overrides it.",
    )


class ComponentDeployment(_Strict):
    """A component's own update settings; unset keys come from the endpoint's `deployment`."""

    auto_rollback: bool | None = Field(None, description="Overrides the endpoint's `deployment.auto_rollback`.")
    rollback_alarms: list[AlarmRef] | None = Field(
        None, min_length=1, max_length=10, description="Overrides the endpoint's `deployment.rollback_alarms`."
    )
    rolling: ComponentRolling | None = Field(None, description="Overrides the endpoint's `deployment.components`.")


# --------------------------------------------------------------------------------------------- adopted


def _live_name(value: str) -> str:
    if not _SAGEMAKER_NAME_RE.fullmatch(value):
        raise ValueError(
            f"{value[:80]!r} is not a SageMaker resource name: letters, digits and hyphens, starting and ending "
            "with a letter or digit, at most 63 characters (copy it from the AWS console or `fastscale adopt`)"
        )
    return value


def _policy_name(value: str) -> str:
    if "${" in value or "%{" in value:
        raise ValueError(f"{value[:80]!r}: a scaling policy name fastscale adopts may not contain '${{' or '%{{'")
    return value


_SAGEMAKER_NAME_RE = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")
#: The name of a live SageMaker resource (model, endpoint configuration, endpoint, variant, component).
LiveName = Annotated[str, AfterValidator(_live_name)]
#: The name of a live Application Auto Scaling policy (1-256 printable characters).
PolicyName = Annotated[str, StringConstraints(min_length=1, max_length=256, pattern=r"^[\x20-\x7e]+$"),
                       AfterValidator(_policy_name)]


class Adopted(_Strict):
    """What an endpoint and a component adopt alike: the live model, its data form, its auto scaling."""

    model: LiveName | None = Field(
        None,
        description="Name of the live SageMaker model to keep. A model cannot be changed: remove this key in the "
        "same change as a new image, model data or environment, so the new model gets a fresh name.",
    )
    model_data_url: bool = Field(
        False,
        description="The live model names its data as ModelDataUrl (as the SageMaker Python SDK creates models) "
        "instead of ModelDataSource: keep that form, since changing it would replace the model.",
    )
    scalable_target: bool = Field(
        False, description="The live resource has an Application Auto Scaling scalable target: import it."
    )
    scaling_policy: PolicyName | None = Field(
        None, description="Name of the live target-tracking policy to keep (and import) instead of fastscale's own name."
    )


class AdoptedEndpoint(Adopted):
    """Live resources this endpoint takes over (written by `fastscale adopt`, docs/adopt.md): their names are
    kept instead of fastscale's naming, and the next deploy imports them into the Terraform state (import
    blocks) instead of creating new ones. Once imported, the import blocks change nothing."""

    endpoint: LiveName = Field(..., description="Name of the live endpoint; replaces `<project>-<name>`.")
    endpoint_config: LiveName | None = Field(
        None,
        description="Name of the live endpoint configuration to keep. A configuration cannot be changed: remove "
        "this key in the same change as any setting of the variant (instance type, counts, routing, model), so "
        "the new configuration gets a fresh name and the endpoint switches to it.",
    )
    variant: LiveName = Field("AllTraffic", description="Name of the live production variant.")


class AdoptedComponent(Adopted):
    """A live inference component this component takes over (see `AdoptedEndpoint`)."""

    name: LiveName = Field(..., description="Name of the live inference component; replaces `<project>-<name>`.")
    arn: str = Field(
        ...,
        pattern=r"^arn:aws[a-z-]*:sagemaker:[a-z0-9-]+:\d{12}:inference-component/[a-zA-Z0-9-]{1,63}$",
        description="ARN of the live inference component (hashicorp/awscc imports it by ARN).",
    )


# --------------------------------------------------------------------------------------------- workloads


class Resources(_Strict):
    """Compute reserved for one copy of an inference component on an instance."""

    accelerators: ApiInt | None = Field(None, description="Accelerator devices per copy (GPUs / Neuron devices).")
    memory_mb: ApiInt = Field(..., description="Minimum host memory per copy in MB (required by the API).")
    max_memory_mb: ApiInt | None = Field(None, description="Optional memory ceiling per copy in MB.")
    cpus: Number | None = Field(None, description="CPU cores per copy.")


class SecretRef(_Strict):
    """An AWS Secrets Manager secret the container reads at start (see docs/secrets.md)."""

    arn: str = Field(
        ...,
        description="Secret ARN, arn:<partition>:secretsmanager:<region>:<account>:secret:<name>, in the "
        "project's region. The execution role may read exactly this secret.",
    )
    kms_key_arn: str | None = Field(
        None,
        description="Customer managed KMS key that encrypts the secret, if any: the role may use it to decrypt "
        "only through Secrets Manager.",
    )


def _secret_shorthand(value: Any) -> Any:
    return {"arn": value} if isinstance(value, str) else value


class Serving(_Strict):
    """What one copy (one instance of a single-model endpoint) serves: its capacity, separate from the scaling
    target. Used by `fastscale estimate`, `simulate` and `recommend`; nothing here reaches AWS."""

    max_concurrency: Number | None = Field(
        None,
        gt=0,
        description="Concurrent requests at which one copy saturates (time to first token starts to climb); beyond "
        "it requests queue. Default: autoscaling.target_concurrency / 0.8, i.e. the target leaves 20% headroom. "
        "Measure it with a load test of one copy.",
    )
    prefill_tokens_per_second: Number | None = Field(
        None,
        gt=0,
        description="Prompt tokens one copy prefills per second, measured (`simulate --requests`, `recommend`). Unset: "
        "estimated from the accelerator's FP16 throughput and model_size_gb (infra/analysis/simulate_params.json).",
    )
    decode_tokens_per_second: Number | None = Field(
        None,
        gt=0,
        description="Tokens per second one request generates when it runs alone on a copy, measured (`simulate "
        "--requests`, `recommend`). Unset: estimated from the accelerator's memory bandwidth and model_size_gb.",
    )
    fast_model_loader: bool = Field(
        False,
        description="The model data was prepared for SageMaker Fast Model Loader (pre-sharded, streamed from S3 "
        "straight to the accelerators): `fastscale estimate` uses AWS's published load figures. The stack sets "
        "nothing for it; the artifact decides.",
    )


class _Workload(_Strict):
    """What runs: a container image from ECR and the model data it loads."""

    image: str = Field(..., min_length=1, description="Container image URI; use Amazon ECR in the endpoint's region so image caching applies.")
    model_data: str | None = Field(
        None, description="S3 URI of the model: a prefix ending in '/' (uncompressed) or an object (.tar.gz)."
    )
    accept_eula: bool = Field(
        False,
        description="Accept the end-user license agreement of the model in `model_data` (ModelAccessConfig."
        "AcceptEula on its S3 data source), as gated JumpStart models require; needs `model_data`. Set it only "
        "after reading the model's license.",
    )
    model_size_gb: Number | None = Field(None, ge=0, description="Model weights in GB; checked against accelerator memory.")
    image_size_gb: Number | None = Field(
        None, gt=0, description="Compressed image size in GB; used by `fastscale estimate` (default from the estimate data)."
    )
    environment: dict[EnvName, EnvValue] = Field(
        default_factory=dict,
        max_length=100,
        description="Container environment (at most 100 variables). Values are stored in plain text in the "
        "Terraform state and the SageMaker description: never put secrets here, use `secrets`.",
    )
    secrets: dict[EnvName, Annotated[SecretRef, BeforeValidator(_secret_shorthand)]] = Field(
        default_factory=dict,
        max_length=100,
        description="Environment variable name -> Secrets Manager secret ARN (or {arn, kms_key_arn}). The "
        "container gets <NAME>_SECRET_ARN and must read the value itself at start; the value never "
        "reaches the config, the synthesized stack or the Terraform state.",
    )
    autoscaling: Autoscaling = Field(default_factory=Autoscaling, description="How this workload scales.")
    serving: Serving = Field(
        default_factory=Serving, description="What one copy serves (capacity, token rates), for estimate, simulate and recommend."
    )
    model_download_timeout: ApiInt | None = Field(None, description="Seconds allowed to download the model (60-3600).")
    startup_health_check_timeout: ApiInt | None = Field(
        None, description="Seconds allowed for the container to pass its health check (60-3600)."
    )


class ModelSpec(_Workload):
    """The single model of a single-model endpoint (scales by instances)."""


class InferenceComponentSpec(_Workload):
    """One model hosted as an inference component (scales by copies; several per endpoint)."""

    name: str = Field(..., description="Component name, unique within the file.")
    resources: Resources = Field(..., description="Compute reserved per copy.")
    copies: Capacity = Field(default_factory=Capacity, description="Copy counts; min 0 enables scale to zero.")
    data_cache: bool | None = Field(
        True,
        description="DataCacheConfig.EnableCaching: cache image and model on each instance so later copies start faster. "
        "null: no DataCacheConfig is sent (SageMaker's undocumented default), as on a component made without one "
        "(`fastscale adopt` keeps it so).",
    )
    deployment: ComponentDeployment | None = Field(
        None, description="This component's update settings, over the endpoint's `deployment`."
    )
    adopted: AdoptedComponent | None = Field(
        None, description="The live inference component this one takes over (written by `fastscale adopt`)."
    )
    overrides: Overrides = Field(default_factory=dict, description=_OVERRIDES_HELP)


# --------------------------------------------------------------------------------------------- capacity


class ModelOverride(_Strict):
    """What the single model of an endpoint changes on one fallback instance type (unset keys are inherited)."""

    image: str | None = Field(None, min_length=1, description="Container image for this instance type (e.g. built for its GPU).")
    model_data: str | None = Field(None, description="S3 URI of the model for this instance type (e.g. a quantized build).")
    model_size_gb: float | None = Field(None, ge=0, description="Weights in GB of that model; checked against this type's accelerator memory.")
    image_size_gb: float | None = Field(None, gt=0, description="Compressed image size in GB; used by `fastscale estimate`.")
    environment: dict[EnvName, EnvValue] | None = Field(
        None, description="Container environment on this type; replaces the model's when set (never secrets)."
    )


class ComponentOverride(ModelOverride):
    """What one inference component changes on one fallback instance type (unset keys are inherited)."""

    resources: Resources | None = Field(None, description="Compute reserved per copy on this instance type.")


class FallbackPool(_Strict):
    """One more instance type SageMaker may provision when the types before it have no capacity."""

    instance_type: str = Field(..., description="SageMaker instance type of this pool, e.g. ml.g5.12xlarge.")
    priority: int | None = Field(
        None,
        description="InstancePool Priority (1-5, lower first). Default: the position in `fallback` plus 2 "
        "(the endpoint's own instance_type is priority 1).",
    )
    model: ModelOverride | None = Field(None, description="Single-model endpoints: the model to run on this type instead.")
    components: dict[str, ComponentOverride] = Field(
        default_factory=dict,
        description="Inference-component endpoints: per component name, what differs on this type "
        "(resources, image, model). Components not named here run unchanged.",
    )


class AzBalance(_Strict):
    """Keep a component's copies spread over Availability Zones (EnforcementMode PERMISSIVE)."""

    max_imbalance: int | None = Field(
        None, description="Most copies one Availability Zone may have beyond another (0-100; unset: SageMaker's default)."
    )


class Placement(_Strict):
    """How SageMaker places the copies of every inference component of the endpoint (SchedulingConfig)."""

    strategy: Literal["SPREAD", "BINPACK"] = Field(
        "SPREAD", description="SPREAD copies over instances, or BINPACK them onto as few instances as possible."
    )
    az_balance: AzBalance | None = Field(None, description="Balance copies over Availability Zones.")


class CapacitySpec(_Strict):
    """Where instances come from when the endpoint's instance type has no capacity."""

    fallback: list[FallbackPool] = Field(
        default_factory=list,
        description="Ordered fallback instance types (InstancePools). Empty (the default): one instance type, no pools.",
    )
    provision_timeout: int | None = Field(
        None,
        description="VariantInstanceProvisionTimeoutInSeconds (300-3600): how long SageMaker keeps trying to "
        "provision instances, over all pools, before the operation fails.",
    )
    reservation_arn: str | None = Field(
        None,
        description="ARN of an ML capacity reservation in the stack's region: instances come only from it "
        "(CapacityReservationPreference capacity-reservations-only).",
    )
    placement: Placement | None = Field(None, description="Placement of component copies (inference-component endpoints).")


class ScaleInPolicy(_Strict):
    """How managed instance scaling releases instances (inference-component endpoints)."""

    strategy: Literal["IDLE_RELEASE", "CONSOLIDATION"] = Field(
        "IDLE_RELEASE",
        description="IDLE_RELEASE releases instances that host no copy; CONSOLIDATION also moves copies together "
        "to release more instances.",
    )
    cooldown_minutes: int | None = Field(
        None,
        description="CooldownInMinutes: minutes after the last endpoint operation before the endpoint evaluates "
        "consolidation scale-in (5-1440; AWS default 20). AWS documents it for consolidation only.",
    )
    max_step: int | None = Field(None, description="Most instances released at a time (1-100; AWS default 1).")


# --------------------------------------------------------------------------------------------- endpoint


class Vpc(_Strict):
    """Run the model containers in your VPC."""

    subnets: list[str] = Field(..., min_length=1, max_length=16, description="Subnet ids (1-16).")
    security_groups: list[str] = Field(..., min_length=1, max_length=5, description="Security group ids (1-5).")


class Alarms(_Strict):
    """Operational alarms created per endpoint (on by default)."""

    enabled: bool = Field(True, description="Create latency, 5xx, GPU memory and stuck-at-zero alarms.")
    sns_topic_arn: str | None = Field(None, description="SNS topic notified when an alarm fires and recovers.")
    period: ApiInt = Field(60, description="Period in seconds of the operational alarms.")
    evaluation_periods: ApiInt = Field(5, description="Datapoints that must breach.")
    model_latency_ms: Number = Field(10000, description="Average ModelLatency above which the latency alarm fires.")
    errors_5xx: ApiInt = Field(5, description="Invocation5XXErrors per period at or above which the error alarm fires.")
    gpu_memory_percent: Number = Field(
        97,
        description="GPU memory utilization (percent per GPU) at or above which the alarm fires. vLLM-based "
        "containers reserve about 90% of GPU memory up front, so a lower threshold would always fire. "
        "NVIDIA GPU instances only: Inferentia and Trainium instances publish no GPU metrics and get no "
        "GPU-memory alarm.",
    )
    stuck_at_zero_minutes: ApiInt = Field(
        10, description="Fire when requests fail for lack of capacity for this many minutes in a row."
    )


class PrefixRouting(_Strict):
    """Settings of prefix-aware routing (PrefixAwareRoutingConfig); both are required by the API."""

    prefix_length: int = Field(
        ...,
        description="PrefixLength (1024-65536): how much of the request's start is the routing key: bytes of "
        "the body for InvokeEndpoint, characters of the messages' text for the OpenAI-compatible API. Cover the "
        "shared part (a system prompt) plus enough unique text to spread the load.",
    )
    concurrency_threshold: int = Field(
        ...,
        description="ConcurrencyThreshold (1-1024): requests in flight on the chosen instance (or copy, on an "
        "inference-component endpoint) at which the next request with that prefix goes elsewhere.",
    )


class EndpointSpec(_Strict):
    name: str = Field(..., description="Endpoint name (prefixed with the project).")
    instance_type: str = Field(
        ..., description="SageMaker instance type, e.g. ml.g6.2xlarge; the first choice (priority 1) when capacity.fallback is set."
    )
    instances: Capacity = Field(default_factory=Capacity, description="Instance counts of the endpoint's variant.")
    routing: Literal["least_outstanding_requests", "random", "prefix_aware", "kv_aware"] | None = Field(
        "least_outstanding_requests",
        description="How the endpoint routes requests among its instances / copies (the variant's RoutingConfig."
        "RoutingStrategy). fastscale's default is least_outstanding_requests, deliberately not AWS's (RANDOM, "
        "used when an endpoint sets none): generative requests vary widely in length, and random routing can "
        "queue requests behind a long generation while another instance sits idle; least outstanding requests "
        "sends each request to the instance with the most free capacity (AWS ML blog, \"Minimize real-time "
        "inference latency by using Amazon SageMaker routing strategies\"). random: AWS's default, e.g. to keep "
        "an existing endpoint's routing unchanged. null: the configuration sets no RoutingConfig at all, so "
        "SageMaker uses its default (RANDOM), as on an endpoint made without one (`fastscale adopt` writes it so: "
        "adding a RoutingConfig would need a new endpoint configuration). prefix_aware (PREFIX_AWARE, needs `prefix_routing`): requests "
        "sharing a prompt prefix go to the same instance / copy until it has `concurrency_threshold` requests in "
        "flight; applied only when two or more instances can serve. kv_aware (KV_AWARE): to an instance or copy "
        "that already holds the prompt's start in its KV cache, weighed against load, else as least outstanding "
        "requests; only with supported containers such as the SageMaker AI vLLM DLC. Both make the endpoint "
        "configuration awscc's (hashicorp/aws 6.25 has no prefix settings). See docs/routing.md.",
    )
    prefix_routing: PrefixRouting | None = Field(
        None, description="PrefixAwareRoutingConfig: required with routing prefix_aware, refused otherwise."
    )
    inference_ami_version: str | None = Field(
        None,
        description="ProductionVariant.InferenceAmiVersion: the AMI (driver and CUDA / Neuron versions) of the "
        "endpoint's instances, one of botocore's ProductionVariantInferenceAmiVersion values; gpu AMIs for NVIDIA "
        "instance types, neuron-2 for Inferentia2 / Trainium. Unset: SageMaker's default for the instance type.",
    )
    model: ModelSpec | None = Field(None, description="Single-model endpoint. Mutually exclusive with inference_components.")
    inference_components: list[InferenceComponentSpec] = Field(
        default_factory=list, description="Models hosted as inference components. Mutually exclusive with `model`."
    )
    kms_key_arn: str | None = Field(None, description="KMS key for the ML storage volume (not on local-NVMe instance types).")
    vpc: Vpc | None = Field(None, description="VPC placement of the containers.")
    execution_role_arn: str | None = Field(None, description="Existing execution role; else a least-privilege role is created.")
    model_download_timeout: ApiInt | None = Field(None, description="Default for the models of this endpoint (60-3600 s).")
    startup_health_check_timeout: ApiInt | None = Field(None, description="Default for the models of this endpoint (60-3600 s).")
    metrics_publish_frequency: ApiInt | None = Field(
        None,
        description="MetricsConfig.MetricPublishFrequencyInSeconds: 10, 30, 60, 120, 180, 240 or 300. Without "
        "enhanced_metrics it applies to utilization metrics only; invocation metrics stay at 60 s.",
    )
    enhanced_metrics: bool = Field(
        False,
        description="MetricsConfig.EnableEnhancedMetrics: invocation metrics (Invocations, ModelLatency, 4XX/5XX "
        "errors ...) are published at metrics_publish_frequency too, with instance and (for inference "
        "components) container granularity. Off: AWS's default.",
    )
    volume_size_gb: ApiInt | None = Field(
        None, ge=1, le=512, description="ML storage volume per instance in GB, 1-512 (single-model endpoints)."
    )
    alarms: Alarms = Field(default_factory=Alarms, description="Operational alarms of this endpoint.")
    capacity: CapacitySpec = Field(
        default_factory=CapacitySpec,
        description="Fallback instance types, provision timeout, capacity reservation and copy placement.",
    )
    scale_in: ScaleInPolicy | None = Field(
        None, description="Managed instance scaling's scale-in policy (inference-component endpoints); unset: AWS's default."
    )
    deployment: Deployment = Field(
        default_factory=Deployment,
        description="How updates roll out: blue/green or rolling, bake time and automatic rollback on this stack's alarms.",
    )
    adopted: AdoptedEndpoint | None = Field(
        None,
        description="Live resources this endpoint takes over, with their names (written by `fastscale adopt`, "
        "docs/adopt.md). Unset: fastscale names and creates everything.",
    )
    overrides: Overrides = Field(default_factory=dict, description=_OVERRIDES_HELP)

    @model_validator(mode="after")
    def _one_kind_of_workload(self) -> EndpointSpec:
        if self.model is not None and self.inference_components:
            raise ValueError("set either `model` (single-model endpoint) or `inference_components`, not both")
        if self.model is None and not self.inference_components:
            raise ValueError("needs a `model` block (single-model endpoint) or a list of `inference_components`")
        if self.adopted is None and any(c.adopted is not None for c in self.inference_components):
            raise ValueError("a component can only adopt a live one on an adopted endpoint: set `adopted.endpoint`")
        return self

    @property
    def uses_inference_components(self) -> bool:
        return bool(self.inference_components)

    @property
    def routing_in_effect(self) -> Literal["least_outstanding_requests", "random", "prefix_aware", "kv_aware"]:
        """How the endpoint really routes: `routing`, or AWS's default (random) when it is null."""
        return self.routing or "random"

    @property
    def needs_awscc_config(self) -> bool:
        """Whether the endpoint configuration is awscc's: it sets what hashicorp/aws 6.25's cannot express (a
        metrics configuration, instance pools, the provision timeout, a capacity reservation, a scale-in
        policy, prefix-aware settings; KV-aware routing too, which its routing validation may not know)."""
        cap = self.capacity
        return bool(
            self.routing in ("prefix_aware", "kv_aware")
            or self.metrics_publish_frequency is not None
            or self.enhanced_metrics
            or cap.fallback
            or cap.provision_timeout is not None
            or cap.reservation_arn
            or self.scale_in is not None
        )

    @property
    def needs_awscc(self) -> bool:
        """Whether this endpoint has hashicorp/awscc resources: inference components, or awscc's endpoint
        configuration (`needs_awscc_config`)."""
        return self.uses_inference_components or self.needs_awscc_config

    @property
    def scales_to_zero(self) -> bool:
        return any(c.copies.min == 0 for c in self.inference_components)

    def workloads(self) -> list[tuple[str, ModelSpec | InferenceComponentSpec]]:
        """(config path, workload) for the model or every component, for rules that apply to both."""
        if self.model is not None:
            return [("model", self.model)]
        return [(f"inference_components[{i}]", c) for i, c in enumerate(self.inference_components)]


# --------------------------------------------------------------------------------------------- state


class LocalState(_Strict):
    """Terraform state in a local file."""

    backend: Literal["local"] = "local"
    path: str | None = Field(
        None,
        description="State file path, relative to the project root (the directory fastscale runs in) and "
        "inside it: no absolute path, no `..`, no symbolic link on the way (rule FS095). Default: "
        "terraform.<project>.<region>.tfstate in the project root, never inside the synth output directory. "
        "The state holds every environment value in plain text (mode 0600).",
    )


class S3State(_Strict):
    """Terraform state in Amazon S3, locked so two applies never run at once."""

    backend: Literal["s3"]
    bucket: str = Field(..., description="State bucket (create it first, with versioning).")
    key: str = Field(..., description="Object key of the state file.")
    region: str | None = Field(None, description="Bucket region (default: the project region).")
    use_lockfile: bool = Field(True, description="S3-native state locking (Terraform >= 1.10).")
    dynamodb_table: str | None = Field(None, description="Legacy DynamoDB lock table.")
    encrypt: bool = Field(True, description="Server-side encryption of the state object.")
    kms_key_id: str | None = Field(None, description="KMS key for the state object.")
    endpoint_url: str | None = Field(
        None,
        description="S3 endpoint of an AWS emulator holding the state bucket. Required when the project's "
        "`endpoint_url` is set, so state never goes to real S3 while resources go to an emulator. The same "
        "hosts as `endpoint_url` are accepted.",
    )

    _url = field_validator("endpoint_url")(lambda v: check_endpoint_url(v))


State = Annotated[LocalState | S3State, Field(discriminator="backend")]


class Dashboard(_Strict):
    """The stack's CloudWatch dashboard: concurrency, copies, instances, invocations, failures, latency."""

    enabled: bool = Field(True, description="Create the dashboard.")


class Providers(_Strict):
    """Terraform provider version constraints (Terraform syntax), e.g. to match an internal provider mirror."""

    aws: str = Field(DEFAULT_AWS, description="Version constraint for hashicorp/aws. Checked against the oldest "
                     "release that has every attribute the stack writes (rule FS071).")
    awscc: str = Field(DEFAULT_AWSCC, description="Version constraint for hashicorp/awscc (inference components, "
                       "metrics configuration). Checked like `aws`.")

    @field_validator("aws", "awscc")
    @classmethod
    def _constraint(cls, value: str) -> str:
        try:
            constraint = Constraint.parse(value)
        except ConstraintError as exc:
            raise ValueError(f"{exc}; for example '~> 6.25' or '>= 6.21.0, < 7.0'") from None
        if not constraint.admits_any():
            raise ValueError(f"'{value}' admits no version at all")
        return value


def check_endpoint_url(value: str | None) -> str | None:
    """An emulator URL: http(s)://host[:port][/path], nothing else (no credentials, query or fragment)."""
    if value is None:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"'{value}' is not an http(s) URL such as http://localhost:4566")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(f"'{value}' must not carry credentials, a query or a fragment")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        raise ValueError(f"'{value}' has an invalid port") from None

    refused = refused_reason(value)
    if refused is not None:
        raise ValueError(refused)
    return value.rstrip("/")


# --------------------------------------------------------------------------------------------- root


class FastscaleConfig(_Strict):
    """A fastscale project: one Terraform stack holding every endpoint below."""

    project: str = Field(..., description="Prefix of every resource name, and the stack name.")
    region: str = Field(..., description="AWS region, e.g. us-east-1.")
    tags: dict[TagKey, TagValue] = Field(
        default_factory=dict, max_length=50, description="Added to every resource that takes tags (at most 50)."
    )
    endpoints: list[EndpointSpec] = Field(..., min_length=1, description="The endpoints of this project (at least one).")
    state: State = Field(default_factory=LocalState, description="Terraform backend: `local` (default) or `s3` with locking.")
    dashboard: Dashboard = Field(default_factory=Dashboard, description="One CloudWatch dashboard for the whole stack.")
    providers: Providers = Field(default_factory=Providers, description="Terraform provider version constraints.")
    endpoint_url: str | None = Field(
        None,
        description="Send every AWS call — Terraform's providers and fastscale's own boto3 calls — to this URL "
        "instead of AWS: an emulator such as LocalStack or moto (docs/emulator.md). The command-line option "
        "--endpoint-url overrides it. Never set it for a real account. Only loopback (localhost, 127.0.0.1, "
        "::1) and private addresses (10.x, 172.16-31.x, 192.168.x, fc00::/7) are accepted; any other host needs "
        "--send-credentials-to-endpoint-url on the command line, and link-local / metadata addresses are "
        "always refused (docs/emulator.md).",
    )

    _url = field_validator("endpoint_url")(lambda v: check_endpoint_url(v))
    # Set only from the command line (`--send-credentials-to-endpoint-url`), never from the file: the file is
    # what an untrusted change edits. Rule FS095 reads it.
    _remote_endpoint_trusted: bool = PrivateAttr(default=False)

    @property
    def remote_endpoint_trusted(self) -> bool:
        """Whether the command line allowed `endpoint_url` (and `state.endpoint_url`) to name a remote host."""
        return self._remote_endpoint_trusted

    def trusting_remote_endpoint(self, trusted: bool = True) -> FastscaleConfig:
        """A copy of this config whose endpoint URLs may name remote hosts (the command line's opt-in)."""
        copy = self.model_copy()
        copy._remote_endpoint_trusted = trusted
        return copy


# --------------------------------------------------------------------------------------------- loading


#: Schema problems listed per file; a generated file can have thousands, and listing them all helps no one.
MAX_PROBLEMS_REPORTED = 50


@dataclass(frozen=True)
class ConfigProblem:
    """One reason a file could not be read as a config: where (dotted path and line) and why."""

    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.path or '<root>'}: {self.message}"


class ConfigError(Exception):
    """The file is missing, not YAML, or does not match the schema. Carries every problem found."""

    def __init__(self, source: str, problems: list[ConfigProblem]):
        self.source = source
        self.problems = problems
        super().__init__(f"{source}: " + "; ".join(str(p) for p in problems))


def format_path(loc: tuple[Any, ...]) -> str:
    """('endpoints', 0, 'instances', 'min') -> 'endpoints[0].instances.min'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _line_index(text: str) -> dict[tuple[Any, ...], int]:
    """Map every key path in the YAML document to its 1-based line, so schema errors can name the line.

    Built by the bounded loader: a file that could expand (aliases) or recurse without end gets no index."""
    return safe_yaml.line_index_of(text)


def parse_path(path: str) -> tuple[Any, ...]:
    """'endpoints[0].instances.min' -> ('endpoints', 0, 'instances', 'min'): the inverse of format_path."""
    found = re.findall(r'([^.\[\]"]+)|\[(\d+)\]|\["([^"]*)"\]', path)  # key, [index] or ["quoted key"]
    return tuple(int(index) if index else quoted or key for key, index, quoted in found)


class LineMap:
    """Where each key path of a YAML text is: the line schema errors and rule findings name."""

    def __init__(self, text: str):
        self._index = _line_index(text)

    def line_of(self, path: str) -> int | None:
        """The line of ``path`` (dotted, as findings spell it), or of its nearest parent in the text."""
        loc = parse_path(path)
        return _nearest_line(self._index, loc) if loc else None


def _nearest_line(index: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in index:
            return index[loc[:cut]]
    return None


def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    # pydantic inserts the discriminator tag ('s3' / 'local') and function names into locations;
    # users only know their own keys.
    return tuple(p for p in loc if not (isinstance(p, str) and (p in {"local", "s3"} or p.startswith("function-"))))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The config sections a field's type can hold (through lists, optionals, unions, annotations)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys the schema allows in the mapping at ``loc`` (a cleaned location, list indexes included)."""
    models: list[type[BaseModel]] = [FastscaleConfig]
    for part in loc:
        if isinstance(part, int):
            continue  # an item of a list: the list field already named its item type
        fields = [f for m in models for name, f in m.model_fields.items() if part in (name, f.alias)]
        models = [m for f in fields for m in _models_in(f.annotation)]
    return sorted({key for m in models for name, f in m.model_fields.items() for key in (f.alias or name,)})


def _did_you_mean(loc: tuple[Any, ...]) -> str:
    if not loc or not isinstance(loc[-1], str):
        return ""
    close = difflib.get_close_matches(loc[-1], known_keys(loc[:-1]), n=3, cutoff=0.6)
    return f"did you mean {' or '.join(close)}? " if close else ""


def _friendly(err: ErrorDetails, loc: tuple[Any, ...] = ()) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return f"unknown key ({_did_you_mean(loc)}`fastscale schema` lists every key)"
    if kind == "missing":
        return "required key is missing"
    msg = str(err.get("msg", "invalid value"))
    return msg.removeprefix("Value error, ")


def redact(text: str) -> str:
    """A schema message with any credential it quotes masked (a URL's password, a token): see infra.config.secrets."""
    return mask(text)


def parse_config(
    data: Any, source: str = "<config>", text: str | None = None, lines: dict[tuple[Any, ...], int] | None = None
) -> FastscaleConfig:
    """Validate already-loaded YAML data; raises ConfigError naming every bad field (and its line when known).

    `lines` is the key-path -> line index when the caller already has it (`load_config` does), else it is
    built from `text` only when there is an error to locate."""
    if not isinstance(data, dict):
        raise ConfigError(source, [ConfigProblem("", "the file must be a YAML mapping with `project`, `region` and `endpoints`", 1)])
    try:
        return FastscaleConfig.model_validate(data)
    except ValidationError as exc:
        index = lines if lines is not None else (_line_index(text) if text is not None else {})
        problems = []
        errors = exc.errors()
        for err in errors[:MAX_PROBLEMS_REPORTED]:
            loc = _clean_loc(tuple(err["loc"]))
            problems.append(ConfigProblem(format_path(loc), redact(_friendly(err, loc)), _nearest_line(index, loc)))
        if len(errors) > MAX_PROBLEMS_REPORTED:
            problems.append(ConfigProblem("", f"{len(errors) - MAX_PROBLEMS_REPORTED} more problems not shown: fix the "
                                               "ones above and validate again"))
        raise ConfigError(source, problems) from None


def load_config(path: str | Path) -> FastscaleConfig:
    """Read and validate a fastscale YAML file. Raises ConfigError (never a raw YAML/pydantic traceback)."""
    p = Path(path)
    try:
        # Read at most one byte past the limit: a huge file is refused without reading it all. A FIFO,
        # device or socket is refused before it is opened for good (it could block for ever).
        raw = read_bytes(p, safe_yaml.MAX_BYTES + 1, "config file")
    except FileNotFoundError:
        raise ConfigError(str(p), [ConfigProblem("", "file not found")]) from None
    except SpecialFileError as exc:
        raise ConfigError(str(p), [ConfigProblem("", str(exc))]) from None
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise ConfigError(str(p), [ConfigProblem("", f"cannot read the file: {reason}")]) from None
    try:
        if len(raw) > safe_yaml.MAX_BYTES:
            raise safe_yaml.too_large()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise ConfigError(str(p), [ConfigProblem(
                "", f"the file is not UTF-8 text (byte {exc.start} cannot be decoded): a config is YAML text, "
                "save it as UTF-8", line)]) from None
        loaded = safe_yaml.load(text)
    except safe_yaml.UnsafeYamlError as exc:
        raise ConfigError(str(p), [ConfigProblem("", prob.message, prob.line) for prob in exc.problems]) from None
    return parse_config(loaded.data, str(p), text, loaded.lines)


def json_schema() -> dict[str, Any]:
    """JSON Schema of the config file, for editors (yaml-language-server) and docs."""
    schema = FastscaleConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "fastscale configuration"
    return schema


def dump_json_schema() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
