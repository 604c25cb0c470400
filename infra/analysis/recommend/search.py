"""The search space: the candidates ``recommend`` simulates for one workload, each a set of config settings.

The shapes come first (instance type and accelerators per copy, each with a copy's rates from
:mod:`~fastscale.infra.analysis.simulate.requests.rates`): the given instance types, or the catalog's types of the
configured accelerator kind ranked by what the trace's busiest minute would cost on them. On each shape the grid
varies the minimum, the maximum, the target, the metric and the cooldowns; a candidate's settings are config
paths and values, so every candidate is a whole config (:mod:`~fastscale.infra.analysis.recommend.settings`).
:mod:`~fastscale.infra.analysis.recommend.evaluation` simulates them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fastscale.infra.analysis.simulate.build import SimulateInputError, select_workloads
from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.params import load_params as load_simulate_params
from fastscale.infra.analysis.simulate.requests.rates import Profile, ServiceRates, service_rates
from fastscale.infra.analysis.simulate.requests.trace import RequestInputError, RequestTrace
from fastscale.infra.base import catalog
from fastscale.infra.model.resolved import ResolvedEndpoint, ResolvedStack, ResolvedWorkload

#: Share of an accelerator's memory the weights may take (the rest is the KV cache): as rule FS008 warns.
WEIGHTS_MAX_SHARE = 0.90
#: The searched grid. Targets are fractions of the concurrency at which a copy of the shape is busy
#: (:func:`copy_load`), never above what it runs at once (serving.max_concurrency).
TARGET_FRACTIONS = (0.5, 0.7, 0.9)
#: (scale_in_cooldown, scale_out_cooldown) pairs: AWS's default scale-in cooldown and a longer one, and a
#: scale-out cooldown that stops target tracking from adding on top of copies still starting.
COOLDOWNS = ((300, 0), (900, 0), (300, 120))
METRICS = ("high_resolution", "invocations")
COMPONENT_MINIMUMS = (0, 1, 2)
MODEL_MINIMUMS = (1, 2)
#: (instance type, accelerators per copy) shapes searched when no types are given: the cheapest few for the
#: trace's busiest minute.
DEFAULT_MAX_SHAPES = 5
#: A copy's host memory share: room for SageMaker's own agents on the instance.
HOST_MEMORY_SHARE = 0.9


class RecommendInputError(SimulateInputError):
    """Bad input for the search (selection, instance types, SLO): a user mistake, with how to fix it; ``option``
    names the command-line option at fault."""


@dataclass(frozen=True)
class Candidate:
    index: int
    settings: dict[str, Any]  # config path -> value, in the order they are written
    instance_type: str
    copies_per_instance: int
    rates: ServiceRates


@dataclass(frozen=True)
class Search:
    """What one search evaluates: the workload, the file's data, the candidates and the trace."""

    data: dict[str, Any]
    endpoint: str
    component: str | None
    workload_path: str  # config path of the model or component
    trace: RequestTrace
    candidates: tuple[Candidate, ...]
    routing: str
    timeout: float
    notes: tuple[str, ...] = ()


def _select(stack: ResolvedStack, endpoint: str | None, component: str | None) -> tuple[int, int | None]:
    """(endpoint index, component index or None) of the one workload to tune."""
    try:
        selection = select_workloads(stack, endpoint, component)
    except SimulateInputError as exc:
        raise RecommendInputError(str(exc), exc.option) from None
    chosen = list(selection.workloads)
    if not chosen:
        raise RecommendInputError("nothing to tune: " + "; ".join(selection.skipped or ["no workload selected"]))
    if len(chosen) > 1:
        raise RecommendInputError(
            f"the selection holds {len(chosen)} workloads ({', '.join(w.name for w in chosen)}): choose one with "
            "--endpoint and --component",
            "--component" if endpoint else "--endpoint",
        )
    w = chosen[0]
    i = next(n for n, ep in enumerate(stack.endpoints) if ep.key == w.endpoint)
    j = None if w.component is None else next(
        n for n, c in enumerate(stack.endpoints[i].components) if c.key == w.component)
    return i, j


def _fits_memory(instance: catalog.InstanceSpec, accelerators: int, model_size_gb: float) -> bool:
    gib = model_size_gb * 1e9 / 2**30
    return gib <= accelerators * instance.accelerator_memory_gib * WEIGHTS_MAX_SHARE


