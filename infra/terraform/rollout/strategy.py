"""How SageMaker carries out an update of an endpoint or an inference component: rolling (batch by batch) or
blue/green (a new fleet, traffic shifted all at once, as a canary or linearly), as the planned
``deployment_config`` says, or SageMaker's default when there is none.

:mod:`.classify` attaches a :class:`Strategy` to every rollout; :mod:`.duration` turns it into an expected
duration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastscale.infra.terraform.rollout.kinds import ENDPOINT_TYPE, ChangeKind
from fastscale.infra.terraform.rollout.plan import nested_block


@dataclass(frozen=True)
class Capacity:
    """A batch or traffic step: ``type`` COPY_COUNT / INSTANCE_COUNT / CAPACITY_PERCENT, and its value."""

    type: str
    value: float

    def units_of(self, total: int) -> int:
        """How many copies or instances this is out of ``total`` (at least one)."""
        if self.type == "CAPACITY_PERCENT":
            return max(1, math.ceil(total * self.value / 100))
        return max(1, int(self.value))

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.type == "CAPACITY_PERCENT" else f"{self.value:g}"


@dataclass(frozen=True)
class Strategy:
    """How SageMaker carries out an update, as the planned ``deployment_config`` says (or its default).

    ``wait_seconds`` is the bake after each rolling batch or each traffic step; ``step`` the batch size
    (rolling) or canary size / linear step (blue/green).
    """

    kind: ChangeKind  # ROLLING or BLUE_GREEN
    configured: bool  # False: no deployment_config, SageMaker's default
    traffic: str | None = None  # blue/green: ALL_AT_ONCE, CANARY or LINEAR
    step: Capacity | None = None
    wait_seconds: float = 0.0
    termination_wait_seconds: float = 0.0
    max_execution_seconds: float | None = None
    rollback_step: Capacity | None = None
    alarms: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.kind is ChangeKind.ROLLING:
            text = f"rolling, batches of {self.step}" if self.step else "rolling"
            text += f", {self.wait_seconds:g}s wait" if self.wait_seconds else ""
        else:
            text = "blue/green, " + {"CANARY": f"canary {self.step}", "LINEAR": f"linear steps of {self.step}"}.get(
                self.traffic or "", "all at once")
            text += f", {self.wait_seconds:g}s bake" if self.wait_seconds else ""
        if not self.configured:
            text += " (SageMaker's default: no deployment configuration)"
        elif not self.alarms:
            text += ", no rollback alarms"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "configured": self.configured,
            "traffic": self.traffic,
            "step": {"type": self.step.type, "value": self.step.value} if self.step else None,
            "wait_seconds": self.wait_seconds,
            "termination_wait_seconds": self.termination_wait_seconds,
            "max_execution_seconds": self.max_execution_seconds,
            "rollback_step": {"type": self.rollback_step.type, "value": self.rollback_step.value} if self.rollback_step else None,
            "rollback_alarms": list(self.alarms),
        }


def _capacity(value: Any) -> Capacity | None:
    block = nested_block(value)
    if block is None or block.get("value") is None:
        return None
    return Capacity(str(block.get("type") or "CAPACITY_PERCENT"), float(block["value"]))


def _number(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def rollback_alarms(deployment_config: Any) -> tuple[str, ...]:
    """The alarm names of a planned ``deployment_config.auto_rollback_configuration``."""
    config = nested_block(deployment_config)
    block = nested_block(config.get("auto_rollback_configuration")) if config else None
    alarms = (block or {}).get("alarms") or []
    return tuple(str(a["alarm_name"]) for a in alarms if isinstance(a, Mapping) and a.get("alarm_name"))


def read_strategy(resource_type: str, after: Mapping[str, Any] | None) -> Strategy:
    """The update strategy in a planned endpoint's or component's ``deployment_config``.

    No block means SageMaker's default: blue/green with all traffic shifted at once and no bake for an
    endpoint; all new copies at once for a component (the same blue/green shape, per copy).
    """
    config = nested_block((after or {}).get("deployment_config"))
    alarms = rollback_alarms(config)
    rolling = nested_block(config.get("rolling_update_policy")) if config else None
    if rolling is not None:
        return Strategy(
            kind=ChangeKind.ROLLING,
            configured=True,
            step=_capacity(rolling.get("maximum_batch_size")),
            wait_seconds=_number(rolling.get("wait_interval_in_seconds")),
            max_execution_seconds=_number(rolling.get("maximum_execution_timeout_in_seconds"), 0.0) or None,
            rollback_step=_capacity(rolling.get("rollback_maximum_batch_size")),
            alarms=alarms,
        )
    blue_green = nested_block(config.get("blue_green_update_policy")) if config and resource_type == ENDPOINT_TYPE else None
    if blue_green is not None:
        routing = nested_block(blue_green.get("traffic_routing_configuration")) or {}
        traffic = str(routing.get("type") or "ALL_AT_ONCE")
        return Strategy(
            kind=ChangeKind.BLUE_GREEN,
            configured=True,
            traffic=traffic,
            step=_capacity(routing.get("canary_size") if traffic == "CANARY" else routing.get("linear_step_size")),
            wait_seconds=_number(routing.get("wait_interval_in_seconds")),
            termination_wait_seconds=_number(blue_green.get("termination_wait_in_seconds")),
            max_execution_seconds=_number(blue_green.get("maximum_execution_timeout_in_seconds"), 0.0) or None,
            alarms=alarms,
        )
    return Strategy(kind=ChangeKind.BLUE_GREEN, configured=config is not None, traffic="ALL_AT_ONCE", alarms=alarms)
