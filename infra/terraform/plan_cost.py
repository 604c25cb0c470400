"""What a plan does to the stack's on-demand bill: every endpoint's monthly cost before the change and after it,
at its minimum capacity, on a typical day and at its maximum capacity, and the difference.

"Before" is what Terraform's state holds (the plan's ``before`` values, refreshed from AWS), "after" what the plan
would leave (its ``after`` values). An endpoint's fleet is read from what the stack creates:

- the instance type of each variant of its endpoint configuration (with instance pools: the first pool's type;
  the fallback pools are listed);
- its instances at minimum and maximum capacity: managed instance scaling's counts (endpoints of inference
  components), else the variant's scalable target, else the configuration's initial count (no auto scaling);
- on an endpoint of inference components, at least the instances the components' copies fill with their
  accelerators (copies from each component's scalable target), as `fastscale estimate` counts them.

The typical day is the estimate's (``cost.default_hours_at_max_per_day`` of infra/analysis/estimate_params.json):
that many hours a day at maximum capacity, the rest at minimum. Prices are the instance catalog's
(:mod:`fastscale.infra.base.catalog`), one Region's SageMaker AI real-time on-demand rates with the date they were
read; a type or a Region the catalog has no price for is "price unknown", never a guess. Instance compute only:
storage, data transfer and CloudWatch are not in the figures.

Pure: no AWS, no Terraform; the input is ``terraform show -json PLANFILE``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fastscale.infra.analysis.estimate.cost import instances_for_devices, typical_month_usd
from fastscale.infra.analysis.estimate.params import EstimateParams, load_params
from fastscale.infra.base import catalog
from fastscale.infra.model.naming import component_resource_id, variant_resource_id
from fastscale.infra.terraform.rollout.kinds import (
    COMPONENT_TYPE,
    CONFIG_NAME_ATTRIBUTE,
    CONFIG_TYPES,
    ENDPOINT_TYPE,
    NAME_ATTRIBUTE,
    SCALING_TARGET_TYPE,
)
from fastscale.infra.terraform.rollout.plan import ResourceChange, nested_block, parse_plan

#: What the figures leave out, in the words every output uses.
EXCLUDES = ("storage", "data transfer", "CloudWatch")
#: ``ManagedInstanceScaling.Status`` when SageMaker scales the variant's instances itself.
_MANAGED_SCALING_ON = "ENABLED"
#: What follows ``<endpoint>-`` in the name of an endpoint's configuration: awscc's digest, or the suffix
#: hashicorp/aws adds to ``name_prefix``.
_CONFIG_SUFFIX = re.compile(r"[0-9a-f]{12}|[0-9]{26}")


def usd(x: float) -> str:
    """``1234.5`` -> ``$1,234.50``."""
    return f"${x:,.2f}"


def signed_usd(x: float) -> str:
    """``1234.5`` -> ``+$1,234.50``, ``-3`` -> ``-$3.00`` (and never ``-$0.00``)."""
    cents = round(x, 2)
    return ("-" if cents < 0 else "+") + usd(abs(cents))


@dataclass(frozen=True)
class Monthly:
    """A month at minimum capacity, of typical days, and at maximum capacity (USD, unrounded)."""

    min: float
    typical: float
    max: float

    def __add__(self, other: Monthly) -> Monthly:
        return Monthly(self.min + other.min, self.typical + other.typical, self.max + other.max)

    def __sub__(self, other: Monthly) -> Monthly:
        return Monthly(self.min - other.min, self.typical - other.typical, self.max - other.max)

    def __neg__(self) -> Monthly:
        return Monthly(-self.min, -self.typical, -self.max)

    def to_dict(self) -> dict[str, float]:
        return {"min": round(self.min, 2), "typical": round(self.typical, 2), "max": round(self.max, 2)}


ZERO = Monthly(0.0, 0.0, 0.0)


def _total(values: Iterable[Monthly]) -> Monthly:
    out = ZERO
    for v in values:
        out = out + v
    return out


@dataclass(frozen=True)
class Variant:
    """One production variant's fleet; a None count or type is known only after apply."""

    name: str
    instance_type: str | None
    low: int | None  # instances at minimum capacity
    high: int | None  # instances at maximum capacity
    fallback: tuple[str, ...] = ()  # the other instance pools' types, by priority

    def describe(self) -> str:
        """``1-4 x ml.g6.2xlarge`` (a fixed fleet: ``2 x ...``)."""
        low = "?" if self.low is None else str(self.low)
        high = "?" if self.high is None else str(self.high)
        count = low if low == high else f"{low}-{high}"
        text = f"{count} x {self.instance_type or '(known after apply)'}"
        if self.fallback:
            text += f" (fallback {', '.join(self.fallback)})"
        return text