def _accelerator_options(instance: catalog.InstanceSpec, model_size_gb: float | None, configured: int | None) -> list[int]:
    """Accelerators per copy to try: the fewest powers of two the weights fit, and twice that (faster copies)."""
    if model_size_gb is None:
        return [configured] if configured and configured <= instance.accelerator_count else []
    fitting = [a for a in (1, 2, 4, 8, 16) if a <= instance.accelerator_count and _fits_memory(instance, a, model_size_gb)]
    return fitting[:2]


def _shapes(
    ep: ResolvedEndpoint, w: ResolvedWorkload, given: Sequence[str] | None, max_shapes: int, trace: RequestTrace, capacity: float,
    params: SimulateParams, profile: Profile | None, notes: list[str],
) -> list[tuple[catalog.InstanceSpec, int, ServiceRates]]:
    """(instance type, accelerators per copy, a copy's rates) to search.

    Given types: every fitting accelerator count on each. Otherwise the catalog's types of the configured
    accelerator kind (the image is built for it) whose accelerators hold the weights, one per accelerator model
    and count (a larger size of the same GPUs costs more for the same speed), ranked by what the busiest
    minute of the trace would cost on them, the best ``max_shapes`` plus the configured shape.
    """
    is_component = w.is_component
    configured_acc = w.resources.accelerators if w.resources is not None else None
    configured = catalog.get(ep.instance_type)

    def options(spec: catalog.InstanceSpec) -> list[int]:
        if not is_component:
            fits = w.model_size_gb is None or _fits_memory(spec, spec.accelerator_count, w.model_size_gb)
            return [spec.accelerator_count] if fits else []
        return _accelerator_options(spec, w.model_size_gb, configured_acc)

    def rated(spec: catalog.InstanceSpec, acc: int) -> ServiceRates | None:
        try:
            return service_rates(ep, w, capacity, params, profile, instance_type=spec.instance_type, accelerators=acc,
                                 mean_request_tokens=trace.mean_request_tokens, mean_context_tokens=trace.mean_context_tokens)
        except RequestInputError as exc:
            notes.append(f"{spec.instance_type} with {acc} accelerator(s) per copy skipped: {exc}")
            return None

    if given:
        out = []
        for name in given:
            spec = catalog.get(name)
            if spec is None:
                hint = catalog.suggest(name)
                raise RecommendInputError(
                    f"unknown instance type {name!r}: not an accelerator type in fastscale's catalog"
                    + (f" (did you mean {', '.join(hint)}?)" if hint else ""),
                    "--instance-types",
                )
            accs = options(spec)
            if not accs:
                raise RecommendInputError(
                    f"{spec.instance_type}: the model's {w.model_size_gb:g} GB of weights do not fit its accelerators "
                    f"({spec.accelerator_count} x {spec.accelerator_memory_gib:g} GiB, {WEIGHTS_MAX_SHARE:.0%} for "
                    "weights)", "--instance-types")
            out += [(spec, acc, r) for acc in accs if (r := rated(spec, acc)) is not None]
        return out
    if configured is None:
        raise RecommendInputError(f"{ep.instance_type} is not in the catalog: give --instance-types", "--instance-types")
    if len(ep.components) > 1 or w.model_size_gb is None:
        notes.append(f"the instance type stays {ep.instance_type}: "
                     + ("the endpoint hosts other components" if w.model_size_gb is not None else "model_size_gb is not set"))
        pool = [configured]
    else:
        best: dict[tuple[str, int], catalog.InstanceSpec] = {}
        for spec in catalog.all_instances():
            if spec.accelerator_kind != configured.accelerator_kind or not options(spec):
                continue
            key = (spec.accelerator_name, spec.accelerator_count)
            if key not in best or (spec.price_per_hour_usd, spec.instance_type) < (best[key].price_per_hour_usd, best[key].instance_type):
                best[key] = spec
        pool = list(best.values())
        if configured not in pool and options(configured):
            pool.append(configured)
    own_acc = configured_acc if is_component else configured.accelerator_count
    ranked: list[tuple[float, str, int, catalog.InstanceSpec, ServiceRates]] = []
    own: list[tuple[catalog.InstanceSpec, int, ServiceRates]] = []
    for spec in pool:
        for acc in options(spec):
            rates = rated(spec, acc)
            if rates is None:
                continue
            if spec.instance_type == ep.instance_type and acc == own_acc:
                own.append((spec, acc, rates))
            per_instance = spec.accelerator_count // acc
            copies = copies_needed(trace, rates)
            ranked.append((math.ceil(copies / per_instance) * spec.price_per_hour_usd, spec.instance_type, acc, spec, rates))
    ranked.sort(key=lambda x: x[:3])
    chosen = [(spec, acc, rates) for _, _, acc, spec, rates in ranked[:max_shapes]]
    chosen += [o for o in own if (o[0].instance_type, o[1]) not in {(c[0].instance_type, c[1]) for c in chosen}]
    notes.append("searched: " + ", ".join(f"{spec.instance_type} ({acc} accelerator(s) per copy)" for spec, acc, _ in chosen)
                 + (f" (the {max_shapes} cheapest at the trace's busiest minute" + (", and the configured one)" if len(chosen) > max_shapes else ")")
                    if len(ranked) > 1 else ""))
    return chosen


