"""On-demand cost of the configured capacity, a monthly figure for a daily peak, and what scale to zero saves.

Prices are the catalog's SageMaker real-time inference on-demand rates (of its one Region; some are marked as
estimates). The month is AWS's 730-hour convention from the parameters file.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from fastscale.infra.analysis.estimate.params import EstimateParams, load_params
from fastscale.infra.base import catalog
from fastscale.infra.config import Capacity, EndpointSpec, FastscaleConfig
from fastscale.infra.model import capacity

MINUTE, HOUR = timedelta(minutes=1), timedelta(hours=1)


@dataclass(frozen=True)
class PoolCost:
    """What the endpoint would cost if all its instances came from one instance pool."""

    priority: int
    instance_type: str
    price_per_hour_usd: float | None
    monthly_usd: float | None  # same daily profile as the endpoint's monthly figure

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class IdleTail:
    """Instances that stay after the daily peak until they are released, with the configured scale-in policy
    and with AWS's default one (not included in the monthly figure)."""

    minutes: float
    default_minutes: float
    monthly_usd: float
    default_monthly_usd: float

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class EndpointCost:
    endpoint: str
    instance_type: str
    price_per_hour_usd: float | None  # None: no catalog price for this type
    price_is_estimate: bool
    instances: Capacity
    hourly_usd: dict[str, float] | None  # min / initial / max capacity
    monthly_usd: float | None  # hours_at_max at max capacity every day, the rest at min
    idle_monthly_usd: dict[str, float] | None  # an endpoint with no traffic all month: min 1 vs min 0
    scale_to_zero_saves_monthly_usd: float | None
    scales_to_zero: bool  # configured with instances.min 0
    scale_to_zero_available: bool  # only endpoints of inference components can scale to zero
    note: str | None = None
    pools: tuple[PoolCost, ...] = ()  # endpoints with fallback instance pools, in priority order
    idle_tail: IdleTail | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "instance_type": self.instance_type,
            "price_per_hour_usd": self.price_per_hour_usd,
            "price_is_estimate": self.price_is_estimate,
            "instances": {"min": self.instances.min, "initial": self.instances.initial, "max": self.instances.max},
            "hourly_usd": self.hourly_usd,
            "monthly_usd": self.monthly_usd,
            "idle_monthly_usd": self.idle_monthly_usd,
            "scale_to_zero_saves_monthly_usd": self.scale_to_zero_saves_monthly_usd,
            "scales_to_zero": self.scales_to_zero,
            "scale_to_zero_available": self.scale_to_zero_available,
            "note": self.note,
            "pools": [p.to_dict() for p in self.pools],
            "idle_tail": self.idle_tail.to_dict() if self.idle_tail else None,
        }


