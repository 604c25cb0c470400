"""How long a rollout takes: the inputs (how many copies or instances are replaced, how long one takes to start,
from the config and the scale-out estimate) and the expected duration of a :class:`.strategy.Strategy`.

:mod:`.classify` asks for a duration for every rollout whose endpoint or component is in the config.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastscale.infra.analysis.estimate import estimate_config
from fastscale.infra.model.cutover import cutover_count
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.terraform.rollout.kinds import ChangeKind
from fastscale.infra.terraform.rollout.strategy import Strategy

if TYPE_CHECKING:
    from fastscale.infra.analysis.estimate.params import EstimateParams


@dataclass(frozen=True)
class RolloutInputs:
    """What the duration of one endpoint's or component's rollout depends on, from the config and the
    scale-out estimate: how many copies (or instances) are replaced, and how long one takes to start."""

    units: int
    unit: str  # "copy" or "instance"
    startup_seconds: float | None  # None: the estimate cannot say (see note)
    note: str = ""
    #: endpoints: the config's instances.initial, and the live count read before the plan (None: not live)
    initial: int | None = None
    live: int | None = None
    #: endpoints: what the name of each endpoint configuration the stack creates begins with (`<project>-<name>-`,
    #: an adopted endpoint's too, whatever its live name); None: the endpoint's name and ``-``
    config_prefix: str | None = None


@dataclass(frozen=True)
class RolloutDuration:
    seconds: float
    steps: int  # rolling batches, or blue/green traffic steps
    formula: str  # how the number was reached, for people

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 1), "steps": self.steps, "formula": self.formula}


def rollout_duration(strategy: Strategy, units: int, startup_seconds: float) -> RolloutDuration:
    """Expected seconds from the start of an update to the old version gone, with no rollback.

    Assumes:
    - rolling: ``ceil(units / batch)`` batches one after the other, each the start-up of a new copy or
      instance plus the wait interval (SageMaker's bake, during which it watches the rollback alarms);
    - blue/green: the whole new fleet (or all new copies) starts at once (one start-up), then every traffic
      step is followed by the wait interval (one step all at once, two for a canary, ``ceil(100 / step%)``
      or ``ceil(units / step)`` for linear), then the termination wait before the old fleet goes;
    - start-up is the estimate model's (``infra.analysis.estimate``) for a new copy or instance of a version no
      instance has cached yet, with room for it on the endpoint: a batch that must wait for new instances
      takes longer, which the rules about spare capacity warn of;
    - no time is counted for SageMaker's own bookkeeping between steps, nor for a rollback.
    """
    units = max(1, units)
    if strategy.kind is ChangeKind.ROLLING:
        batch = strategy.step.units_of(units) if strategy.step else units
        batches = math.ceil(units / batch)
        seconds = batches * (startup_seconds + strategy.wait_seconds)
        return RolloutDuration(seconds, batches, f"{batches} batch(es) × ({_minutes(startup_seconds)} start-up + "
                                                 f"{_minutes(strategy.wait_seconds)} wait)")
    if strategy.traffic == "CANARY":
        steps = 2
    elif strategy.traffic == "LINEAR" and strategy.step is not None:
        if strategy.step.type == "CAPACITY_PERCENT":
            steps = math.ceil(100 / max(strategy.step.value, 1.0))
        else:
            steps = math.ceil(units / strategy.step.units_of(units))
    else:
        steps = 1
    seconds = startup_seconds + steps * strategy.wait_seconds + strategy.termination_wait_seconds
    formula = f"{_minutes(startup_seconds)} start-up + {steps} step(s) × {_minutes(strategy.wait_seconds)} bake"
    if strategy.termination_wait_seconds:
        formula += f" + {_minutes(strategy.termination_wait_seconds)} termination wait"
    return RolloutDuration(seconds, steps, formula)


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.1f} min"


def rollout_inputs(stack: ResolvedStack, params: EstimateParams | None = None,
                   live: Mapping[str, int | None] | None = None) -> dict[str, RolloutInputs]:
    """Per SageMaker name (endpoint or inference component), what its rollout duration depends on.

    A component replaces ``copies.initial`` copies, each the estimate's "new copy, no data cache" start-up
    (a new version is not in any instance's cache) without its detection phases; an endpoint starts its
    cut-over count of instances (``infra.model.cutover``: the live count from ``live``, by the endpoint's name in
    AWS, an adopted endpoint's live name, as ``infra.aws.cutover.live_instance_counts`` reads them; within
    ``instances.initial`` and ``instances.max``), each a new instance's start-up (with container image
    caching where it applies). A component's live copy count may differ when auto scaling has moved it.
    """
    out: dict[str, RolloutInputs] = {}
    workloads = [(ep, w) for ep in stack.endpoints for w in ep.workloads]
    for estimate, (ep, workload) in zip(estimate_config(stack, params), workloads, strict=True):
        reason = "; ".join(n for n in estimate.notes if n.startswith("not estimated")) or "no estimate"
        copy = estimate.scenario("copy_no_data_cache")
        instance = estimate.scenario("instance_image_cache") or estimate.scenario("instance_no_image_cache")
        if workload.is_component:
            out[workload.name] = RolloutInputs(
                workload.scaling.count.initial or 1, "copy",
                copy.seconds_from("image_pull") if copy else None, "" if copy else reason)
        name = ep.name
        if name not in out:  # an endpoint's fleet: its first workload's new instance
            found = (live or {}).get(name)
            out[name] = RolloutInputs(
                cutover_count(ep, found) or 1, "instance",
                instance.seconds_from("instance_provisioning") if instance else None, "" if instance else reason,
                initial=ep.instances.initial, live=found, config_prefix=ep.endpoint_config_prefix)
    return out
