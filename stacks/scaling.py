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
from fastscale.infra.config import Adopted, Autoscaling, FastscaleConfig
from fastscale.infra.model import capacity as capacity_facts
from fastscale.infra.model.detection import WorkloadKind, scaling_metric
from fastscale.infra.model.naming import (
    ComponentNames,
    EndpointNames,
    scalable_target_import_id,
    scaling_policy_import_id,
    tags,
)
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
        config: FastscaleConfig,
        names: EndpointNames,
        endpoint: Resource,
        components: Mapping[str, Resource],
    ) -> None:
        super().__init__(scope, id)
        self._tags = tags(config, names.spec)
        self.targets: dict[str, AppautoscalingTarget] = {}
        self.target_tracking: dict[str, AppautoscalingPolicy] = {}
        self.scale_from_zero: dict[str, AppautoscalingPolicy] = {}
        self.scale_from_zero_alarms: dict[str, CloudwatchMetricAlarm] = {}
        #: endpoint name -> the `terraform_data` holding its variant's instance types (auto-scaled variants)
        self.instance_types: dict[str, TerraformData] = {}

        model = names.spec.model
        if model is not None:
            if model.autoscaling.enabled and names.target_tracking_policy:
                self._variant(names, endpoint, model.autoscaling)
            return

        missing = [c.name for c in names.components if c.name not in components]
        if missing:
            raise ValueError(
                f"EndpointScaling({names.endpoint}): no inference component resource for {', '.join(missing)}; "
                f"got {', '.join(sorted(components)) or 'none'}"
            )
        for c in names.components:
            if c.spec.autoscaling.enabled:
                self._component(c, components[c.name])

    # ----------------------------------------------------------------------------------------- variant

    def _variant(self, names: EndpointNames, endpoint: Resource, autoscaling: Autoscaling) -> None:
        policy_name = names.target_tracking_policy
        assert policy_name is not None  # set by naming whenever the model's autoscaling is enabled
        capacity = names.spec.instances
        # Replaced with the target and its policy whenever the variant's instance types change: AWS fails
        # an update that changes the instance type of a registered variant (see the module's docstring).
        instance_types = TerraformData(
            self,
            "variant-instance-types",
            TerraformDataProps(input=[p.instance_type for p in capacity_facts.pools_by_priority(names.spec)]),
        )
        reregister = Lifecycle(replace_triggered_by=[instance_types.address])
        self.instance_types[names.endpoint] = instance_types
        target = AppautoscalingTarget(
            self,
            "variant-target",
            AppautoscalingTargetProps(
                service_namespace=SERVICE_NAMESPACE,
                scalable_dimension=VARIANT_INSTANCES,
                resource_id=names.resource_id,
                min_capacity=capacity.min,
                max_capacity=capacity.max,
                tags=self._tags,
            ),
            # The resource id is a literal name, so Terraform cannot infer that the endpoint must exist first.
            # This order also makes a replaced target go before the endpoint's update and come back after it.
            depends_on=[endpoint],
            lifecycle=reregister,
        )
        self.targets[names.endpoint] = target
        self.target_tracking[names.endpoint] = self._target_tracking(
            "variant-target-tracking", policy_name, target, "model", autoscaling, lifecycle=reregister
        )
        _import_adopted(names.spec.adopted, target, self.target_tracking[names.endpoint], names.resource_id, VARIANT_INSTANCES)

    # ----------------------------------------------------------------------------------------- components

    def _component(self, c: ComponentNames, component: Resource) -> None:
        key = c.spec.name  # short, stable construct ids: the config's own component name
        target = AppautoscalingTarget(
            self,
            f"{key}-target",
            AppautoscalingTargetProps(
                service_namespace=SERVICE_NAMESPACE,
                scalable_dimension=COMPONENT_COPIES,
                resource_id=c.resource_id,
                min_capacity=c.spec.copies.min,
                max_capacity=c.spec.copies.max,
                tags=self._tags,
            ),
            depends_on=[component],
        )
        self.targets[c.name] = target
        self.target_tracking[c.name] = self._target_tracking(
            f"{key}-target-tracking", c.target_tracking_policy, target, "component", c.spec.autoscaling
        )
        _import_adopted(c.spec.adopted, target, self.target_tracking[c.name], c.resource_id, COMPONENT_COPIES)
        if c.scale_from_zero_policy and c.scale_from_zero_alarm:
            self._scale_from_zero(key, c, target)

    def _scale_from_zero(self, key: str, c: ComponentNames, target: AppautoscalingTarget) -> None:
        zero = c.spec.autoscaling.scale_from_zero
        policy_name, alarm_name = c.scale_from_zero_policy, c.scale_from_zero_alarm
        assert policy_name and alarm_name, "called only for components named for scale from zero"
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
        self, id_: str, name: str, target: AppautoscalingTarget, kind: WorkloadKind, autoscaling: Autoscaling,
        lifecycle: Lifecycle | None = None,
    ) -> AppautoscalingPolicy:
        """``lifecycle``: a policy replaced with its target (deregistering a target deletes its policies)."""
        metric = scaling_metric(kind, autoscaling)
        return AppautoscalingPolicy(
            self,
            id_,
            AppautoscalingPolicyProps(
                name=name,
                **_same_target(target),
                policy_type=TARGET_TRACKING,
                target_tracking_scaling_policy_configuration=TargetTrackingScalingPolicyConfiguration(
                    target_value=autoscaling.tracking_target,
                    predefined_metric_specification=PredefinedMetricSpecification(
                        predefined_metric_type=metric.predefined_metric_type
                    ),
                    scale_in_cooldown=autoscaling.scale_in_cooldown,
                    scale_out_cooldown=autoscaling.scale_out_cooldown,
                ),
            ),
            lifecycle=lifecycle,
        )


def _import_adopted(
    adopted: Adopted | None, target: AppautoscalingTarget, policy: AppautoscalingPolicy, resource_id: str, dimension: str
) -> None:
    """Import blocks for a live scalable target and target-tracking policy the config adopted."""
    if adopted is None:
        return
    if adopted.scalable_target:
        target.import_from(scalable_target_import_id(resource_id, dimension, SERVICE_NAMESPACE))
    if adopted.scaling_policy:
        policy.import_from(scaling_policy_import_id(resource_id, dimension, adopted.scaling_policy, SERVICE_NAMESPACE))


def _same_target(target: AppautoscalingTarget) -> dict[str, Any]:
    """A policy names its target through references, which also orders it after the target's registration."""
    return {
        "service_namespace": target.attr("service_namespace"),
        "scalable_dimension": target.attr("scalable_dimension"),
        "resource_id": target.attr("resource_id"),
    }
