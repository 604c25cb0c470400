"""Application Auto Scaling resources (hashicorp/aws 6.25): scalable targets and scaling policies.

Their props are generated from the provider schema (`stacks.resources.generated.aws`:
`AppautoscalingTargetProps`, `AppautoscalingPolicyProps`, `TargetTrackingScalingPolicyConfiguration`,
`StepScalingPolicyConfiguration` ...). Single nested blocks (`MaxItems: 1`) are dataclasses and synthesize as
JSON objects; repeated blocks (`step_adjustment`) are sequences. The provider types both bounds of a step
adjustment as strings (an unset bound means infinity, which a number cannot say). The provider passes
`predefined_metric_type`, `scalable_dimension`, `adjustment_type` ... straight to the API without
validating them, so tests/contract/test_enums_contract.py checks every value against botocore's enums.
"""

from __future__ import annotations

from typing import ClassVar

from fastscale.stacks.resources.base import Resource
from fastscale.stacks.resources.generated.aws import AppautoscalingPolicyProps, AppautoscalingTargetProps


class AppautoscalingTarget(Resource[AppautoscalingTargetProps]):
    """`aws_appautoscaling_target`: registers what auto scaling may change, and its bounds."""

    TYPE: ClassVar[str] = "aws_appautoscaling_target"
    PROVIDER: ClassVar[str] = "aws"


class AppautoscalingPolicy(Resource[AppautoscalingPolicyProps]):
    """`aws_appautoscaling_policy`: a target-tracking or step-scaling policy on a scalable target."""

    TYPE: ClassVar[str] = "aws_appautoscaling_policy"
    PROVIDER: ClassVar[str] = "aws"
