"""The `deployment_config` of every single-model endpoint and inference component.

`infra.model.deployment` resolves what each update does (strategy, batch, bake time, rollback alarms); this
turns it into the providers' attributes: `aws_sagemaker_endpoint.deployment_config` (blue/green or rolling)
and `awscc_sagemaker_inference_component.deployment_config` (rolling). Rollback alarm names are
references to the stack's alarm resources, so Terraform creates an alarm before what it watches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Protocol

from fastscale.infra.model.deployment import Rollout
from fastscale.stacks.resources.base import Resource
from fastscale.stacks.resources.cloudwatch import CloudwatchMetricAlarm
from fastscale.stacks.resources.generated import aws as aws_props
from fastscale.stacks.resources.generated import awscc as awscc_props


class _Step(Protocol):
    """A batch or traffic step of the config: instances, copies, or a percentage of them."""

    @property
    def type(self) -> str: ...
    @property
    def value(self) -> int: ...


def _size(step: _Step | None) -> aws_props.CapacitySize | None:
    return None if step is None else aws_props.CapacitySize(type=step.type, value=step.value)


def _copies(step: _Step | None) -> awscc_props.InferenceComponentCapacitySize | None:
    return None if step is None else awscc_props.InferenceComponentCapacitySize(type=step.type, value=step.value)


def _alarm_refs(rollout: Rollout, alarms: Mapping[str, CloudwatchMetricAlarm]) -> list[str]:
    """References to the alarm resources' names. An alarm the stack does not create is a validation error
    (FS047) before synthesis; here it would be a bug."""
    return [alarms[a.name].attr("alarm_name") for a in rollout.alarms]


def endpoint_deployment_config(
    rollout: Rollout, alarms: Mapping[str, CloudwatchMetricAlarm]
) -> aws_props.DeploymentConfig:
    refs = _alarm_refs(rollout, alarms)
    rollback = (
        aws_props.AutoRollbackConfiguration(alarms=[aws_props.Alarm(alarm_name=r) for r in refs]) if refs else None
    )
    if rollout.strategy == "rolling":
        rolling = rollout.rolling
        assert rolling is not None
        batch = _size(rolling.batch)
        assert batch is not None
        return aws_props.DeploymentConfig(
            rolling_update_policy=aws_props.RollingUpdatePolicy(
                maximum_batch_size=batch,
                wait_interval_in_seconds=rollout.bake_time,
                maximum_execution_timeout_in_seconds=rolling.timeout,
                rollback_maximum_batch_size=_size(rolling.rollback_batch),
            ),
            auto_rollback_configuration=rollback,
        )
    blue_green = rollout.blue_green
    assert blue_green is not None
    step = _size(blue_green.step)
    return aws_props.DeploymentConfig(
        blue_green_update_policy=aws_props.BlueGreenUpdatePolicy(
            traffic_routing_configuration=aws_props.TrafficRoutingConfiguration(
                type=blue_green.traffic,
                wait_interval_in_seconds=rollout.bake_time,
                canary_size=step if blue_green.traffic == "CANARY" else None,
                linear_step_size=step if blue_green.traffic == "LINEAR" else None,
            ),
            termination_wait_in_seconds=blue_green.termination_wait,
            maximum_execution_timeout_in_seconds=blue_green.timeout,
        ),
        auto_rollback_configuration=rollback,
    )


def component_deployment_config(
    rollout: Rollout, alarms: Mapping[str, CloudwatchMetricAlarm]
) -> awscc_props.InferenceComponentDeploymentConfig:
    rolling = rollout.rolling
    assert rolling is not None
    batch = _copies(rolling.batch)
    assert batch is not None
    refs = _alarm_refs(rollout, alarms)
    return awscc_props.InferenceComponentDeploymentConfig(
        rolling_update_policy=awscc_props.InferenceComponentRollingUpdatePolicy(
            maximum_batch_size=batch,
            wait_interval_in_seconds=rollout.bake_time,
            maximum_execution_timeout_in_seconds=rolling.timeout,
            rollback_maximum_batch_size=_copies(rolling.rollback_batch),
        ),
        auto_rollback_configuration=awscc_props.AutoRollbackConfiguration(
            alarms=[awscc_props.AlarmName(alarm_name=r) for r in refs]
        )
        if refs
        else None,
    )


def attach(
    rollouts: list[Rollout],
    endpoints: Mapping[str, Resource[aws_props.SagemakerEndpointProps]],
    components: Mapping[str, Resource[awscc_props.SagemakerInferenceComponentProps]],
    alarms: Mapping[str, CloudwatchMetricAlarm],
) -> None:
    """Give every endpoint (by endpoint name) and component (by component name) its deployment_config.

    Set once every alarm exists, since an update may roll back on an alarm of another endpoint; the
    resources' attributes are read when the stack is rendered."""
    for rollout in rollouts:
        if rollout.component is None:
            endpoint = endpoints[rollout.target]
            endpoint.props = dataclasses.replace(
                endpoint.props, deployment_config=endpoint_deployment_config(rollout, alarms)
            )
        else:
            component = components[rollout.target]
            component.props = dataclasses.replace(
                component.props, deployment_config=component_deployment_config(rollout, alarms)
            )
