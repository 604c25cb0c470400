"""SageMaker resources of hashicorp/awscc 1.106 (AWS Cloud Control): inference component, endpoint config.

hashicorp/aws has no inference-component resource, and its endpoint configuration has no
`metrics_config`; awscc has both. awscc models everything as nested *attributes*: a nested object is a
JSON object, a list is a JSON array, and tags are a list of `{key, value}` objects, not a map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from fastscale.stacks.resources.base import Resource


@dataclass(frozen=True, kw_only=True)
class Tag:
    key: str
    value: str


def tag_list(tags: Mapping[str, str]) -> list[Tag]:
    """awscc's tag form, sorted by key so the JSON does not depend on insertion order."""
    return [Tag(key=k, value=v) for k, v in sorted(tags.items())]


# --------------------------------------------------------------------------------------------- inference component


@dataclass(frozen=True, kw_only=True)
class ComputeResourceRequirements:
    min_memory_required_in_mb: int
    max_memory_required_in_mb: int | None = None
    number_of_accelerator_devices_required: float | None = None
    number_of_cpu_cores_required: float | None = None


@dataclass(frozen=True, kw_only=True)
class StartupParameters:
    model_data_download_timeout_in_seconds: int | None = None
    container_startup_health_check_timeout_in_seconds: int | None = None


@dataclass(frozen=True, kw_only=True)
class DataCacheConfig:
    enable_caching: bool


@dataclass(frozen=True, kw_only=True)
class AvailabilityZoneBalance:
    enforcement_mode: str  # PERMISSIVE, the only value
    max_imbalance: int | None = None


@dataclass(frozen=True, kw_only=True)
class SchedulingConfig:
    placement_strategy: str  # SPREAD | BINPACK
    availability_zone_balance: AvailabilityZoneBalance | None = None


@dataclass(frozen=True, kw_only=True)
class InferenceComponentSpecification:
    model_name: str
    compute_resource_requirements: ComputeResourceRequirements
    data_cache_config: DataCacheConfig
    startup_parameters: StartupParameters | None = None
    scheduling_config: SchedulingConfig | None = None
    instance_type: str | None = None  # only in `specifications` (one per instance type of the endpoint's pools)


@dataclass(frozen=True, kw_only=True)
class InferenceComponentRuntimeConfig:
    copy_count: int


@dataclass(frozen=True, kw_only=True)
class InferenceComponentCapacitySize:
    type: str  # COPY_COUNT | CAPACITY_PERCENT
    value: int


@dataclass(frozen=True, kw_only=True)
class InferenceComponentRollingUpdatePolicy:
    maximum_batch_size: InferenceComponentCapacitySize
    wait_interval_in_seconds: int
    maximum_execution_timeout_in_seconds: int | None = None
    rollback_maximum_batch_size: InferenceComponentCapacitySize | None = None


@dataclass(frozen=True, kw_only=True)
class AlarmName:
    alarm_name: str


@dataclass(frozen=True, kw_only=True)
class AutoRollbackConfiguration:
    alarms: Sequence[AlarmName]


@dataclass(frozen=True, kw_only=True)
class InferenceComponentDeploymentConfig:
    """`deployment_config`: applied by UpdateInferenceComponent when the specification changes."""

    rolling_update_policy: InferenceComponentRollingUpdatePolicy
    auto_rollback_configuration: AutoRollbackConfiguration | None = None


@dataclass(frozen=True, kw_only=True)
class SagemakerInferenceComponentProps:
    inference_component_name: str
    endpoint_name: str
    variant_name: str
    runtime_config: InferenceComponentRuntimeConfig
    specification: InferenceComponentSpecification | None = None  # exactly one of the two
    specifications: Sequence[InferenceComponentSpecification] | None = None
    deployment_config: InferenceComponentDeploymentConfig | None = None
    tags: Sequence[Tag] | None = None


class SagemakerInferenceComponent(Resource[SagemakerInferenceComponentProps]):
    """`awscc_sagemaker_inference_component`: one model hosted on an endpoint, scaled by copies."""

    TYPE: ClassVar[str] = "awscc_sagemaker_inference_component"
    PROVIDER: ClassVar[str] = "awscc"

    #: The attribute auto scaling changes behind Terraform's back (`DesiredCopyCount`).
    COPY_COUNT_PATH: ClassVar[str] = "runtime_config.copy_count"


# --------------------------------------------------------------------------------------------- endpoint config


@dataclass(frozen=True, kw_only=True)
class ScaleInPolicy:
    strategy: str  # IDLE_RELEASE | CONSOLIDATION
    cooldown_in_minutes: int | None = None
    maximum_step_size: int | None = None


@dataclass(frozen=True, kw_only=True)
class ManagedInstanceScaling:
    status: str
    min_instance_count: int
    max_instance_count: int
    scale_in_policy: ScaleInPolicy | None = None


@dataclass(frozen=True, kw_only=True)
class PrefixAwareRoutingConfig:
    prefix_length: int
    concurrency_threshold: int


@dataclass(frozen=True, kw_only=True)
class RoutingConfig:
    routing_strategy: str
    prefix_aware_routing_config: PrefixAwareRoutingConfig | None = None  # only with PREFIX_AWARE


@dataclass(frozen=True, kw_only=True)
class InstancePool:
    instance_type: str
    priority: int
    model_name_override: str | None = None


@dataclass(frozen=True, kw_only=True)
class CapacityReservationConfig:
    capacity_reservation_preference: str
    ml_reservation_arn: str


@dataclass(frozen=True, kw_only=True)
class ProductionVariant:
    variant_name: str
    initial_instance_count: int | str  # a count, or a reference to the stack's cut-over variable
    instance_type: str | None = None  # None when instance_pools replace it
    instance_pools: Sequence[InstancePool] | None = None
    variant_instance_provision_timeout_in_seconds: int | None = None
    capacity_reservation_config: CapacityReservationConfig | None = None
    model_name: str | None = None
    managed_instance_scaling: ManagedInstanceScaling | None = None
    routing_config: RoutingConfig | None = None  # one object here, a list of blocks in hashicorp/aws
    model_data_download_timeout_in_seconds: int | None = None
    container_startup_health_check_timeout_in_seconds: int | None = None
    volume_size_in_gb: int | None = None
    inference_ami_version: str | None = None


@dataclass(frozen=True, kw_only=True)
class MetricsConfig:
    metric_publish_frequency_in_seconds: int | None = None
    enable_enhanced_metrics: bool | None = None


@dataclass(frozen=True, kw_only=True)
class SagemakerEndpointConfigProps:
    endpoint_config_name: str
    production_variants: Sequence[ProductionVariant]
    execution_role_arn: str | None = None
    kms_key_id: str | None = None
    metrics_config: MetricsConfig | None = None
    tags: Sequence[Tag] | None = None


class SagemakerEndpointConfig(Resource[SagemakerEndpointConfigProps]):
    """`awscc_sagemaker_endpoint_config`: used only for what hashicorp/aws 6.25 cannot express."""

    TYPE: ClassVar[str] = "awscc_sagemaker_endpoint_config"
    PROVIDER: ClassVar[str] = "awscc"
