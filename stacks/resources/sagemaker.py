"""SageMaker resources of hashicorp/aws 6.25: model, endpoint configuration, endpoint.

Field names are the provider's attribute names. Blocks the provider limits to one item (`MaxItems: 1`:
`primary_container`, `model_data_source`, `model_access_config`, `vpc_config`, `managed_instance_scaling`) are single
dataclasses and synthesize as JSON objects; repeatable blocks (`production_variants`, `s3_data_source`,
`routing_config`) are lists, as the provider's own JSON form has them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from fastscale.stacks.resources.base import Resource

#: `S3ModelDataSource.S3DataType` / `CompressionType` values.
S3_PREFIX = "S3Prefix"
S3_OBJECT = "S3Object"
COMPRESSION_NONE = "None"
COMPRESSION_GZIP = "Gzip"

#: `ProductionVariantManagedInstanceScaling.Status`.
MANAGED_SCALING_ENABLED = "ENABLED"


# --------------------------------------------------------------------------------------------- model


@dataclass(frozen=True, kw_only=True)
class ModelAccessConfig:
    accept_eula: bool


@dataclass(frozen=True, kw_only=True)
class S3DataSource:
    s3_uri: str
    s3_data_type: str  # S3_PREFIX | S3_OBJECT
    compression_type: str  # COMPRESSION_NONE | COMPRESSION_GZIP
    model_access_config: ModelAccessConfig | None = None


@dataclass(frozen=True, kw_only=True)
class ModelDataSource:
    s3_data_source: Sequence[S3DataSource]


@dataclass(frozen=True, kw_only=True)
class ModelContainer:
    image: str
    environment: Mapping[str, str] | None = None
    model_data_source: ModelDataSource | None = None


@dataclass(frozen=True, kw_only=True)
class VpcConfig:
    security_group_ids: Sequence[str]
    subnets: Sequence[str]


@dataclass(frozen=True, kw_only=True)
class SagemakerModelProps:
    name: str
    execution_role_arn: str
    primary_container: ModelContainer
    vpc_config: VpcConfig | None = None
    tags: Mapping[str, str] | None = None


class SagemakerModel(Resource[SagemakerModelProps]):
    """`aws_sagemaker_model`: every attribute but `tags` forces a new model."""

    TYPE: ClassVar[str] = "aws_sagemaker_model"
    PROVIDER: ClassVar[str] = "aws"


# --------------------------------------------------------------------------------------------- endpoint configuration


@dataclass(frozen=True, kw_only=True)
class ManagedInstanceScaling:
    status: str
    min_instance_count: int
    max_instance_count: int


@dataclass(frozen=True, kw_only=True)
class RoutingConfig:
    routing_strategy: str  # LEAST_OUTSTANDING_REQUESTS | RANDOM (prefix- and KV-aware go to awscc's configuration)


@dataclass(frozen=True, kw_only=True)
class ProductionVariant:
    variant_name: str
    instance_type: str
    initial_instance_count: int | str  # a count, or a reference to the stack's cut-over variable
    model_name: str | None = None  # unset on inference-component endpoints
    managed_instance_scaling: ManagedInstanceScaling | None = None
    routing_config: Sequence[RoutingConfig] | None = None
    model_data_download_timeout_in_seconds: int | None = None
    container_startup_health_check_timeout_in_seconds: int | None = None
    volume_size_in_gb: int | None = None
    inference_ami_version: str | None = None


@dataclass(frozen=True, kw_only=True)
class SagemakerEndpointConfigurationProps:
    name_prefix: str
    production_variants: Sequence[ProductionVariant]
    execution_role_arn: str | None = None  # required by inference-component endpoints
    kms_key_arn: str | None = None
    tags: Mapping[str, str] | None = None


class SagemakerEndpointConfiguration(Resource[SagemakerEndpointConfigurationProps]):
    """`aws_sagemaker_endpoint_configuration`: immutable; any change creates a new one."""

    TYPE: ClassVar[str] = "aws_sagemaker_endpoint_configuration"
    PROVIDER: ClassVar[str] = "aws"


# --------------------------------------------------------------------------------------------- endpoint


@dataclass(frozen=True, kw_only=True)
class CapacitySize:
    type: str  # INSTANCE_COUNT | CAPACITY_PERCENT
    value: int


@dataclass(frozen=True, kw_only=True)
class TrafficRoutingConfiguration:
    type: str  # ALL_AT_ONCE | CANARY | LINEAR
    wait_interval_in_seconds: int
    canary_size: CapacitySize | None = None
    linear_step_size: CapacitySize | None = None


@dataclass(frozen=True, kw_only=True)
class BlueGreenUpdatePolicy:
    traffic_routing_configuration: TrafficRoutingConfiguration
    termination_wait_in_seconds: int | None = None
    maximum_execution_timeout_in_seconds: int | None = None


@dataclass(frozen=True, kw_only=True)
class RollingUpdatePolicy:
    maximum_batch_size: CapacitySize
    wait_interval_in_seconds: int
    maximum_execution_timeout_in_seconds: int | None = None
    rollback_maximum_batch_size: CapacitySize | None = None


@dataclass(frozen=True, kw_only=True)
class Alarm:
    alarm_name: str


@dataclass(frozen=True, kw_only=True)
class AutoRollbackConfiguration:
    alarms: Sequence[Alarm]  # a set of blocks (1-10) in hashicorp/aws


@dataclass(frozen=True, kw_only=True)
class DeploymentConfig:
    """`deployment_config`: one of the two update policies, and the alarms that roll an update back.

    hashicorp/aws marks `auto_rollback_configuration` ForceNew: adding, removing or changing its alarms
    replaces the endpoint."""

    blue_green_update_policy: BlueGreenUpdatePolicy | None = None
    rolling_update_policy: RollingUpdatePolicy | None = None
    auto_rollback_configuration: AutoRollbackConfiguration | None = None


@dataclass(frozen=True, kw_only=True)
class SagemakerEndpointProps:
    name: str
    endpoint_config_name: str
    deployment_config: DeploymentConfig | None = None
    tags: Mapping[str, str] | None = None


class SagemakerEndpoint(Resource[SagemakerEndpointProps]):
    """`aws_sagemaker_endpoint`: switches to a new configuration when `endpoint_config_name` changes."""

    TYPE: ClassVar[str] = "aws_sagemaker_endpoint"
    PROVIDER: ClassVar[str] = "aws"
