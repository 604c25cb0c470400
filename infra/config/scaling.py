"""Auto scaling and updates of a config: the capacity triple, target tracking, scale from zero, rolling and
blue/green deployment settings."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    StringConstraints,
    model_validator,
)

from fastscale.infra.base.limits import ApiInt, Number
from fastscale.infra.config.common import _Strict

# --------------------------------------------------------------------------------------------- scaling


class Capacity(_Strict):
    """A min / initial / max triple (instances of an endpoint, or copies of an inference component)."""

    initial: ApiInt = Field(1, description="Count created at deploy time.")
    min: ApiInt = Field(1, description="Lowest count auto scaling may go to (0 enables scale to zero for components).")
    max: ApiInt = Field(1, description="Highest count auto scaling may go to.")


class ScaleFromZero(_Strict):
    """The alarm + step policy that adds the first copy when a component scaled to zero gets traffic."""

    period: ApiInt = Field(
        60,
        description="Alarm period in seconds on NoCapacityInvocationFailures. 60 is the period of AWS's developer "
        "guide; 10/20/30 (AWS's samples use 30) are accepted with a note (FS028): AWS does not document that this "
        "metric is published at high resolution.",
    )
    evaluation_periods: ApiInt = Field(1, description="Datapoints that must breach before the first copy is added.")
    cooldown: ApiInt = Field(60, description="Step-scaling cooldown in seconds.")


class Autoscaling(_Strict):
    """Target tracking on concurrency; AWS's high-resolution (sub-minute) metrics by default."""

    enabled: bool = Field(True, description="Register a scalable target and a target-tracking policy.")
    metric: Literal["high_resolution", "invocations"] = Field(
        "high_resolution",
        description="high_resolution: ConcurrentRequestsPerCopy / ConcurrentRequestsPerModel, AWS's high-resolution "
        "metrics, which emit data every 10 s (scale-out reacts in ~30 s in fastscale's model; docs/metrics.md). "
        "invocations: the 1-minute InvocationsPer* metrics (~3 min).",
    )
    target_concurrency: Number = Field(
        4, description="Target value: concurrent requests per copy (components) or per model (single-model endpoints)."
    )
    target_invocations: Number | None = Field(
        None,
        gt=0,
        description="With `metric: invocations`: the policy's target in the metric's own unit, requests per minute "
        "per instance (InvocationsPerInstance) or per copy (InvocationsPerCopy); AWS's documentation uses 70. "
        "Unset: `target_concurrency` is sent as that target. `fastscale adopt` writes it for a live invocations policy.",
    )
    scale_in_cooldown: ApiInt = Field(300, description="Seconds after a scale-in before another scale-in.")
    scale_out_cooldown: ApiInt = Field(0, description="Seconds after a scale-out before another scale-out.")
    scale_from_zero: ScaleFromZero = Field(
        default_factory=ScaleFromZero, description="Alarm + step policy used when copies.min is 0."
    )

    @model_validator(mode="after")
    def _invocations_target_needs_the_invocations_metric(self) -> Autoscaling:
        if self.target_invocations is not None and self.metric != "invocations":
            raise ValueError("target_invocations is the target of the invocations metric: set `metric: invocations`, "
                             "or remove it and set target_concurrency")
        return self

    @property
    def tracking_target(self) -> float:
        """The TargetValue of the target-tracking policy, in the unit of its metric."""
        if self.metric == "invocations" and self.target_invocations is not None:
            return self.target_invocations
        return self.target_concurrency


# --------------------------------------------------------------------------------------------- updates

#: The alarms automatic rollback watches unless `rollback_alarms` says otherwise.
DEFAULT_ROLLBACK_ALARMS = ("5xx-errors", "model-latency")

#: Alarm name or alarm kind of this stack (`5xx-errors`, `model-latency`, `gpu-memory`, `stuck-at-zero`).
AlarmRef = Annotated[str, StringConstraints(min_length=1, max_length=255)]


class InstanceStep(_Strict):
    """A step of an endpoint update: a number of instances, or a percentage of the endpoint's instances."""

    type: Literal["INSTANCE_COUNT", "CAPACITY_PERCENT"] = Field(
        "INSTANCE_COUNT", description="INSTANCE_COUNT: `value` instances; CAPACITY_PERCENT: `value` % of the instances."
    )
    value: ApiInt = Field(1, ge=1, description="Instances, or percent of the instances (at least 1).")


class CopyStep(_Strict):
    """A step of a component update: a number of copies, or a percentage of the component's copies."""

    type: Literal["COPY_COUNT", "CAPACITY_PERCENT"] = Field(
        "COPY_COUNT", description="COPY_COUNT: `value` copies; CAPACITY_PERCENT: `value` % of the copies."
    )
    value: ApiInt = Field(1, ge=1, description="Copies, or percent of the copies (at least 1).")