@dataclass(frozen=True)
class PricedVariant:
    variant: Variant
    price_per_hour_usd: float | None
    price_is_estimate: bool

    def to_dict(self) -> dict[str, Any]:
        v = self.variant
        return {
            "variant": v.name,
            "instance_type": v.instance_type,
            "instances": {"min": v.low, "max": v.high},
            "fallback_pools": list(v.fallback),
            "price_per_hour_usd": self.price_per_hour_usd,
            "price_is_estimate": self.price_is_estimate,
        }


@dataclass(frozen=True)
class Fleet:
    """One endpoint on one side of the change, priced: ``monthly`` is None when any variant has no price
    (``unknown`` says why)."""

    variants: tuple[PricedVariant, ...]
    monthly: Monthly | None
    unknown: tuple[str, ...] = ()

    @property
    def shape(self) -> tuple[Variant, ...]:
        return tuple(p.variant for p in self.variants)

    @property
    def estimated(self) -> bool:
        return any(p.price_is_estimate for p in self.variants)

    def describe(self) -> str:
        return "; ".join(p.variant.describe() for p in self.variants) or "no variant"

    def to_dict(self) -> dict[str, Any]:
        return {
            "variants": [p.to_dict() for p in self.variants],
            "monthly_usd": self.monthly.to_dict() if self.monthly is not None else None,
            "price_unknown": list(self.unknown) or None,
        }


@dataclass(frozen=True)
class EndpointChange:
    """An endpoint's fleet before and after the change: None before for a new endpoint, after for a removed one."""

    endpoint: str
    before: Fleet | None
    after: Fleet | None

    @property
    def status(self) -> str:
        if self.before is None:
            return "new"
        if self.after is None:
            return "removed"
        return "unchanged" if self.before.shape == self.after.shape else "changed"

    @property
    def delta(self) -> Monthly | None:
        """After minus before; None when a price it needs is unknown. An endpoint whose fleet does not change
        changes nothing, whatever its price."""
        if self.status == "unchanged":
            return ZERO
        before = ZERO if self.before is None else self.before.monthly
        after = ZERO if self.after is None else self.after.monthly
        if before is None or after is None:
            return None
        return after - before

    def to_dict(self) -> dict[str, Any]:
        delta = self.delta
        return {
            "endpoint": self.endpoint,
            "status": self.status,
            "before": self.before.to_dict() if self.before is not None else None,
            "after": self.after.to_dict() if self.after is not None else None,
            "delta_monthly_usd": delta.to_dict() if delta is not None else None,
        }