def busiest_minute_rate(trace: RequestTrace) -> float:
    """Requests per second in the busiest minute of the trace."""
    per_second = [0] * trace.seconds
    for a in trace.arrivals:
        per_second[int(a)] += 1
    window = min(60, len(per_second))
    running = sum(per_second[:window])
    peak = running
    for t in range(window, len(per_second)):
        running += per_second[t] - per_second[t - window]
        peak = max(peak, running)
    return peak / window


def copy_load(trace: RequestTrace, rates: ServiceRates) -> tuple[float, float]:
    """(requests per second one busy copy serves, requests it then holds) for the trace's mean request.

    Busy: every step full, so a request costs its prompt's compute on its own and a share of the decode steps
    (a step at the copy's slots serves that many sequences). It then holds about its busy rate x the time a request
    takes alone (Little's law): the concurrency past which requests start to queue behind one another."""
    n = len(trace)
    prompt, output = trace.input_total / n, trace.output_total / n
    busy = prompt / rates.prefill_tokens_per_second + output * rates.decode_step_seconds(rates.slots) / rates.slots
    rate = 1.0 / max(busy, 1e-9)
    alone = rates.request_overhead_seconds + prompt / rates.prefill_tokens_per_second + output * rates.decode_step_seconds(1)
    return rate, max(1.0, min(float(rates.slots), rate * alone))


def copies_needed(trace: RequestTrace, rates: ServiceRates) -> int:
    """Copies the busiest minute of the trace keeps busy."""
    rate, _ = copy_load(trace, rates)
    return max(1, math.ceil(busiest_minute_rate(trace) / rate - 1e-9))


def build_search(
    stack: ResolvedStack,
    data: dict[str, Any],
    trace: RequestTrace,
    *,
    endpoint: str | None = None,
    component: str | None = None,
    instance_types: Sequence[str] | None = None,
    profile: Profile | None = None,
    params: SimulateParams | None = None,
    timeout: float | None = None,
    max_shapes: int = DEFAULT_MAX_SHAPES,
) -> Search:
    """Every candidate for the one selected workload of ``stack`` (``data`` is the file's YAML data, which the
    candidates' settings edit)."""
    params = params or load_simulate_params()
    i, j = _select(stack, endpoint, component)
    ep = stack.endpoints[i]
    w = ep.model if j is None else ep.components[j].workload
    assert w is not None
    is_component = j is not None
    name = w.key if w.is_component else None
    ep_path = ep.path
    w_path = f"{ep_path}.{w.path}"
    notes: list[str] = []
    if not w.scaling.enabled:
        notes.append("auto scaling is disabled in the file: the candidates turn it on (autoscaling.enabled)")
    workload = select_workloads(stack, ep.key, name).workloads[0]
    capacity = workload.capacity
    others = [c.workload for c in ep.components if c.workload is not w]
    shapes = _shapes(ep, w, instance_types, max_shapes, trace, capacity, params, profile, notes)
    candidates: list[Candidate] = []
    minimums = COMPONENT_MINIMUMS if is_component else MODEL_MINIMUMS
    scaling = f"{w_path}.autoscaling"
    for spec, acc, rates in shapes:
        fixed = _fixed_settings(ep, w, spec, acc, rates, w_path, ep_path, is_component, others)
        if fixed is None:
            notes.append(f"{spec.instance_type} with {acc} accelerator(s) per copy skipped: a copy does not fit the host")
            continue
        shared, per_instance = fixed
        # Copies the busiest minute keeps busy: the maximum gets a little headroom, or twice as much.
        need = copies_needed(trace, rates)
        _, busy_at = copy_load(trace, rates)
        maxima = sorted({math.ceil(need * 1.25), 2 * need + 1})
        grid = itertools.product(minimums, maxima, TARGET_FRACTIONS, METRICS, COOLDOWNS)
        for lo, hi, fraction, metric, (scale_in, scale_out) in grid:
            if hi < max(lo, 1):
                continue
            settings = dict(shared)
            settings.update(_count_settings(lo, hi, per_instance, is_component, w_path, ep_path, others))
            if not w.scaling.enabled:
                settings[f"{scaling}.enabled"] = True
            settings[f"{scaling}.target_concurrency"] = round(fraction * busy_at, 2)
            settings[f"{scaling}.metric"] = metric
            settings[f"{scaling}.scale_in_cooldown"] = scale_in
            settings[f"{scaling}.scale_out_cooldown"] = scale_out
            candidates.append(Candidate(len(candidates), settings, spec.instance_type, per_instance, rates))
    if not candidates:
        raise RecommendInputError("no candidate to simulate: " + "; ".join(notes or ["no instance type fits the model"]))
    limit = params.requests.invocation_timeout_seconds.value if timeout is None else timeout
    return Search(data, ep.key, name, w_path, trace, tuple(candidates), ep.routing.in_effect, limit, tuple(notes))


