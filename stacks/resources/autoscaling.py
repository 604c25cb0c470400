"""Application Auto Scaling resources (hashicorp/aws 6.25): scalable targets and scaling policies.

Field names are the provider's attribute names. Single nested blocks (`MaxItems: 1`) are dataclasses and
synthesize as JSON objects; repeated blocks (`step_adjustment`) are lists. The provider passes
`predefined_metric_type`, `scalable_dimension`, `adjustment_type` ... straight to the API without
validating them, so tests/contract/test_enums_contract.py checks every value against botocore's enums.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from fastscale.stacks.resources.base import Resource


@dataclass(frozen=True, kw_only=True)
class AppautoscalingTargetProps:
    service_namespace: str
    scalable_dimension: str
    resource_id: str
    min_capacity: int
    max_capacity: int
    tags: Mapping[str, str] | None = None


class AppautoscalingTarget(Resource[AppautoscalingTargetProps]):
    """`aws_appautoscaling_target`: registers what auto scaling may change, and its bounds."""

    TYPE: ClassVar[str] = "aws_appautoscaling_target"
    PROVIDER: ClassVar[str] = "aws"


@dataclass(frozen=True, kw_only=True)
class PredefinedMetricSpecification:
    predefined_metric_type: str
    resource_label: str | None = None


@dataclass(frozen=True, kw_only=True)
class TargetTrackingScalingPolicyConfiguration:
    target_value: float
    predefined_metric_specification: PredefinedMetricSpecification
    scale_in_cooldown: int | None = None
    scale_out_cooldown: int | None = None
    disable_scale_in: bool | None = None


@dataclass(frozen=True, kw_only=True)
class StepAdjustment:
    scaling_adjustment: int
    # The provider types both bounds as strings (an unset bound means infinity, which a number cannot say).
    metric_interval_lower_bound: str | None = None
    metric_interval_upper_bound: str | None = None


@dataclass(frozen=True, kw_only=True)
class StepScalingPolicyConfiguration:
    adjustment_type: str
    metric_aggregation_type: str
    cooldown: int | None = None
    min_adjustment_magnitude: int | None = None
    step_adjustment: list[StepAdjustment] | None = None


@dataclass(frozen=True, kw_only=True)
class AppautoscalingPolicyProps:
    name: str
    service_namespace: str
    scalable_dimension: str
    resource_id: str
    policy_type: str
    target_tracking_scaling_policy_configuration: TargetTrackingScalingPolicyConfiguration | None = None
    step_scaling_policy_configuration: StepScalingPolicyConfiguration | None = None


class AppautoscalingPolicy(Resource[AppautoscalingPolicyProps]):
    """`aws_appautoscaling_policy`: a target-tracking or step-scaling policy on a scalable target."""

    TYPE: ClassVar[str] = "aws_appautoscaling_policy"
    PROVIDER: ClassVar[str] = "aws"
