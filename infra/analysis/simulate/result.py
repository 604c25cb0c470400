"""What the engine gives back: a run second by second, its events, and the summary a reader compares.

:func:`fastscale.infra.analysis.simulate.engine.simulate` builds a :class:`Result` from a
:class:`~fastscale.infra.analysis.simulate.spec.SimSpec`; :func:`with_summary` adds the :class:`Summary` from the
series alone (the seconds the alarms fired aside), so the figures are the same whatever produced the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastscale.infra.analysis.simulate.spec import EPS, SimSpec


@dataclass(frozen=True)
class Event:
    second: int
    kind: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"second": self.second, "kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class Summary:
    short_at: int | None  # first second demand was not fully served
    detection_seconds: int | None  # from short_at to the first scale-out alarm
    served_after_seconds: int | None  # from short_at until capacity caught up; None: not within the window
    seconds_short: int  # seconds with demand queued or rejected
    queued_request_seconds: float
    rejected_requests: float
    peak_copies: int  # copies placed or wanted, starting ones included
    peak_serving: int
    peak_instances: int  # provisioning ones included
    instance_seconds: int
    cost_usd: float | None
    #: From short_at until the first new unit serves (more units serving than at short_at); None: none did.
    first_capacity_seconds: int | None = None

    @property
    def full_capacity_seconds(self) -> int | None:
        """From short_at until capacity caught up with the demand (the same figure as served_after)."""
        return self.served_after_seconds

    def to_dict(self) -> dict[str, Any]:
        return {
            "short_at_second": self.short_at,
            "detection_seconds": self.detection_seconds,
            "first_capacity_seconds": self.first_capacity_seconds,
            "full_capacity_seconds": self.full_capacity_seconds,
            "served_after_seconds": self.served_after_seconds,
            "seconds_short": self.seconds_short,
            "queued_request_seconds": round(self.queued_request_seconds, 1),
            "rejected_requests": round(self.rejected_requests, 1),
            "peak_copies": self.peak_copies,
            "peak_serving_copies": self.peak_serving,
            "peak_instances": self.peak_instances,
            "instance_seconds": self.instance_seconds,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 2),
        }


@dataclass(frozen=True)
class Result:
    # One value a second; arrays (``array('d')``, ``array('l')``) when the engine made them.
    demand: Sequence[float]
    desired: Sequence[int]
    copies: Sequence[int]  # placed, starting ones included
    serving: Sequence[int]
    instances: Sequence[int]  # provisioning ones included
    instances_serving: Sequence[int]
    capacity: Sequence[float]  # concurrent requests served at full speed
    queued: Sequence[float]
    rejected: Sequence[float]  # requests that failed this second
    events: tuple[Event, ...]
    summary: Summary
    #: The minimum (units_min, instances_min) changed something: the starting count, a scaling decision, an
    #: instance kept from release; or a request failed with no capacity (which a scale-from-zero policy, only
    #: present with a minimum of 0, would have acted on). False: the same spec with any lower minimum gives this
    #: very result, which lets ``recommend`` simulate candidates that differ only in their minimum once.
    minimum_bound: bool = False

    def steps_dict(self) -> dict[str, list[Any]]:
        return {
            "demand": [round(d, 3) for d in self.demand],
            "capacity": [round(c, 3) for c in self.capacity],
            "desired_copies": list(self.desired),
            "copies": list(self.copies),
            "serving_copies": list(self.serving),
            "instances": list(self.instances),
            "serving_instances": list(self.instances_serving),
            "queued": [round(q, 3) for q in self.queued],
            "rejected": [round(r, 3) for r in self.rejected],
        }


def with_summary(r: Result, s: SimSpec, alarms: list[int]) -> Result:
    """``r`` with its summary: when the demand first went short, how long detection and new capacity took,
    peaks and cost. ``alarms`` are the seconds a scale-out or no-capacity alarm invoked its policy."""
    n = len(r.demand)
    short = [d > c + EPS for d, c in zip(r.demand, r.capacity, strict=True)]
    short_at = next((t for t in range(n) if short[t]), None)
    served_after = detection = first_capacity = None
    if short_at is not None:
        before = r.serving[short_at]
        first_at = next((t for t in range(short_at, n) if r.serving[t] > before), None)
        first_capacity = None if first_at is None else first_at - short_at
        level = r.demand[short_at]
        served_at = next(
            (t for t in range(short_at, n) if not short[t] and r.demand[t] >= level - EPS and r.serving[t] > 0), None
        )
        served_after = None if served_at is None else served_at - short_at
        detection = next((a - short_at for a in alarms if a >= short_at), None)
    instance_seconds = sum(r.instances)
    cost = None if s.price_per_hour is None else instance_seconds * s.price_per_hour / 3600
    summary = Summary(
        short_at=short_at,
        detection_seconds=detection,
        served_after_seconds=served_after,
        seconds_short=sum(short),
        queued_request_seconds=sum(r.queued),
        rejected_requests=sum(r.rejected),
        peak_copies=max(r.desired, default=0),
        peak_serving=max(r.serving, default=0),
        peak_instances=max(r.instances, default=0),
        instance_seconds=instance_seconds,
        cost_usd=cost,
        first_capacity_seconds=first_capacity,
    )
    return Result(**{**r.__dict__, "summary": summary})