@dataclass(frozen=True)
class CostReport:
    hours_at_max_per_day: float
    hours_per_month: float
    endpoints: tuple[EndpointCost, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def total_hourly(self) -> dict[str, float]:
        priced = [e.hourly_usd for e in self.endpoints if e.hourly_usd]
        return {k: _usd(sum(h[k] for h in priced)) for k in ("min", "initial", "max")}

    def total_monthly(self) -> float:
        return _usd(sum(e.monthly_usd for e in self.endpoints if e.monthly_usd is not None))

    def to_dict(self) -> dict[str, Any]:
        return {
            "currency": "USD",
            "basis": f"SageMaker real-time inference on-demand, {catalog.price_region()}",
            "hours_per_month": self.hours_per_month,
            "hours_at_max_per_day": self.hours_at_max_per_day,
            "endpoints": [e.to_dict() for e in self.endpoints],
            "total": {"hourly_usd": self.total_hourly(), "monthly_usd": self.total_monthly()},
            "notes": list(self.notes),
        }


def _usd(x: float) -> float:
    return round(x, 2)


def endpoint_cost(
    name: str,
    instance_type: str,
    instances: Capacity,
    *,
    scale_to_zero_available: bool,
    hours_at_max_per_day: float,
    params: EstimateParams,
) -> EndpointCost:
    spec = catalog.get(instance_type)
    scales_to_zero = instances.min == 0
    if spec is None:
        return EndpointCost(
            name, instance_type, None, False, instances, None, None, None, None, scales_to_zero, scale_to_zero_available,
            note=f"no catalog price for {instance_type}",
        )
    price = spec.price_per_hour_usd
    month = params.cost.hours_per_month.value
    monthly = typical_month_usd(price, instances.min, instances.max, hours_at_max_per_day, params)
    note = None
    if not scale_to_zero_available:
        note = "scale to zero needs inference components; a single-model endpoint keeps at least one instance"
    return EndpointCost(
        endpoint=name,
        instance_type=instance_type,
        price_per_hour_usd=price,
        price_is_estimate=spec.price_is_estimate,
        instances=instances,
        hourly_usd={k: _usd(price * getattr(instances, k)) for k in ("min", "initial", "max")},
        monthly_usd=_usd(monthly),
        # With no traffic at all the endpoint sits at its minimum all month.
        idle_monthly_usd={"min_1": _usd(price * month), "min_0": 0.0},
        scale_to_zero_saves_monthly_usd=_usd(price * month),
        scales_to_zero=scales_to_zero,
        scale_to_zero_available=scale_to_zero_available,
        note=note,
    )


def typical_month_usd(price: float, low: int, high: int, hours_at_max_per_day: float, params: EstimateParams) -> float:
    """A month of typical days (unrounded): ``hours_at_max_per_day`` at ``high`` instances every day, the rest of
    the day at ``low``. `estimate` and the cost of a plan both price a fleet so."""
    month = params.cost.hours_per_month.value
    peak_hours = hours_at_max_per_day / 24 * month
    return price * (high * peak_hours + low * (month - peak_hours))


def pool_costs(ep: EndpointSpec, hours_at_max_per_day: float, params: EstimateParams) -> tuple[PoolCost, ...]:
    """The monthly figure of the endpoint on each of its instance pools (none without fallback pools)."""
    if not capacity.has_pools(ep):
        return ()
    out = []
    for pool in capacity.pools_by_priority(ep):
        spec = catalog.get(pool.instance_type)
        price = spec.price_per_hour_usd if spec else None
        monthly = (_usd(typical_month_usd(price, ep.instances.min, ep.instances.max, hours_at_max_per_day, params))
                   if price is not None else None)
        out.append(PoolCost(pool.priority, pool.instance_type, price, monthly))
    return tuple(out)


def idle_tail(ep: EndpointSpec, price: float, params: EstimateParams) -> IdleTail | None:
    """The instances above the minimum stay until target tracking removes their copies and, on endpoints of
    inference components, managed instance scaling releases them after the scale-in policy's cooldown."""
    extra = ep.instances.max - ep.instances.min
    if extra <= 0:
        return None
    s = params.scale_in
    detection = timedelta(seconds=s.detection_seconds.value) / MINUTE
    default_release = s.default_cooldown_minutes.value if ep.uses_inference_components else 0.0
    release = default_release
    if ep.uses_inference_components and ep.scale_in is not None and ep.scale_in.cooldown_minutes is not None:
        release = ep.scale_in.cooldown_minutes
    days = params.cost.hours_per_month.value / 24

    def monthly(minutes: float) -> float:
        return _usd(price * extra * (minutes * MINUTE / HOUR) * s.scale_downs_per_day.value * days)

    return IdleTail(detection + release, detection + default_release, monthly(detection + release), monthly(detection + default_release))


def forced_instances(ep: EndpointSpec) -> Capacity:
    """The instances the endpoint runs: at least those its components' copies need (a copy takes its
    accelerators on one instance; SageMaker adds instances to place them), at min, initial and max."""
    if not ep.inference_components:
        return ep.instances

    def need(key: str) -> int:
        devices: int = sum(getattr(c.copies, key) * (c.resources.accelerators or 0) for c in ep.inference_components)
        return instances_for_devices(ep.instance_type, devices)

    return Capacity(**{k: max(getattr(ep.instances, k), need(k)) for k in ("initial", "min", "max")})


def instances_for_devices(instance_type: str, devices: int) -> int:
    """Instances of ``instance_type`` that hold ``devices`` accelerators of component copies: 0 for a type the
    catalog does not know or without accelerators (the copies then set no floor)."""
    spec = catalog.get(instance_type)
    if spec is None or spec.accelerator_count < 1 or devices <= 0:
        return 0
    return -(-devices // spec.accelerator_count)


def _hours(hours_at_max_per_day: float | None, params: EstimateParams) -> float:
    if hours_at_max_per_day is None:
        return params.cost.default_hours_at_max_per_day.value
    if not 0 <= hours_at_max_per_day <= 24:
        raise ValueError("hours at max capacity must be between 0 and 24 per day")
    return hours_at_max_per_day


def _devices(instance_type: str) -> int:
    spec = catalog.get(instance_type)
    return spec.accelerator_count if spec else 0


def _notes(lines: list[EndpointCost]) -> tuple[str, ...]:
    notes = []
    if any(e.price_is_estimate for e in lines):
        notes.append("some prices are estimates: the catalog found no published SageMaker rate for those types")
    notes.append(f"catalog prices as of {catalog.as_of()}; check the SageMaker AI pricing page before budgeting")
    return tuple(notes)


def cost_config(
    config: FastscaleConfig, hours_at_max_per_day: float | None = None, params: EstimateParams | None = None
) -> CostReport:
    params = params or load_params()
    hours = _hours(hours_at_max_per_day, params)
    lines = []
    for ep in config.endpoints:
        instances = forced_instances(ep)
        line = endpoint_cost(
            ep.name,
            ep.instance_type,
            instances,
            scale_to_zero_available=ep.uses_inference_components,
            hours_at_max_per_day=hours,
            params=params,
        )
        # Without auto scaling nothing scales in after a peak, so there is no idle tail to bill.
        scales = any(w.autoscaling.enabled for _, w in ep.workloads())
        tail = idle_tail(ep, line.price_per_hour_usd, params) if line.price_per_hour_usd is not None and scales else None
        if instances != ep.instances:
            line = dataclasses.replace(line, note="; ".join(filter(None, [line.note, (
                f"the copies need {instances.initial} instance(s) at start and {instances.max} at most "
                f"({ep.instance_type} has {_devices(ep.instance_type)} accelerator(s)): priced on those")])))
        lines.append(dataclasses.replace(line, pools=pool_costs(ep, hours, params), idle_tail=tail))
    return CostReport(hours, params.cost.hours_per_month.value, tuple(lines), _notes(lines))


def cost_what_if(
    instance_type: str,
    max_instances: int = 1,
    hours_at_max_per_day: float | None = None,
    params: EstimateParams | None = None,
) -> CostReport:
    """One to ``max_instances`` instances of ``instance_type`` hosting inference components (so scale to zero
    is available), starting and idling at one."""
    params = params or load_params()
    hours = _hours(hours_at_max_per_day, params)
    line = endpoint_cost(
        "what-if",
        instance_type,
        Capacity(initial=1, min=1, max=max_instances),
        scale_to_zero_available=True,
        hours_at_max_per_day=hours,
        params=params,
    )
    return CostReport(hours, params.cost.hours_per_month.value, (line,), _notes([line]))