_BAKE_TIME = (
    "Seconds SageMaker watches the rollback alarms after each step before it goes on (WaitIntervalInSeconds, "
    "0-3600). Default: the longest evaluation window of the rollback alarms (period x evaluation periods) plus "
    "one period for the last datapoint to arrive, so an alarm can fire before the step is accepted."
)
_TIMEOUT = (
    "MaximumExecutionTimeoutInSeconds: the whole update fails (and rolls back) when it takes longer. Unset: "
    "SageMaker's default."
)


class ComponentRolling(_Strict):
    """Rolling update of an inference component: new copies replace old ones a batch at a time."""

    batch: CopyStep = Field(
        default_factory=CopyStep, description="Copies started (and old ones stopped) per step (MaximumBatchSize)."
    )
    bake_time: ApiInt | None = Field(None, ge=0, le=3600, description=_BAKE_TIME)
    timeout: ApiInt | None = Field(None, ge=600, le=28800, description=_TIMEOUT)
    rollback_batch: CopyStep | None = Field(
        None,
        description="Copies restored per step when rolling back (RollbackMaximumBatchSize). Unset: all at once, "
        "the fastest way back.",
    )


class EndpointRolling(_Strict):
    """Rolling update of a single-model endpoint: new instances replace old ones a batch at a time."""

    batch: InstanceStep = Field(
        default_factory=InstanceStep, description="Instances started (and old ones stopped) per step (MaximumBatchSize)."
    )
    bake_time: ApiInt | None = Field(None, ge=0, le=3600, description=_BAKE_TIME)
    timeout: ApiInt | None = Field(None, ge=600, le=28800, description=_TIMEOUT + " hashicorp/aws accepts at most 14400.")
    rollback_batch: InstanceStep | None = Field(
        None,
        description="Instances restored per step when rolling back (RollbackMaximumBatchSize). Unset: all at "
        "once, the fastest way back.",
    )


class BlueGreen(_Strict):
    """Blue/green update of a single-model endpoint: a new fleet is started, then traffic moves to it."""

    traffic: Literal["ALL_AT_ONCE", "CANARY", "LINEAR"] = Field(
        "ALL_AT_ONCE",
        description="ALL_AT_ONCE moves every request at once, then bakes; CANARY moves `step` first, bakes, then the "
        "rest; LINEAR moves `step` at a time, baking after each.",
    )
    step: InstanceStep | None = Field(
        None,
        description="CANARY: the canary's size (CanarySize, at most 50 % of the instances); LINEAR: the size of each "
        "step (LinearStepSize, 10-50 % of the instances). Required for both, not allowed with ALL_AT_ONCE.",
    )
    bake_time: ApiInt | None = Field(None, ge=0, le=3600, description=_BAKE_TIME)
    termination_wait: ApiInt = Field(
        0,
        ge=0,
        le=3600,
        description="Seconds the old fleet is kept after all traffic moved, before it is terminated "
        "(TerminationWaitInSeconds, 0-3600).",
    )
    timeout: ApiInt | None = Field(None, ge=600, le=28800, description=_TIMEOUT + " hashicorp/aws accepts at most 14400.")


class Deployment(_Strict):
    """How updates roll out (a new image, model data or setting): strategy, bake time, automatic rollback."""

    auto_rollback: bool = Field(
        True,
        description="Roll the update back when one of `rollback_alarms` fires during it (AutoRollbackConfiguration).",
    )
    rollback_alarms: list[AlarmRef] = Field(
        default_factory=lambda: list(DEFAULT_ROLLBACK_ALARMS),
        min_length=1,
        max_length=10,
        description="Alarms of this stack that roll an update back (1-10): an alarm kind (`5xx-errors`, "
        "`model-latency`, `gpu-memory`, and `stuck-at-zero` for components that scale to zero) or the full name of an "
        "alarm the stack creates. Components watch their own 5xx and latency alarms. The stack creates the "
        "5xx and latency alarms they name even when `alarms.enabled` is false.",
    )
    blue_green: BlueGreen | None = Field(
        None,
        description="Single-model endpoints: blue/green update (the default, ALL_AT_ONCE with a bake time).",
    )
    rolling: EndpointRolling | None = Field(
        None, description="Single-model endpoints: rolling update instead of blue/green (fewer extra instances)."
    )
    components: ComponentRolling = Field(
        default_factory=ComponentRolling,
        description="Inference-component endpoints: the rolling update of every component (one copy at a time by "
        "default); a component's own `deployment` overrides it.",
    )


class ComponentDeployment(_Strict):
    """A component's own update settings; unset keys come from the endpoint's `deployment`."""

    auto_rollback: bool | None = Field(None, description="Overrides the endpoint's `deployment.auto_rollback`.")
    rollback_alarms: list[AlarmRef] | None = Field(
        None, min_length=1, max_length=10, description="Overrides the endpoint's `deployment.rollback_alarms`."
    )
    rolling: ComponentRolling | None = Field(None, description="Overrides the endpoint's `deployment.components`.")