@dataclass(frozen=True)
class PlanCost:
    """The monthly on-demand cost of the plan's endpoints before and after it."""

    region: str  # the stack's
    price_region: str  # the catalog's
    as_of: str
    hours_per_month: float
    hours_at_max_per_day: float
    endpoints: tuple[EndpointChange, ...]

    @property
    def new_stack(self) -> bool:
        """Nothing of the stack is live yet (a first deploy): there is no "before" to compare with."""
        return all(e.before is None for e in self.endpoints)

    def total(self, side: str) -> Monthly | None:
        """The priced endpoints of one side ("before" or "after"); None before a new stack."""
        if side == "before" and self.new_stack:
            return None
        fleets = [getattr(e, side) for e in self.endpoints]
        return _total(f.monthly for f in fleets if f is not None and f.monthly is not None)

    def complete(self, side: str) -> bool:
        """Whether every endpoint of that side has a price (else its total leaves some out)."""
        return all(f.monthly is not None for f in (getattr(e, side) for e in self.endpoints) if f is not None)

    @property
    def delta(self) -> Monthly | None:
        deltas = [e.delta for e in self.endpoints]
        if any(d is None for d in deltas):
            return None
        return _total(d for d in deltas if d is not None)

    def unknown_reasons(self) -> list[str]:
        seen: list[str] = []
        for e in self.endpoints:
            for fleet in (e.before, e.after):
                for why in fleet.unknown if fleet is not None else ():
                    if why not in seen:
                        seen.append(why)
        return seen

    def basis(self) -> str:
        return f"on-demand prices of {self.price_region} as of {self.as_of}; excludes {', '.join(EXCLUDES)}"

    def typical_day(self) -> str:
        return (f"typical day: {self.hours_at_max_per_day:g} h at max capacity, the rest at min (as `fastscale estimate`); "
                f"{self.hours_per_month:g} h a month")

    def summary(self) -> str:
        """One sentence on what the change does to the bill."""
        delta = self.delta
        if delta is None:
            return f"The change's cost is unknown: {'; '.join(self.unknown_reasons())}."
        spread = f"({signed_usd(delta.min)} at min, {signed_usd(delta.max)} at max)"
        if self.new_stack:
            return (f"New stack: it adds {usd(delta.typical)}/month at typical load "
                    f"({usd(delta.min)} at min, {usd(delta.max)} at max).")
        if delta.to_dict() == ZERO.to_dict():
            return "This change does not change the on-demand cost."
        if delta.typical < 0:
            return f"This change saves {usd(-delta.typical)}/month at typical load {spread}."
        return f"This change adds {usd(delta.typical)}/month at typical load {spread}."

    def notes(self) -> list[str]:
        out = [self.typical_day()]
        fleets = [f for e in self.endpoints for f in (e.before, e.after) if f is not None]
        if any(f.estimated for f in fleets):
            out.append("(est.): the catalog found no published SageMaker rate for that type; its price is estimated "
                       "(infra/base/catalog/accelerators.json, price_estimates)")
        if any(p.variant.fallback for f in fleets for p in f.variants):
            out.append("an endpoint with instance pools is priced on its first pool; instances of a fallback pool "
                       "cost that pool's rate")
        return out

    def to_dict(self) -> dict[str, Any]:
        before, after, delta = self.total("before"), self.total("after"), self.delta
        return {
            "currency": "USD",
            "as_of": self.as_of,
            "price_region": self.price_region,
            "region": self.region,
            "basis": "SageMaker AI real-time inference, on-demand, per instance-hour",
            "excludes": list(EXCLUDES),
            "hours_per_month": self.hours_per_month,
            "hours_at_max_per_day": self.hours_at_max_per_day,
            "new_stack": self.new_stack,
            "endpoints": [e.to_dict() for e in self.endpoints],
            "total": {
                "before": before.to_dict() if before is not None else None,
                "after": after.to_dict() if after is not None else None,
                "complete": self.complete("before") and self.complete("after"),
            },
            "delta_monthly_usd": delta.to_dict() if delta is not None else None,
            "summary": self.summary(),
            "notes": self.notes(),
        }


