"""SageMaker resources of hashicorp/awscc 1.106 (AWS Cloud Control): inference component, endpoint config.

hashicorp/aws has no inference-component resource, and its endpoint configuration has no
`metrics_config`; awscc has both. awscc models everything as nested *attributes*: a nested object is a
JSON object, a list is a JSON array, and tags are a list of `{key, value}` objects (`Tag`), not a map. The
props are generated from the provider schema (`stacks.resources.generated.awscc`), where almost every nested
attribute is optional; what SageMaker needs all the same is the stacks' to set.

What the schema does not say, and the stacks rely on:

- a component has `specification` or, on an endpoint with instance pools, `specifications` (one
  `InstanceTypeSpecification` per instance type), never both;
- every component sets `data_cache_config` explicitly (the API's default when it is omitted is
  undocumented), unless the config adopted one made without it;
- `routing_config` is one object here (a list of blocks in hashicorp/aws), and its
  `prefix_aware_routing_config` goes only with the `PREFIX_AWARE` strategy;
- a variant's `instance_type` is unset when `instance_pools` replace it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from fastscale.stacks.resources.base import Resource
from fastscale.stacks.resources.generated.awscc import (
    SagemakerEndpointConfigProps,
    SagemakerInferenceComponentProps,
    Tag,
)


def tag_list(tags: Mapping[str, str]) -> list[Tag]:
    """awscc's tag form, sorted by key so the JSON does not depend on insertion order."""
    return [Tag(key=k, value=v) for k, v in sorted(tags.items())]


class SagemakerInferenceComponent(Resource[SagemakerInferenceComponentProps]):
    """`awscc_sagemaker_inference_component`: one model hosted on an endpoint, scaled by copies.

    Its `deployment_config` (a rolling update policy and the alarms that roll it back) is applied by
    UpdateInferenceComponent when the specification changes."""

    TYPE: ClassVar[str] = "awscc_sagemaker_inference_component"
    PROVIDER: ClassVar[str] = "awscc"

    #: The attribute auto scaling changes behind Terraform's back (`DesiredCopyCount`).
    COPY_COUNT_PATH: ClassVar[str] = "runtime_config.copy_count"


class SagemakerEndpointConfig(Resource[SagemakerEndpointConfigProps]):
    """`awscc_sagemaker_endpoint_config`: used only for what hashicorp/aws 6.25 cannot express."""

    TYPE: ClassVar[str] = "awscc_sagemaker_endpoint_config"
    PROVIDER: ClassVar[str] = "awscc"
