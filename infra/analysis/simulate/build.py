"""From a config to simulation specs: one per workload and per variant of the three scale-out layers.

Every start-up time comes from the estimate model's scenarios (``infra.analysis.estimate.timeline.scenarios``), with
the workload's inputs changed for the variant (image not cacheable, no data caching), so a copy or instance
in the simulation takes exactly as long as ``fastscale estimate`` says.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastscale.infra.analysis.estimate.fallback import fallback_scenario
from fastscale.infra.analysis.estimate.params import EstimateParams
from fastscale.infra.analysis.estimate.params import load_params as load_estimate_params
from fastscale.infra.analysis.estimate.timeline import WorkloadInputs, scenarios, workload_inputs
from fastscale.infra.analysis.simulate.engine import simulate
from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.params import load_params as load_simulate_params
from fastscale.infra.analysis.simulate.requests.rates import copy_accelerators, kv_slots
from fastscale.infra.analysis.simulate.result import Result
from fastscale.infra.analysis.simulate.spec import Alarm, ScaleFromZero, SimSpec, Timings, invocations_as_concurrency
from fastscale.infra.analysis.simulate.traffic import Traffic
from fastscale.infra.base import catalog
from fastscale.infra.base.catalog import InstanceSpec
from fastscale.infra.model.resolved import ResolvedEndpoint, ResolvedStack, ResolvedWorkload, Resources


class SimulateInputError(ValueError):
    """The selection or the workload cannot be simulated: a user mistake, with how to fix it.

    ``option`` names the command-line option at fault (``--endpoint``, ``--component``), if any.
    """

    def __init__(self, message: str, option: str | None = None):
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class Layers:
    """The three scale-out layers (and a warm minimum) as they stand for one run; None: does not apply."""

    high_resolution: bool
    data_cache: bool | None  # inference components only
    image_cache: bool
    warm_minimum: bool | None  # inference components only (a single-model endpoint keeps an instance)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: Variant name -> (layer it flips, label when the flip turns the layer off, label when it turns it on).
LAYER_VARIANTS: dict[str, tuple[str, str, str]] = {
    "metrics": ("high_resolution", "60-second metrics instead of 10-second", "10-second metrics (what-if)"),
    "data_cache": ("data_cache", "no data caching", "data caching (what-if)"),
    "image_cache": ("image_cache", "no container image caching", "container image caching (what-if)"),
    "warm_minimum": ("warm_minimum", "no warm minimum (scale to zero)", "warm minimum of one copy (what-if)"),
}


#: The variant that replays the configured run with the first instance type out of capacity.
FALLBACK_VARIANT = "capacity_fallback"


@dataclass(frozen=True)
class Workload:
    """One single model or inference component of a config, ready to simulate."""

    endpoint: str
    component: str | None
    instance_type: str
    inputs: WorkloadInputs
    layers: Layers  # as configured
    target: float
    capacity: float  # concurrent requests one copy (instance) serves at full speed
    units: tuple[int, int]  # (min, max) copies or instances as configured
    instances: tuple[int, int]
    copies_per_instance: int
    max_concurrency: float  # what the maximum capacity serves at full speed
    autoscaling: bool
    notes: tuple[str, ...]
    _spec: Callable[[Layers], SimSpec]
    #: The configured spec when the first instance type has no capacity and the next pool serves
    #: (None: the endpoint has no capacity.fallback, or the pool cannot be estimated).
    _fallback_spec: Callable[[], SimSpec] | None = None
    fallback_instance_type: str | None = None

    @property
    def name(self) -> str:
        return self.endpoint + (f" / {self.component}" if self.component else "")

    def spec(self, layers: Layers | None = None) -> SimSpec:
        return self._spec(layers or self.layers)

    def to_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "component": self.component,
            "instance_type": self.instance_type,
            "unit": "copy" if self.component else "instance",
            "target_concurrency": self.target,
            "capacity_concurrency": self.capacity,
            "units": {"min": self.units[0], "max": self.units[1]},
            "instances": {"min": self.instances[0], "max": self.instances[1]},
            "copies_per_instance": self.copies_per_instance,
            "max_concurrency": self.max_concurrency,
            "autoscaling": self.autoscaling,
            "fallback_instance_type": self.fallback_instance_type,
            "layers": self.layers.to_dict(),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Variant:
    name: str  # configured | metrics | data_cache | image_cache | warm_minimum | capacity_fallback
    label: str
    layers: Layers
    turns_off: bool | None  # True: a configured layer turned off; False: a what-if turning one on; None: as configured
    result: Result | None  # None: the layer does not apply to this workload

    def to_dict(self, steps: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "label": self.label,
            "layers": self.layers.to_dict(),
            "turns_layer_off": self.turns_off,
            "applies": self.result is not None,
            "summary": self.result.summary.to_dict() if self.result else None,
        }
        if steps and self.result is not None:
            out["events"] = [e.to_dict() for e in self.result.events]
            out["steps"] = self.result.steps_dict()
        return out


@dataclass(frozen=True)
class WorkloadSimulation:
    workload: Workload
    traffic: Traffic
    variants: tuple[Variant, ...]

    @property
    def configured(self) -> Variant:
        return self.variants[0]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.workload.to_dict(),
            "traffic": self.traffic.to_dict(),
            "variants": [v.to_dict(steps=v.name == "configured") for v in self.variants],
        }


# --------------------------------------------------------------------------------------------- specs


def _fits(instance: InstanceSpec, c: Resources) -> int:
    """Copies reserving ``c`` one instance holds: the tightest of accelerators, memory and vCPUs."""
    limits = [math.floor(instance.memory_gib * 1024 / c.memory_mb)]
    if c.accelerators:
        limits.append(instance.accelerator_count // c.accelerators)
    if c.cpus:
        limits.append(math.floor(instance.vcpus / c.cpus))
    return max(0, int(min(limits)))


def _slots_of(other: Resources, c: Resources) -> float:
    """How many slots of a copy reserving ``c`` one copy reserving ``other`` takes (its largest resource share)."""
    ratios = [other.memory_mb / c.memory_mb]
    if other.accelerators and c.accelerators:
        ratios.append(other.accelerators / c.accelerators)
    return max(ratios)


def _timings(inputs: WorkloadInputs, layers: Layers, est: EstimateParams, percentile: str = "p50") -> Timings:
    changed = dataclasses.replace(
        inputs,
        percentile=percentile,
        metric="high_resolution",  # only the phases after the decision are read; detection is simulated
        image_cacheable=layers.image_cache,
        data_cache=layers.data_cache,
        scale_from_zero=None,
    )
    by_name = {sc.name: sc for sc in scenarios(changed, est)}
    new_instance = by_name["instance_image_cache" if layers.image_cache else "instance_no_image_cache"]
    provisioning = new_instance.phase("instance_provisioning")
    assert provisioning is not None
    after_provisioning = new_instance.total_seconds - provisioning.end
    if layers.data_cache is None:  # single-model endpoint: a new unit is always a new instance
        on_instance = new_instance.after_decision_seconds()
    else:
        on_instance = by_name["copy_data_cache" if layers.data_cache else "copy_no_data_cache"].after_decision_seconds()
    return Timings(
        decision=est.scaling_decision_seconds.value,
        copy_on_instance=on_instance,
        provisioning=provisioning.seconds,
        copy_on_new_instance=after_provisioning,
    )


def unit_capacity(ep: ResolvedEndpoint, w: ResolvedWorkload, sim: SimulateParams) -> tuple[float, str | None]:
    """Concurrent requests one copy (one instance of a single-model endpoint) runs at once, beyond which requests
    queue, and a note saying where the figure comes from when the config does not give it.

    ``serving.max_concurrency``; else what the KV cache left in the accelerators' memory after the weights holds of
    requests of the stated mean length (at most the model server's batch limit); else, when the model size or the
    accelerator is unknown, the target read as 80% of it."""
    if w.serving.max_concurrency is not None:
        return float(w.serving.max_concurrency), None
    spec = catalog.get(ep.instance_type)
    found = kv_slots(w, spec, copy_accelerators(ep, w), sim)
    if found is not None:
        slots, why = found
        return float(slots), (f"serving.max_concurrency not set: a copy runs up to {slots} requests at once ({why}); "
                              "measure it with a load test of one copy, or give serving.model_shape")
    capacity = float(w.scaling.target_concurrency) / sim.capacity.default_target_fraction.value
    return capacity, (
        f"serving.max_concurrency not set and the KV cache cannot be sized (model_size_gb or the accelerator unknown): "
        f"a copy is assumed to saturate at {capacity:g} concurrent requests (target / "
        f"{sim.capacity.default_target_fraction.value:g}); measure it with a load test of one copy"
    )


def _workload(
    ep: ResolvedEndpoint,
    w: ResolvedWorkload,
    others: list[ResolvedWorkload],
    est: EstimateParams,
    sim: SimulateParams,
    percentile: str = "p50",
) -> Workload:
    component = w.resources is not None
    where = ep.key + (f" / {w.key}" if component else "")
    inputs, notes = workload_inputs(ep, w, est)
    if inputs is None:
        raise SimulateInputError(f"{where}: cannot be simulated: {'; '.join(n.removeprefix('not estimated: ') for n in notes)}")
    instance = catalog.get(ep.instance_type)
    assert instance is not None  # workload_inputs found it
    scaling = w.scaling
    notes = [n for n in notes if not n.startswith("auto scaling is disabled")]
    if w.resources is not None:
        per_instance = _fits(instance, w.resources)
        if per_instance < 1:
            raise SimulateInputError(
                f"{where}: one copy needs more than one {ep.instance_type} has (resources), so no copy can be placed; "
                "lower the component's resources or choose a larger instance type"
            )
        resources = w.resources
        reserved = math.ceil(sum(o.scaling.count.min * _slots_of(o.resources, resources)
                                 for o in others if o.resources is not None) - 1e-9)
        if reserved:
            notes.append(f"the endpoint's other components keep their minimum copies: {reserved} slot(s) held")
        units = (scaling.count.min, scaling.count.max)
        instances = (ep.instances.min, ep.instances.max)
        initial = scaling.count.initial
        room = instances[1] * per_instance - reserved
        max_units = max(0, min(units[1], room))
        if room < units[1]:
            notes.append(
                f"copies.max is {units[1]} but {instances[1]} instance(s) hold {max(room, 0)} copies: the simulation "
                "stops there"
            )
    else:
        per_instance, reserved = 1, 0
        units = instances = (ep.instances.min, ep.instances.max)
        initial = ep.instances.initial
        max_units = units[1]
    if not scaling.enabled:
        notes.append("auto scaling is disabled: capacity stays at its initial count")
    capacity, capacity_note = unit_capacity(ep, w, sim)
    if capacity_note:
        notes.append(capacity_note)
    configured = Layers(
        high_resolution=scaling.metric_setting == "high_resolution",
        data_cache=w.data_cache if component else None,
        image_cache=inputs.image_cacheable,
        warm_minimum=(units[0] >= 1) if component else None,
    )
    target = scaling.target_concurrency
    invocations_target = None
    if scaling.metric_setting == "invocations" and scaling.target_invocations is not None:
        invocations_target = float(scaling.target_invocations)
        service = sim.default_service_time_seconds.value
        target = invocations_as_concurrency(invocations_target, service)
        notes.append(
            f"metric: invocations, target {invocations_target:g} requests per minute per "
            f"{'copy' if component else 'instance'}, read at 60-second resolution: simulated as concurrent requests "
            f"= {invocations_target:g} / 60 s x the traffic's mean service time ({target:g} at the default "
            f"{service:g} s per request)"
        )
    elif scaling.metric_setting == "invocations":
        notes.append(
            "metric: invocations is simulated as the concurrency target read at 60-second resolution; the "
            "real InvocationsPer* metric counts requests per minute, so set its target in those units "
            "(target_invocations)"
        )

    def spec(layers: Layers) -> SimSpec:
        period = est.detection.for_metric("high_resolution" if layers.high_resolution else "invocations")
        u_min, i_min = units[0], instances[0]
        if component and layers.warm_minimum is not None and layers.warm_minimum != configured.warm_minimum:
            if layers.warm_minimum:
                u_min, i_min = max(1, u_min), max(1, i_min)
            else:
                u_min, i_min = 0, 0
        zero = None
        if component and scaling.enabled and u_min == 0:
            z = scaling.zero_alarm
            zero = ScaleFromZero(Alarm(z.period, z.evaluation_periods), z.cooldown)
        return SimSpec(
            target=target,
            units_min=u_min,
            units_max=max(u_min, max_units),
            instances_min=i_min,
            instances_max=max(instances[1], i_min),
            copies_per_instance=per_instance,
            timings=_timings(inputs, layers, est, percentile),
            scale_out=Alarm(int(period.period_seconds.value), int(period.datapoints.value)) if scaling.enabled else None,
            scale_in=Alarm(int(sim.scale_in.period_seconds.value), int(sim.scale_in.datapoints.value))
            if scaling.enabled else None,
            scale_in_threshold=sim.scale_in.threshold_fraction.value,
            scale_in_cooldown=scaling.scale_in_cooldown,
            scale_out_cooldown=scaling.scale_out_cooldown,
            lag=math.ceil(est.detection.publishing_lag_seconds.value),
            reinvoke=int(sim.alarm_reinvoke_seconds.value),
            scale_from_zero=zero,
            service_time=sim.default_service_time_seconds.value,
            price_per_hour=instance.price_per_hour_usd,
            reserved_slots=reserved,
            initial_units=None if scaling.enabled else initial,
            unit="copy" if component else "instance",
            capacity=capacity,
            invocations_target=invocations_target,
        )

    fallback_spec, fallback_type = _fallback(ep, w, inputs, est, lambda: spec(configured), per_instance, notes)

    return Workload(
        endpoint=ep.key,
        component=w.key if component else None,
        instance_type=ep.instance_type,
        inputs=inputs,
        layers=configured,
        target=target,
        capacity=capacity,
        units=units,
        instances=instances,
        copies_per_instance=per_instance,
        max_concurrency=max_units * capacity,
        autoscaling=scaling.enabled,
        notes=tuple(notes),
        _spec=spec,
        _fallback_spec=fallback_spec,
        fallback_instance_type=fallback_type,
    )


def _fallback(
    ep: ResolvedEndpoint,
    w: ResolvedWorkload,
    inputs: WorkloadInputs,
    est: EstimateParams,
    configured_spec: Callable[[], SimSpec],
    per_instance: int,
    notes: list[str],
) -> tuple[Callable[[], SimSpec] | None, str | None]:
    """The configured spec with every new instance coming from the next instance pool by priority.

    Its timings are the estimate model's capacity-fallback scenario (SageMaker waits for an insufficient
    capacity error on the first pool, then provisions the next one); copies already placed on running
    instances start as configured. One copies-per-instance count holds for every instance in the model,
    so where the pool fits a different number, the smaller is used and a note says so.
    """
    scenario, scenario_notes = fallback_scenario(ep, w, inputs, est)
    notes.extend(scenario_notes)
    if scenario is None:
        return None, None
    pool = ep.next_pool
    pool_instance = catalog.get(pool.instance_type) if pool else None
    assert pool is not None and pool_instance is not None  # fallback_scenario found both
    on_pool = ep.on_pool(w, pool)
    pool_per_instance = _fits(pool_instance, on_pool.resources) if on_pool.resources is not None else 1
    if pool_per_instance < 1:
        notes.append(f"capacity fallback not simulated: one copy does not fit {pool.instance_type}")
        return None, None
    if pool_per_instance != per_instance:
        notes.append(
            f"capacity fallback: {pool.instance_type} holds {pool_per_instance} copies per instance, "
            f"{ep.instance_type} {per_instance}; the fallback run uses {min(per_instance, pool_per_instance)} for every instance"
        )
    wait = scenario.phase("capacity_wait")
    provisioning = scenario.phase("instance_provisioning")
    assert wait is not None and provisioning is not None

    def fallback_spec() -> SimSpec:
        configured = configured_spec()
        return dataclasses.replace(
            configured,
            copies_per_instance=min(per_instance, pool_per_instance),
            timings=dataclasses.replace(
                configured.timings,
                provisioning=wait.seconds + provisioning.seconds,
                copy_on_new_instance=scenario.total_seconds - provisioning.end,
            ),
            price_per_hour=pool_instance.price_per_hour_usd,
        )

    return fallback_spec, pool.instance_type


@dataclass(frozen=True)
class Selection:
    workloads: tuple[Workload, ...]
    skipped: tuple[str, ...]  # workloads that cannot be simulated, each with why and how to fix it


def select_workloads(
    stack: ResolvedStack,
    endpoint: str | None = None,
    component: str | None = None,
    est: EstimateParams | None = None,
    sim: SimulateParams | None = None,
    cold_start: str = "p50",
) -> Selection:
    """The workloads to simulate: all of them, one endpoint's, or one component.

    A selection that names nothing in the file raises :class:`SimulateInputError`; a selected workload that
    cannot be simulated (no model size, unknown instance type, a copy too big for the instance) is skipped
    with its reason.
    """
    est = est or load_estimate_params()
    sim = sim or load_simulate_params()
    names = [ep.key for ep in stack.endpoints]
    if endpoint is not None and endpoint not in names:
        raise SimulateInputError(f"no endpoint {endpoint!r} in the file (endpoints: {', '.join(names)})", "--endpoint")
    if component is not None:
        owners = [ep for ep in stack.endpoints if any(c.key == component for c in ep.components)]
        owners = [ep for ep in owners if endpoint is None or ep.key == endpoint]
        if not owners:
            known = [c.key for ep in stack.endpoints if endpoint in (None, ep.key) for c in ep.components]
            scope = f"endpoint {endpoint!r}" if endpoint else "the file"
            raise SimulateInputError(
                f"no inference component {component!r} in {scope}"
                + (f" (components: {', '.join(known)})" if known else " (it has none: single-model endpoints scale by instances)"),
                "--component",
            )
    out: list[Workload] = []
    skipped: list[str] = []

    def add(ep: ResolvedEndpoint, w: ResolvedWorkload, others: list[ResolvedWorkload]) -> None:
        try:
            out.append(_workload(ep, w, others, est, sim, cold_start))
        except SimulateInputError as exc:
            skipped.append(str(exc))

    for ep in stack.endpoints:
        if endpoint is not None and ep.key != endpoint:
            continue
        if ep.model is not None:
            if component is None:
                add(ep, ep.model, [])
            continue
        for c in ep.components:
            if component is None or c.key == component:
                add(ep, c.workload, [o.workload for o in ep.components if o is not c])
    return Selection(tuple(out), tuple(skipped))


# --------------------------------------------------------------------------------------------- variants


def _flip(layers: Layers, field_name: str) -> Layers | None:
    value = getattr(layers, field_name)
    if value is None:
        return None
    return dataclasses.replace(layers, **{field_name: not value})


def simulate_workload(workload: Workload, traffic: Traffic) -> WorkloadSimulation:
    """The configured run, then one run per layer flipped from its configured state."""
    def run(layers: Layers) -> Result:
        spec = dataclasses.replace(workload.spec(layers), service_time=traffic.service_time_seconds)
        return simulate(spec, traffic.demand)

    variants = [Variant("configured", "as configured", workload.layers, None, run(workload.layers))]
    for name, (field_name, off_label, on_label) in LAYER_VARIANTS.items():
        flipped = _flip(workload.layers, field_name)
        if flipped is None:
            na = "does not apply: single-model endpoints " + (
                "have no data caching" if name == "data_cache" else "keep at least one instance"
            )
            variants.append(Variant(name, na, workload.layers, None, None))
            continue
        turns_off = bool(getattr(workload.layers, field_name))
        if not workload.autoscaling and name in ("metrics", "warm_minimum"):
            variants.append(Variant(name, "does not apply: auto scaling is disabled", workload.layers, None, None))
            continue
        variants.append(Variant(name, off_label if turns_off else on_label, flipped, turns_off, run(flipped)))
    variants.append(_fallback_variant(workload, traffic))
    return WorkloadSimulation(workload, traffic, tuple(variants))


def _fallback_variant(workload: Workload, traffic: Traffic) -> Variant:
    """As configured, but the first instance type has no capacity: new instances come from the next pool."""
    if workload._fallback_spec is None or workload.fallback_instance_type is None:
        return Variant(FALLBACK_VARIANT, "does not apply: the endpoint has no capacity.fallback", workload.layers, None, None)
    spec = dataclasses.replace(workload._fallback_spec(), service_time=traffic.service_time_seconds)
    label = f"no {workload.instance_type} capacity: {workload.fallback_instance_type} serves"
    return Variant(FALLBACK_VARIANT, label, workload.layers, None, simulate(spec, traffic.demand))