# --------------------------------------------------------------------------------------------- reading the plan


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: Any) -> int | None:
    """A count as Terraform's JSON writes it; None for anything else (unknown until apply, or malformed)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


def _items(value: Any) -> list[Mapping[str, Any]]:
    """A list of blocks or nested objects (hashicorp/aws and awscc write lists of objects alike)."""
    if isinstance(value, Mapping):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, Mapping)]
    return []


@dataclass(frozen=True)
class _Config:
    name: str | None
    prefix: str | None
    variants: tuple[Mapping[str, Any], ...]

    def belongs_to(self, endpoint: str) -> bool:
        """fastscale names an endpoint's configuration ``<endpoint>-`` and a digest (awscc), or plans it from
        that prefix, to which hashicorp/aws adds a 26-digit suffix."""
        head = f"{endpoint}-"
        if self.prefix == head:
            return True
        return (self.name is not None and self.name.startswith(head)
                and _CONFIG_SUFFIX.fullmatch(self.name[len(head):]) is not None)


@dataclass(frozen=True)
class _Component:
    endpoint: str | None
    variant: str | None
    low: int | None  # copies at minimum / maximum capacity
    high: int | None
    #: accelerators per copy, by instance type ("" for a component with one specification)
    accelerators: Mapping[str, int]

    def devices(self, instance_type: str, copies: int | None) -> int:
        per_copy = self.accelerators.get(instance_type, self.accelerators.get("", 0))
        return (copies or 0) * per_copy


def _accelerators(spec: Mapping[str, Any]) -> int:
    needs = nested_block(spec.get("compute_resource_requirements")) or {}
    return _count(needs.get("number_of_accelerator_devices_required")) or 0


@dataclass(frozen=True)
class _PendingComponent:
    name: str | None
    endpoint: str | None
    variant: str | None
    copy_count: int | None
    accelerators: Mapping[str, int]


@dataclass(frozen=True)
class _Side:
    """What one side of the plan holds, read from the resource values."""

    endpoints: dict[str, str | None]  # endpoint name -> its configuration's name (None: known after apply)
    configs: list[_Config]
    targets: dict[str, tuple[int | None, int | None]]  # scalable target resource id -> (min, max)
    components: list[_Component]

    @classmethod
    def read(cls, changes: Sequence[ResourceChange], side: str) -> _Side:
        endpoints: dict[str, str | None] = {}
        configs: list[_Config] = []
        targets: dict[str, tuple[int | None, int | None]] = {}
        pending: list[_PendingComponent] = []
        for c in changes:
            values = c.before if side == "before" else c.after
            if values is None:
                continue
            if c.type == ENDPOINT_TYPE:
                name = _text(values.get(NAME_ATTRIBUTE[ENDPOINT_TYPE]))
                if name:
                    endpoints[name] = _text(values.get("endpoint_config_name"))
            elif c.type in CONFIG_TYPES:
                configs.append(_Config(_text(values.get(CONFIG_NAME_ATTRIBUTE[c.type])), _text(values.get("name_prefix")),
                                       tuple(_items(values.get("production_variants")))))
            elif c.type == SCALING_TARGET_TYPE:
                resource_id = _text(values.get("resource_id"))
                if resource_id:
                    targets[resource_id] = (_count(values.get("min_capacity")), _count(values.get("max_capacity")))
            elif c.type == COMPONENT_TYPE:
                pending.append(_pending_component(values))
        return cls(endpoints, configs, targets, [_with_copies(c, targets) for c in pending])

    def config_of(self, endpoint: str) -> _Config | None:
        wanted = self.endpoints.get(endpoint)
        if wanted is not None:
            for config in self.configs:
                if config.name == wanted:
                    return config
        # The configuration's name is known only after apply (hashicorp/aws plans it from name_prefix): the one
        # configuration named for the endpoint.
        mine = [c for c in self.configs if c.belongs_to(endpoint)]
        return mine[0] if len(mine) == 1 else None


def _pending_component(values: Mapping[str, Any]) -> _PendingComponent:
    """A component as the plan gives it; its copies come from its scalable target (:func:`_with_copies`)."""
    specs = _items(values.get("specifications"))
    if specs:
        accelerators = {str(s.get("instance_type") or ""): _accelerators(s) for s in specs}
    else:
        accelerators = {"": _accelerators(nested_block(values.get("specification")) or {})}
    runtime = nested_block(values.get("runtime_config")) or {}
    return _PendingComponent(_text(values.get(NAME_ATTRIBUTE[COMPONENT_TYPE])), _text(values.get("endpoint_name")),
                             _text(values.get("variant_name")), _count(runtime.get("copy_count")), accelerators)


def _with_copies(pending: _PendingComponent, targets: Mapping[str, tuple[int | None, int | None]]) -> _Component:
    """Copies at min and max: the component's scalable target, else its fixed copy count."""
    target = targets.get(component_resource_id(pending.name)) if pending.name else None
    low, high = target if target is not None else (pending.copy_count, pending.copy_count)
    return _Component(pending.endpoint, pending.variant, low, high, pending.accelerators)


