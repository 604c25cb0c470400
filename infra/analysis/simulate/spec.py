"""What the engine is given: one workload's scaling in the units the model works in, and the load protocol.

:class:`SimSpec` holds every number :mod:`fastscale.infra.analysis.simulate.engine` needs (built from a config by
:mod:`fastscale.infra.analysis.simulate.build`, or by hand in tests); :class:`Load` is what a request-level model
(:mod:`fastscale.infra.analysis.simulate.requests`) offers the engine instead of a number per second. What the
engine gives back is in :mod:`fastscale.infra.analysis.simulate.result`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

#: Slack when comparing floats that stand for whole counts (ceil of 8.000000001 must stay 8).
EPS = 1e-9


@dataclass(frozen=True)
class Timings:
    """Seconds from a desired count changing to new capacity serving (from the estimate model's timelines)."""

    decision: float  # alarm -> desired count changed
    copy_on_instance: float  # a new copy on an instance in service -> serving
    provisioning: float  # a new instance requested -> in service
    copy_on_new_instance: float  # a new instance in service -> its copy serving


@dataclass(frozen=True)
class Alarm:
    """A CloudWatch alarm the model evaluates: ``datapoints`` periods of ``period`` seconds must all breach."""

    period: int
    datapoints: int


@dataclass(frozen=True)
class ScaleFromZero:
    alarm: Alarm  # NoCapacityInvocationFailures, Sum >= 1 per period
    cooldown: int  # step policy cooldown


def invocations_as_concurrency(per_minute: float, service_time: float) -> float:
    """An invocations target (requests per minute per unit) as concurrent requests per unit, by Little's law:
    requests in flight = arrival rate x the seconds each one takes."""
    return per_minute / 60 * service_time

@dataclass(frozen=True)
class SimSpec:
    """One workload and its scaling, in the units the model works in.

    A *unit* is a copy of an inference component, or an instance of a single-model endpoint (then
    ``copies_per_instance`` is 1 and the instance bounds equal the unit bounds).
    """

    #: The scaling policy's target in concurrent requests per unit (with ``invocations_target``, derived from it).
    target: float
    units_min: int
    units_max: int
    instances_min: int
    instances_max: int
    copies_per_instance: int
    timings: Timings
    scale_out: Alarm | None  # None: auto scaling disabled
    scale_in: Alarm | None
    scale_in_threshold: float  # fraction of target below which a scale-in datapoint breaches
    scale_in_cooldown: int
    scale_out_cooldown: int
    lag: int  # seconds from a period's end to the alarm evaluating its datapoint
    reinvoke: int  # an alarm in ALARM invokes its scaling policy again this often
    scale_from_zero: ScaleFromZero | None
    service_time: float  # mean seconds per request, to turn concurrency into requests
    price_per_hour: float | None = None
    reserved_slots: int = 0  # slots other components hold on the endpoint's instances (their minimum copies)
    initial_units: int | None = None  # fixed starting count (auto scaling disabled); else the demand's steady state
    unit: str = "copy"  # what a unit is called in events: copy | instance
    #: Concurrent requests one unit serves at full speed (where it saturates); beyond it requests queue.
    #: None: the target (the model before capacity and target were separated).
    capacity: float | None = None
    #: Step policy adjustment for scale from zero (ChangeInCapacity, applied to the desired count).
    step_adjustment: int = 1
    #: An invocations policy's target (InvocationsPerInstance / InvocationsPerCopy): requests per minute per unit.
    #: Set, ``target`` is what it means in concurrent requests at this spec's ``service_time`` (Little's law:
    #: requests in flight = arrival rate x time each one takes), so a copy of the spec with another service time
    #: (the traffic's, or the request-level model's) tracks the same rate.
    invocations_target: float | None = None

    @property
    def unit_capacity(self) -> float:
        return self.target if self.capacity is None else self.capacity

    def __post_init__(self) -> None:
        if self.invocations_target is not None and self.service_time > 0:
            object.__setattr__(self, "target", invocations_as_concurrency(self.invocations_target, self.service_time))
        if self.target <= 0:
            raise ValueError("target must be positive")
        if not 0 <= self.units_min <= self.units_max:
            raise ValueError("need 0 <= units_min <= units_max")
        if not 0 <= self.instances_min <= self.instances_max or self.copies_per_instance < 1:
            raise ValueError("need 0 <= instances_min <= instances_max and at least one copy per instance")
        if self.service_time <= 0:
            raise ValueError("service_time must be positive")
        if self.capacity is not None and self.capacity <= 0:
            raise ValueError("capacity must be positive")
        if self.step_adjustment < 1:
            raise ValueError("step_adjustment must be at least 1")


class LoadStopped(Exception):
    """Raised by a load's ``step`` to end the run early; the engine sets ``minimum_bound`` (as in Result) on it
    for the part it ran."""

    minimum_bound = False


class Load(Protocol):
    """What the endpoint is asked to serve, when it is more than a number per second (the request-level model).

    The engine hands over a stretch of seconds, ``first`` to ``stop`` (excluded), and the numbers of the units in
    service throughout it; the load serves its requests on them and, for each second in order, passes
    ``demand`` the mean concurrent requests over the second (queued ones included), ``queued`` the mean
    requests waiting for a slot and ``rejected`` the requests that failed with no unit in service. A load that
    raises LoadStopped has passed on the seconds before the one it stopped at, and nothing of that one.
    """

    def serve(self, first: int, stop: int, serving: Sequence[int], demand: Callable[[float], None],
              queued: Callable[[float], None], rejected: Callable[[float], None]) -> None: ...
