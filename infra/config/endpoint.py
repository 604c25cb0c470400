"""One endpoint of a config: its instance type and fallback pools, placement, alarms, routing and VPC."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    model_validator,
)

from fastscale.infra.base import aws_facts
from fastscale.infra.base.limits import ApiInt, Number
from fastscale.infra.config.common import _OVERRIDES_HELP, EnvName, EnvValue, Overrides, _Strict
from fastscale.infra.config.scaling import Capacity, Deployment
from fastscale.infra.config.workloads import AdoptedEndpoint, InferenceComponentSpec, ModelSpec, Resources

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
    detailed_observability: bool | None = Field(
        None,
        description="MetricsConfig.EnableDetailedObservability: container metrics scraped from the container's "
        "Prometheus endpoint, per-GPU and per-instance host metrics and component placement metrics, published to "
        "CloudWatch at metrics_publish_frequency (SageMaker API reference, MetricsConfig); AWS's default for a new "
        "endpoint configuration is on. Unset: off wherever fastscale writes a metrics configuration (whenever the "
        "endpoint configuration is awscc's, e.g. with metrics_publish_frequency), fastscale's choice: the stack's "
        "scaling, alarms and dashboard read none of these metrics, and they are more CloudWatch data (six "
        "datapoints a minute per metric at 10 s); hashicorp/aws's configuration has no metrics configuration, so "
        "there AWS's default applies (on, every 60 s). Set true or false to write it either way (the "
        "configuration is then awscc's). See docs/metrics.md.",
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
    def awscc_config_reasons(self) -> list[tuple[str, str]]:
        """(setting, why) for everything that makes the endpoint configuration awscc's: what hashicorp/aws
        6.25's cannot express (a metrics configuration, instance pools, the provision timeout, a capacity
        reservation, a scale-in policy, prefix-aware settings) or a value its own validation refuses (KV-aware
        routing, an AMI or an instance type its lists lack: `aws_facts.AWS_PROVIDER_*`). Empty: hashicorp/aws's."""
        cap = self.capacity
        checks = (
            ("routing", self.routing in ("prefix_aware", "kv_aware"),
             f"routing {self.routing}: hashicorp/aws routes only with {' or '.join(aws_facts.AWS_PROVIDER_ROUTING_STRATEGIES)}"),
            ("metrics_publish_frequency", self.metrics_publish_frequency is not None,
             "a metrics configuration, which hashicorp/aws's has not"),
            ("enhanced_metrics", self.enhanced_metrics, "a metrics configuration, which hashicorp/aws's has not"),
            ("detailed_observability", self.detailed_observability is not None,
             "a metrics configuration, which hashicorp/aws's has not"),
            ("capacity.fallback", bool(cap.fallback), "instance pools, which hashicorp/aws's has not"),
            ("capacity.provision_timeout", cap.provision_timeout is not None,
             "the provision timeout, which hashicorp/aws's has not"),
            ("capacity.reservation_arn", bool(cap.reservation_arn), "a capacity reservation, which hashicorp/aws's has not"),
            ("scale_in", self.scale_in is not None, "a scale-in policy, which hashicorp/aws's has not"),
            ("inference_ami_version",
             self.inference_ami_version is not None and self.inference_ami_version not in aws_facts.AWS_PROVIDER_AMI_VERSIONS,
             f"{self.inference_ami_version}, which hashicorp/aws's list of AMIs lacks"),
            ("instance_type", self.instance_type in aws_facts.AWS_PROVIDER_UNKNOWN_INSTANCE_TYPES,
             f"{self.instance_type}, which hashicorp/aws's list of instance types lacks"),
        )
        return [(setting, why) for setting, applies, why in checks if applies]

    @property
    def needs_awscc_config(self) -> bool:
        """Whether the endpoint configuration is awscc's (`awscc_config_reasons` is not empty)."""
        return bool(self.awscc_config_reasons)

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
