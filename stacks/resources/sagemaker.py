"""SageMaker resources of hashicorp/aws 6.25: model, endpoint configuration, endpoint.

Their props are generated from the provider schema (`stacks.resources.generated.aws`: `SagemakerModelProps`,
`ModelContainer`, `ProductionVariant`, `DeploymentConfig` ...). Blocks the provider limits to one item
(`MaxItems: 1`: `primary_container`, `model_data_source`, `model_access_config`, `vpc_config`,
`managed_instance_scaling`, `deployment_config`) are single dataclasses and synthesize as JSON objects;
repeatable blocks (`production_variants`, `s3_data_source`, `routing_config`, `alarms`) are sequences, as the
provider's own JSON form has them.

What the schema does not say, and the stacks rely on:

- a variant's `initial_instance_count` is a reference to the stack's cut-over variable (`stacks.endpoint`);
  its `model_name` is unset on inference-component endpoints, which need `execution_role_arn` on the
  configuration instead;
- hashicorp/aws's `routing_config` takes `LEAST_OUTSTANDING_REQUESTS` or `RANDOM`; prefix- and KV-aware
  routing need awscc's endpoint configuration (`stacks.resources.awscc`);
- an adopted model made with `ModelDataUrl` keeps that form (`model_data_url`), since the other form would
  replace it.
"""

from __future__ import annotations

from typing import ClassVar

from fastscale.stacks.resources.base import Resource
from fastscale.stacks.resources.generated.aws import (
    SagemakerEndpointConfigurationProps,
    SagemakerEndpointProps,
    SagemakerModelProps,
)

#: `S3ModelDataSource.S3DataType` / `CompressionType` values.
S3_PREFIX = "S3Prefix"
S3_OBJECT = "S3Object"
COMPRESSION_NONE = "None"
COMPRESSION_GZIP = "Gzip"

#: `ProductionVariantManagedInstanceScaling.Status`.
MANAGED_SCALING_ENABLED = "ENABLED"


class SagemakerModel(Resource[SagemakerModelProps]):
    """`aws_sagemaker_model`: every attribute but `tags` forces a new model."""

    TYPE: ClassVar[str] = "aws_sagemaker_model"
    PROVIDER: ClassVar[str] = "aws"


class SagemakerEndpointConfiguration(Resource[SagemakerEndpointConfigurationProps]):
    """`aws_sagemaker_endpoint_configuration`: immutable; any change creates a new one."""

    TYPE: ClassVar[str] = "aws_sagemaker_endpoint_configuration"
    PROVIDER: ClassVar[str] = "aws"


class SagemakerEndpoint(Resource[SagemakerEndpointProps]):
    """`aws_sagemaker_endpoint`: switches to a new configuration when `endpoint_config_name` changes.

    Its `deployment_config` holds one of the two update policies and the alarms that roll an update back;
    hashicorp/aws marks `auto_rollback_configuration` ForceNew: adding, removing or changing its alarms
    replaces the endpoint."""

    TYPE: ClassVar[str] = "aws_sagemaker_endpoint"
    PROVIDER: ClassVar[str] = "aws"