def _variant(endpoint: str, values: Mapping[str, Any], side: _Side) -> Variant:
    name = _text(values.get("variant_name")) or "?"
    pools = sorted(((_count(p.get("priority")) or 0, _text(p.get("instance_type"))) for p in _items(values.get("instance_pools"))),
                   key=lambda p: p[0])
    pool_types = [t for _, t in pools if t]
    instance_type = _text(values.get("instance_type")) or (pool_types[0] if pool_types else None)
    fallback = tuple(t for t in pool_types if t != instance_type)

    managed = nested_block(values.get("managed_instance_scaling")) or {}
    target = side.targets.get(variant_resource_id(endpoint, name))
    if str(managed.get("status") or "").upper() == _MANAGED_SCALING_ON:
        low, high = _count(managed.get("min_instance_count")), _count(managed.get("max_instance_count"))
    elif target is not None:
        low, high = target
    else:
        low = high = _count(values.get("initial_instance_count"))

    # Copies take their accelerators on one instance each; SageMaker needs instances enough to place them.
    copies = [c for c in side.components if c.endpoint == endpoint and c.variant in (None, name)]
    if copies and instance_type is not None:
        need_low = instances_for_devices(instance_type, sum(c.devices(instance_type, c.low) for c in copies))
        need_high = instances_for_devices(instance_type, sum(c.devices(instance_type, c.high) for c in copies))
        low = None if low is None else max(low, need_low)
        high = None if high is None else max(high, need_high)
    return Variant(name, instance_type, low, high, fallback)


def _fleet(variants: Sequence[Variant], pricing: _Pricing) -> Fleet:
    priced: list[PricedVariant] = []
    unknown: list[str] = []
    months: list[Monthly] = []
    for v in variants:
        rate, estimate, why = pricing.rate(v.instance_type)
        priced.append(PricedVariant(v, rate, estimate))
        if why:
            unknown.append(why)
        elif v.low is None or v.high is None:
            unknown.append(f"the instance counts of {v.instance_type} are known only after apply")
        elif rate is not None:
            months.append(pricing.monthly(rate, v.low, v.high))
    if not variants:
        unknown.append("the endpoint configuration has no variant")
    return Fleet(tuple(priced), None if unknown else _total(months), tuple(unknown))


@dataclass(frozen=True)
class _Pricing:
    region: str
    params: EstimateParams
    hours_at_max_per_day: float

    def rate(self, instance_type: str | None) -> tuple[float | None, bool, str | None]:
        """(price per instance-hour, whether it is an estimate, why there is none)."""
        if instance_type is None:
            return None, False, "an instance type is known only after apply"
        if self.region != catalog.price_region():
            return None, False, f"the catalog has on-demand prices of {catalog.price_region()} only, none of {self.region}"
        spec = catalog.get(instance_type)
        if spec is None:
            return None, False, f"no catalog price for {instance_type} (the catalog prices accelerator instance types)"
        return spec.price_per_hour_usd, spec.price_is_estimate, None

    def monthly(self, rate: float, low: int, high: int) -> Monthly:
        month = self.params.cost.hours_per_month.value
        return Monthly(rate * low * month, typical_month_usd(rate, low, high, self.hours_at_max_per_day, self.params),
                       rate * high * month)


def _fleets(side: _Side, pricing: _Pricing) -> dict[str, Fleet]:
    out = {}
    for endpoint in side.endpoints:
        config = side.config_of(endpoint)
        if config is None:
            out[endpoint] = Fleet((), None, (f"the endpoint configuration of {endpoint} is not in the plan",))
            continue
        out[endpoint] = _fleet([_variant(endpoint, v, side) for v in config.variants], pricing)
    return out


def plan_cost(plan: Mapping[str, Any] | Iterable[ResourceChange], region: str,
              params: EstimateParams | None = None) -> PlanCost:
    """The monthly on-demand cost of every endpoint of a plan (``terraform show -json`` output, or its changes
    already parsed) before and after it, priced for ``region`` (the stack's)."""
    changes = parse_plan(plan) if isinstance(plan, Mapping) else list(plan)
    params = params or load_params()
    hours = params.cost.default_hours_at_max_per_day.value
    pricing = _Pricing(region, params, hours)
    before = _fleets(_Side.read(changes, "before"), pricing)
    after = _fleets(_Side.read(changes, "after"), pricing)
    endpoints = tuple(EndpointChange(name, before.get(name), after.get(name)) for name in sorted(set(before) | set(after)))
    return PlanCost(region, catalog.price_region(), catalog.as_of(), params.cost.hours_per_month.value, hours, endpoints)
