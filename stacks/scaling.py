"""Auto scaling of one endpoint: high-resolution target tracking, and scale from zero for components.

* Single-model endpoint: the variant's instance count is the scalable target
  (`sagemaker:variant:DesiredInstanceCount`), tracked on ConcurrentRequestsPerModel.
  SageMaker refuses an endpoint update that changes the instance type of a variant registered as a
  scalable target ("If the update would change the instance type for any model that is a target for auto
  scaling, the update fails": SageMaker developer guide, "Update an endpoint that uses auto scaling",
  https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-scaling-update.html). So the target and its
  policy are replaced whenever the variant's instance types change (`replace_triggered_by` a
  `terraform_data` holding them): the target depends on the endpoint, so Terraform deletes the policy and
  the target first, updates the endpoint, then registers the target and its policy again. Any other
  endpoint update (a new image, model data, environment) keeps auto scaling registered.
* Inference components: each component's copy count is a scalable target
  (`sagemaker:inference-component:DesiredCopyCount`), tracked on ConcurrentRequestsPerCopy. Instances follow
  the copies through the variant's managed instance scaling (set by the endpoint configuration).
* A component with `copies.min: 0` also gets a step-scaling policy and an alarm on
  NoCapacityInvocationFailures: with zero copies there is no per-copy metric for target tracking to divide,
  so without this pair the component would scale to zero once and never come back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastscale.infra.base.aws_facts import (
    COMPONENT_COPIES,
    NO_CAPACITY_METRIC,
    NS_INVOCATIONS,
    SCALE_FROM_ZERO_STEP,
    SERVICE_NAMESPACE,
    STEP_SCALING,
    TARGET_TRACKING,
    VARIANT_INSTANCES,
)
from fastscale.infra.model.naming import scalable_target_import_id, scaling_policy_import_id
from fastscale.infra.model.resolved import ResolvedComponent, ResolvedEndpoint, ResolvedScaling
from fastscale.stacks.resources.autoscaling import AppautoscalingPolicy, AppautoscalingTarget
from fastscale.stacks.resources.base import Group, Lifecycle, Resource, Scope
from fastscale.stacks.resources.builtin import TerraformData, TerraformDataProps
from fastscale.stacks.resources.cloudwatch import CloudwatchMetricAlarm, evaluation_window
from fastscale.stacks.resources.generated.aws import (
    AppautoscalingPolicyProps,
    AppautoscalingTargetProps,
    CloudwatchMetricAlarmProps,
    PredefinedMetricSpecification,
    StepAdjustment,
    StepScalingPolicyConfiguration,
    TargetTrackingScalingPolicyConfiguration,
)


class EndpointScaling(Group):
    """Scalable targets, target-tracking policies and scale-from-zero wiring of one endpoint.

    `components` maps each component's resource name (`ComponentNames.name`) to its inference component
    resource, so every scalable target is registered only after the thing it scales exists.
    The created resources stay reachable as attributes, keyed like `components`.
    """

    def __init__(
        self,
        scope: Scope,
        id: str,
        *,
        endpoint: ResolvedEndpoint,
        resource: Resource,
        components: Mapping[str, Resource],
    ) -> None:
        super().__init__(scope, id)
        self._tags = dict(endpoint.tags)
        self.targets: dict[str, AppautoscalingTarget] = {}
        self.target_tracking: dict[str, AppautoscalingPolicy] = {}
        self.scale_from_zero: dict[str, AppautoscalingPolicy] = {}
        self.scale_from_zero_alarms: dict[str, CloudwatchMetricAlarm] = {}
        self.instance_types: dict[str, TerraformData] = {}

        if endpoint.scaling is not None:
            if endpoint.scaling.enabled and endpoint.scaling.policy:
                self._variant(endpoint, resource, endpoint.scaling)
            return

        missing = [c.name for c in endpoint.components if c.name not in components]
        if missing:
            raise ValueError(
                f"EndpointScaling({endpoint.name}): no inference component resource for {', '.join(missing)}; "
                f"got {', '.join(sorted(components)) or 'none'}"
            )
        for c in endpoint.components:
            if c.scaling.enabled:
                self._component(c, components[c.name])

    # ------------------------------------------------------------------ single-model: scale instances

    def _variant(self, ep: ResolvedEndpoint, endpoint: Resource, scaling: ResolvedScaling) -> None:
        policy_name = scaling.policy
        assert policy_name is not None  # named whenever the model's autoscaling is enabled
        instance_types = TerraformData(
            self,
            "variant-instance-types",
            TerraformDataProps(input=[p.instance_type for p in ep.pools_by_priority]),
        )
        reregister = Lifecycle(replace_triggered_by=[instance_types.address])
        self.instance_types[ep.name] = instance_types
        target = AppautoscalingTarget(
            self,
            "variant-target",
            AppautoscalingTargetProps(
                service_namespace=SERVICE_NAMESPACE,
                scalable_dimension=VARIANT_INSTANCES,
                resource_id=scaling.resource_id,
                min_capacity=scaling.count.min,
                max_capacity=scaling.count.max,
                tags=dict(scaling.target_tags),
            ),
            depends_on=[endpoint],
            lifecycle=reregister,
        )
        self.targets[ep.name] = target
        self.target_tracking[ep.name] = self._target_tracking(
            "variant-target-tracking", policy_name, target, scaling, lifecycle=reregister
        )
        _import_adopted(ep.adopted_scalable_target, ep.adopted_scaling_policy, target, self.target_tracking[ep.name],
                        scaling.resource_id, VARIANT_INSTANCES)

    # ------------------------------------------------------------------ components: scale copies

    def _component(self, c: ResolvedComponent, component: Resource) -> None:
        key = c.key  # short, stable construct ids: the config's own component name
        scaling = c.scaling
        assert scaling.policy is not None, "a component's target-tracking policy is always named"
        target = AppautoscalingTarget(
            self,
            f"{key}-target",
            AppautoscalingTargetProps(
                service_namespace=SERVICE_NAMESPACE,
                scalable_dimension=COMPONENT_COPIES,
                resource_id=scaling.resource_id,
                min_capacity=scaling.count.min,
                max_capacity=scaling.count.max,
                tags=dict(scaling.target_tags),
            ),
            depends_on=[component],
        )
        self.targets[c.name] = target
        self.target_tracking[c.name] = self._target_tracking(f"{key}-target-tracking", scaling.policy, target, scaling)
        _import_adopted(c.adopted_scalable_target, c.adopted_scaling_policy, target, self.target_tracking[c.name],
                        scaling.resource_id, COMPONENT_COPIES)
        if scaling.scale_from_zero is not None:
            self._scale_from_zero(key, c, target)

    def _scale_from_zero(self, key: str, c: ResolvedComponent, target: AppautoscalingTarget) -> None:
        zero = c.scaling.scale_from_zero
        assert zero is not None, "called only for components that scale from zero"
        policy_name, alarm_name = zero.policy, zero.alarm
        policy = AppautoscalingPolicy(
            self,
            f"{key}-scale-from-zero",
            AppautoscalingPolicyProps(
                name=policy_name,
                **_same_target(target),
                policy_type=STEP_SCALING,
                step_scaling_policy_configuration=StepScalingPolicyConfiguration(
                    # Add exactly one copy whenever the alarm is in ALARM; target tracking takes over from one.
                    adjustment_type=SCALE_FROM_ZERO_STEP.adjustment_type,
                    metric_aggregation_type=SCALE_FROM_ZERO_STEP.metric_aggregation_type,
                    cooldown=zero.cooldown,
                    step_adjustment=[
                        StepAdjustment(
                            metric_interval_lower_bound=str(SCALE_FROM_ZERO_STEP.lower_bound),
                            scaling_adjustment=SCALE_FROM_ZERO_STEP.scaling_adjustment,
                        )
                    ],
                ),
            ),
        )
        alarm = CloudwatchMetricAlarm(
            self,
            f"{key}-no-capacity",
            CloudwatchMetricAlarmProps(
                alarm_name=alarm_name,
                alarm_description=(
                    f"Requests to {c.name} failed for lack of a copy "
                    f"{evaluation_window(zero.period, zero.evaluation_periods, zero.evaluation_periods)}: "
                    "add one copy (scale from zero)."
                ),
                namespace=NS_INVOCATIONS,
                metric_name=NO_CAPACITY_METRIC,
                dimensions={"InferenceComponentName": c.name},
                statistic="Sum",
                period=zero.period,
                evaluation_periods=zero.evaluation_periods,
                datapoints_to_alarm=zero.evaluation_periods,
                # >= 1, so the first failed request is enough (AWS's own example uses >, which needs two).
                threshold=1,
                comparison_operator="GreaterThanOrEqualToThreshold",
                # No failures means no datapoints at all; that is the healthy state, not an unknown one.
                treat_missing_data="notBreaching",
                alarm_actions=[policy.arn],
                tags=self._tags,
            ),
        )
        self.scale_from_zero[c.name] = policy
        self.scale_from_zero_alarms[c.name] = alarm

    # ----------------------------------------------------------------------------------------- shared

    def _target_tracking(
        self, id_: str, name: str, target: AppautoscalingTarget, scaling: ResolvedScaling,
        lifecycle: Lifecycle | None = None,
    ) -> AppautoscalingPolicy:
        """``lifecycle``: a policy replaced with its target (deregistering a target deletes its policies)."""
        metric = scaling.metric
        return AppautoscalingPolicy(
            self,
            id_,
            AppautoscalingPolicyProps(
                name=name,
                **_same_target(target),
                policy_type=TARGET_TRACKING,
                target_tracking_scaling_policy_configuration=TargetTrackingScalingPolicyConfiguration(
                    target_value=scaling.target,
                    predefined_metric_specification=PredefinedMetricSpecification(
                        predefined_metric_type=metric.predefined_metric_type
                    ),
                    scale_in_cooldown=scaling.scale_in_cooldown,
                    scale_out_cooldown=scaling.scale_out_cooldown,
                ),
            ),
            lifecycle=lifecycle,
        )


def _import_adopted(
    scalable_target: bool, scaling_policy: str | None, target: AppautoscalingTarget, policy: AppautoscalingPolicy,
    resource_id: str, dimension: str,
) -> None:
    """Import blocks for a live scalable target and target-tracking policy the config adopted."""
    if scalable_target:
        target.import_from(scalable_target_import_id(resource_id, dimension, SERVICE_NAMESPACE))
    if scaling_policy:
        policy.import_from(scaling_policy_import_id(resource_id, dimension, scaling_policy, SERVICE_NAMESPACE))


def _same_target(target: AppautoscalingTarget) -> dict[str, Any]:
    """A policy names its target through references, which also orders it after the target's registration."""
    return {
        "service_namespace": target.attr("service_namespace"),
        "scalable_dimension": target.attr("scalable_dimension"),
        "resource_id": target.attr("resource_id"),
    }