def _fixed_settings(
    ep: ResolvedEndpoint, w: ResolvedWorkload, spec: catalog.InstanceSpec, acc: int, rates: ServiceRates, w_path: str,
    ep_path: str, is_component: bool, others: list[ResolvedWorkload],
) -> tuple[dict[str, Any], int] | None:
    """Settings every candidate on this type and accelerator count shares, and its copies per instance."""
    settings: dict[str, Any] = {f"{ep_path}.instance_type": spec.instance_type}
    per_instance = 1
    if is_component:
        res = w.resources
        assert res is not None, "a component reserves resources"
        per_instance = spec.accelerator_count // acc
        host_mb = int(spec.memory_gib * 1024 * HOST_MEMORY_SHARE)
        # Other components keep their reservations: this one gets what is left per instance.
        if others:
            reserved = [o.resources for o in others if o.resources is not None]
            per_instance = max(0, (spec.accelerator_count - sum(r.accelerators or 0 for r in reserved)) // acc)
            host_mb -= sum(r.memory_mb for r in reserved)
        if per_instance < 1:
            return None
        memory = min(res.memory_mb, host_mb // per_instance)
        if memory < 128:
            return None
        settings[f"{w_path}.resources.accelerators"] = acc
        settings[f"{w_path}.resources.memory_mb"] = memory
        if res.max_memory_mb is not None:
            settings[f"{w_path}.resources.max_memory_mb"] = max(memory, min(res.max_memory_mb, host_mb // per_instance))
        if res.cpus is not None:
            cpus = min(res.cpus, math.floor(spec.vcpus / per_instance * 4) / 4)
            if cpus < 0.25:
                return None
            settings[f"{w_path}.resources.cpus"] = cpus
    if w.serving.max_concurrency is None:
        settings[f"{w_path}.serving.max_concurrency"] = rates.slots
    # Measured rates carried to another type were scaled: write what the search assumed.
    if w.serving.prefill_tokens_per_second is not None:
        settings[f"{w_path}.serving.prefill_tokens_per_second"] = round(rates.prefill_tokens_per_second, 1)
    if w.serving.decode_tokens_per_second is not None:
        settings[f"{w_path}.serving.decode_tokens_per_second"] = round(rates.decode_tokens_per_second, 2)
    return settings, per_instance


def _count_settings(
    lo: int, hi: int, per_instance: int, is_component: bool, w_path: str, ep_path: str, others: list[ResolvedWorkload]
) -> dict[str, Any]:
    if not is_component:
        return {f"{ep_path}.instances.min": lo, f"{ep_path}.instances.max": hi,
                f"{ep_path}.instances.initial": max(lo, 1)}
    initial = max(1, lo)
    other_min = sum(o.scaling.count.min for o in others)
    other_max = sum(o.scaling.count.max for o in others)
    other_initial = sum(o.scaling.count.initial for o in others)
    # One instance more than the copies need at their maximum: room for a rolling update's new batch (FS045).
    return {
        f"{w_path}.copies.min": lo,
        f"{w_path}.copies.max": hi,
        f"{w_path}.copies.initial": initial,
        f"{ep_path}.instances.min": math.ceil((lo + other_min) / per_instance),
        f"{ep_path}.instances.max": math.ceil((hi + other_max) / per_instance) + 1,
        f"{ep_path}.instances.initial": max(1, math.ceil((initial + other_initial) / per_instance)),
    }
