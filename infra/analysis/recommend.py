"""The cheapest settings that meet a latency SLO on a request trace: a grid search over the request-level model.

For one workload (a single-model endpoint or one inference component) the search varies what decides cost and
latency on SageMaker: the instance type (memory-fitting types of the same accelerator kind from the catalog,
or a given list), accelerators per copy (and so copies per instance), the minimum (scale to zero where AWS
allows it: inference components), the maximum, the target as a fraction of a copy's capacity, the scale-in and
scale-out cooldowns and the metric resolution. Every candidate is a whole config: the settings are applied to
the file's data and the result is loaded and simulated exactly as ``fastscale simulate --requests`` would,
so what the search found is what the written config does.

Candidates run on all cores (``concurrent.futures.ProcessPoolExecutor``); each result lands at its
candidate's index and random routing is seeded the same for every candidate, so the outcome does not depend
on the number of workers.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import math
import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fastscale.infra.analysis.simulate.build import SimulateInputError, Workload, select_workloads
from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.params import load_params as load_simulate_params
from fastscale.infra.analysis.simulate.requests.rates import Profile, ServiceRates, service_rates
from fastscale.infra.analysis.simulate.requests.replay import FailureLimitExceeded, simulate_requests
from fastscale.infra.analysis.simulate.requests.trace import RequestInputError, RequestTrace
from fastscale.infra.analysis.simulate.spec import SimSpec
from fastscale.infra.base import catalog
from fastscale.infra.config import (
    ConfigError,
    EndpointSpec,
    FastscaleConfig,
    InferenceComponentSpec,
    ModelSpec,
    parse_config,
    parse_path,
    safe_yaml,
)
from fastscale.infra.config.yaml_edit import edit

#: Share of an accelerator's memory the weights may take (the rest is the KV cache): as rule FS008 warns.
WEIGHTS_MAX_SHARE = 0.90
#: The searched grid. Targets are fractions of a copy's capacity (serving.max_concurrency).
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
class Outcome:
    candidate: Candidate
    cost_usd: float
    ttft_p99_s: float | None
    e2e_p99_s: float | None
    rejected_fraction: float
    peak_copies: int
    peak_instances: int
    error: str | None = None
    #: The simulation stopped once more requests had failed than ``--max-rejected`` allows: the candidate cannot
    #: be chosen nor be on the front, its latencies and cost are unknown (None / inf) and ``rejected_fraction`` is
    #: what had failed by then (a lower bound).
    stopped_early: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.candidate.settings,
            "cost_usd": round(self.cost_usd, 4),
            "ttft_p99_s": None if self.ttft_p99_s is None else round(self.ttft_p99_s, 3),
            "e2e_p99_s": None if self.e2e_p99_s is None else round(self.e2e_p99_s, 3),
            "rejected_fraction": round(self.rejected_fraction, 6),
            "instance_type": self.candidate.instance_type,
            "copies_per_instance": self.candidate.copies_per_instance,
            "peak_copies": self.peak_copies,
            "peak_instances": self.peak_instances,
            "candidate": self.candidate.index,
        }


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


@dataclass(frozen=True)
class Recommendation:
    search: Search
    outcomes: tuple[Outcome, ...]
    pareto: tuple[Outcome, ...]
    choice: Outcome | None
    reason: str | None
    ttft_p99_slo: float
    max_rejected: float
    failed: tuple[Outcome, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "choice": None if self.choice is None else self.choice.to_dict(),
            "pareto": [o.to_dict() for o in self.pareto],
            "slo": {"ttft_p99_s": self.ttft_p99_slo, "max_rejected_fraction": self.max_rejected},
            "workload": {"endpoint": self.search.endpoint, "component": self.search.component,
                         "path": self.search.workload_path},
            "trace": self.search.trace.to_dict(),
            "candidates": len(self.outcomes),
            "candidates_failed": len(self.failed),
            "candidates_stopped_early": sum(1 for o in self.outcomes if o.stopped_early),
            "notes": list(self.search.notes),
        }
        if self.choice is None:
            out["reason"] = self.reason
        return out


# --------------------------------------------------------------------------------------------- candidates


def _select(config: FastscaleConfig, endpoint: str | None, component: str | None) -> tuple[int, int | None]:
    """(endpoint index, component index or None) of the one workload to tune."""
    try:
        selection = select_workloads(config, endpoint, component)
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
    i = next(n for n, ep in enumerate(config.endpoints) if ep.name == w.endpoint)
    j = None if w.component is None else next(
        n for n, c in enumerate(config.endpoints[i].inference_components) if c.name == w.component)
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
    ep: EndpointSpec, w: Any, given: Sequence[str] | None, max_shapes: int, trace: RequestTrace, capacity: float,
    params: SimulateParams, profile: Profile | None, notes: list[str],
) -> list[tuple[catalog.InstanceSpec, int, ServiceRates]]:
    """(instance type, accelerators per copy, a copy's rates) to search.

    Given types: every fitting accelerator count on each. Otherwise the catalog's types of the configured
    accelerator kind (the image is built for it) whose accelerators hold the weights, one per accelerator model
    and count (a larger size of the same GPUs costs more for the same speed), ranked by what the busiest
    minute of the trace would cost on them, the best ``max_shapes`` plus the configured shape.
    """
    is_component = isinstance(w, InferenceComponentSpec)
    configured_acc = w.resources.accelerators if isinstance(w, InferenceComponentSpec) else None
    configured = catalog.get(ep.instance_type)

    def options(spec: catalog.InstanceSpec) -> list[int]:
        if not is_component:
            fits = w.model_size_gb is None or _fits_memory(spec, spec.accelerator_count, w.model_size_gb)
            return [spec.accelerator_count] if fits else []
        return _accelerator_options(spec, w.model_size_gb, configured_acc)

    def rated(spec: catalog.InstanceSpec, acc: int) -> ServiceRates | None:
        try:
            return service_rates(ep, w, capacity, params, profile, instance_type=spec.instance_type, accelerators=acc)
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
    if len(ep.inference_components) > 1 or w.model_size_gb is None:
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
            copies = max(1, math.ceil(_peak_concurrency(trace, rates) / rates.slots))
            ranked.append((math.ceil(copies / per_instance) * spec.price_per_hour_usd, spec.instance_type, acc, spec, rates))
    ranked.sort(key=lambda x: x[:3])
    chosen = [(spec, acc, rates) for _, _, acc, spec, rates in ranked[:max_shapes]]
    chosen += [o for o in own if (o[0].instance_type, o[1]) not in {(c[0].instance_type, c[1]) for c in chosen}]
    notes.append("searched: " + ", ".join(f"{spec.instance_type} ({acc} accelerator(s) per copy)" for spec, acc, _ in chosen)
                 + (f" (the {max_shapes} cheapest at the trace's busiest minute" + (", and the configured one)" if len(chosen) > max_shapes else ")")
                    if len(ranked) > 1 else ""))
    return chosen


def _peak_concurrency(trace: RequestTrace, rates: ServiceRates) -> float:
    """Requests in flight at the busiest minute of the trace, each taking its time on a busy copy."""
    per_second = [0] * trace.seconds
    for a in trace.arrivals:
        per_second[int(a)] += 1
    window = min(60, len(per_second))
    running = sum(per_second[:window])
    peak = running
    for t in range(window, len(per_second)):
        running += per_second[t] - per_second[t - window]
        peak = max(peak, running)
    n = len(trace)
    service = (sum(trace.input_tokens) / n / rates.prefill_tokens_per_second
               + sum(trace.output_tokens) / n / rates.per_sequence_decode(rates.slots))
    return peak / window * service


def build_search(
    config: FastscaleConfig,
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
    """Every candidate for the one selected workload of ``config`` (``data`` is the file's YAML data)."""
    params = params or load_simulate_params()
    i, j = _select(config, endpoint, component)
    ep = config.endpoints[i]
    w: ModelSpec | InferenceComponentSpec | None = ep.model if j is None else ep.inference_components[j]
    assert w is not None
    is_component = j is not None
    name = w.name if isinstance(w, InferenceComponentSpec) else None
    ep_path = f"endpoints[{i}]"
    w_path = f"{ep_path}.model" if j is None else f"{ep_path}.inference_components[{j}]"
    notes: list[str] = []
    if not w.autoscaling.enabled:
        notes.append("auto scaling is disabled in the file: the candidates turn it on (autoscaling.enabled)")
    workload = select_workloads(config, ep.name, name).workloads[0]
    capacity = workload.capacity
    others = [o for o in ep.inference_components if o is not w]
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
        # Copies the busiest minute needs at full capacity: the maximum gets a little headroom, or twice as much.
        need = max(1, math.ceil(_peak_concurrency(trace, rates) / rates.slots))
        maxima = sorted({math.ceil(need * 1.25), 2 * need + 1})
        grid = itertools.product(minimums, maxima, TARGET_FRACTIONS, METRICS, COOLDOWNS)
        for lo, hi, fraction, metric, (scale_in, scale_out) in grid:
            if hi < max(lo, 1):
                continue
            settings = dict(shared)
            settings.update(_count_settings(lo, hi, per_instance, is_component, w_path, ep_path, others))
            if not w.autoscaling.enabled:
                settings[f"{scaling}.enabled"] = True
            settings[f"{scaling}.target_concurrency"] = round(fraction * rates.slots, 2)
            settings[f"{scaling}.metric"] = metric
            settings[f"{scaling}.scale_in_cooldown"] = scale_in
            settings[f"{scaling}.scale_out_cooldown"] = scale_out
            candidates.append(Candidate(len(candidates), settings, spec.instance_type, per_instance, rates))
    if not candidates:
        raise RecommendInputError("no candidate to simulate: " + "; ".join(notes or ["no instance type fits the model"]))
    limit = params.requests.invocation_timeout_seconds.value if timeout is None else timeout
    return Search(data, ep.name, name, w_path, trace, tuple(candidates), ep.routing_in_effect, limit, tuple(notes))


def _fixed_settings(
    ep: EndpointSpec, w: Any, spec: catalog.InstanceSpec, acc: int, rates: ServiceRates, w_path: str, ep_path: str,
    is_component: bool, others: list[InferenceComponentSpec],
) -> tuple[dict[str, Any], int] | None:
    """Settings every candidate on this type and accelerator count shares, and its copies per instance."""
    settings: dict[str, Any] = {f"{ep_path}.instance_type": spec.instance_type}
    per_instance = 1
    if is_component:
        res = w.resources
        per_instance = spec.accelerator_count // acc
        host_mb = int(spec.memory_gib * 1024 * HOST_MEMORY_SHARE)
        # Other components keep their reservations: this one gets what is left per instance.
        if others:
            per_instance = max(0, (spec.accelerator_count - sum(o.resources.accelerators or 0 for o in others)) // acc)
            host_mb -= sum(o.resources.memory_mb for o in others)
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
    lo: int, hi: int, per_instance: int, is_component: bool, w_path: str, ep_path: str, others: list[InferenceComponentSpec]
) -> dict[str, Any]:
    if not is_component:
        return {f"{ep_path}.instances.min": lo, f"{ep_path}.instances.max": hi,
                f"{ep_path}.instances.initial": max(lo, 1)}
    initial = max(1, lo)
    other_min = sum(o.copies.min for o in others)
    other_max = sum(o.copies.max for o in others)
    other_initial = sum(o.copies.initial for o in others)
    # One instance more than the copies need at their maximum: room for a rolling update's new batch (FS045).
    return {
        f"{w_path}.copies.min": lo,
        f"{w_path}.copies.max": hi,
        f"{w_path}.copies.initial": initial,
        f"{ep_path}.instances.min": math.ceil((lo + other_min) / per_instance),
        f"{ep_path}.instances.max": math.ceil((hi + other_max) / per_instance) + 1,
        f"{ep_path}.instances.initial": max(1, math.ceil((initial + other_initial) / per_instance)),
    }


# --------------------------------------------------------------------------------------------- evaluation


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``path`` (``endpoints[0].instances.min``) in YAML data, creating mappings that are missing."""
    parts = parse_path(path)
    node: Any = data
    for part, following in zip(parts, parts[1:], strict=False):
        if isinstance(part, int):
            node = node[part]
            continue
        if node.get(part) is None:
            node[part] = [] if isinstance(following, int) else {}
        node = node[part]
    node[parts[-1]] = value


def candidate_config(data: dict[str, Any], settings: dict[str, Any]) -> FastscaleConfig:
    changed = copy.deepcopy(data)
    for path, value in settings.items():
        set_path(changed, path, value)
    return parse_config(changed, "<candidate>")


def failure_limit(requests: int, max_rejected: float) -> int:
    """The most failed requests a candidate may have and still count as ``rejected_fraction <= max_rejected``
    (computed the same way as the front's check, so the two never disagree at the boundary)."""
    k = min(requests, max(0, math.floor(max_rejected * requests)))
    while k < requests and (k + 1) / requests <= max_rejected:
        k += 1
    while k > 0 and k / requests > max_rejected:
        k -= 1
    return k


def evaluate(
    search: Search, candidate: Candidate, params: SimulateParams | None = None, max_rejected: float | None = None
) -> Outcome:
    """Simulate one candidate: its whole config, request by request.

    With ``max_rejected`` the simulation stops as soon as more requests failed than that fraction allows: such
    a candidate is never on the front nor chosen, whatever the rest of the trace does (``stopped_early``)."""
    spec = _spec(search, candidate, params)
    if isinstance(spec, Outcome):
        return spec
    return _simulate(search, candidate, spec, max_rejected)[0]


def _spec(search: Search, candidate: Candidate, params: SimulateParams | None) -> SimSpec | Outcome:
    """The candidate's simulation input, or its outcome when its config does not load."""
    try:
        config = candidate_config(search.data, candidate.settings)
        selection = select_workloads(config, search.endpoint, search.component, sim=params)
        if not selection.workloads:
            raise SimulateInputError("; ".join(selection.skipped))
        workload: Workload = selection.workloads[0]
        return workload.spec()
    except (ConfigError, SimulateInputError) as exc:
        return Outcome(candidate, math.inf, None, None, 1.0, 0, 0, error=str(exc))


def _simulate(
    search: Search, candidate: Candidate, spec: SimSpec, max_rejected: float | None
) -> tuple[Outcome, bool]:
    """(outcome, whether the minimum bound: see result.Result.minimum_bound)."""
    n = len(search.trace)
    limit = None if max_rejected is None or not n else failure_limit(n, max_rejected)
    try:
        run = simulate_requests(spec, search.trace, candidate.rates, search.routing, search.timeout,
                                stop_after_failures=limit)
    except FailureLimitExceeded as exc:
        return Outcome(candidate, math.inf, None, None, exc.failed / n, 0, 0, stopped_early=True), exc.minimum_bound
    except SimulateInputError as exc:
        return Outcome(candidate, math.inf, None, None, 1.0, 0, 0, error=str(exc)), True
    st, summary = run.stats, run.result.summary
    outcome = Outcome(
        candidate,
        cost_usd=summary.cost_usd if summary.cost_usd is not None else math.inf,
        ttft_p99_s=st.ttft.p99,
        e2e_p99_s=st.e2e.p99,
        rejected_fraction=st.rejected_fraction,
        peak_copies=summary.peak_copies,
        peak_instances=summary.peak_instances,
    )
    return outcome, run.result.minimum_bound


def _without_minimum(spec: SimSpec) -> SimSpec:
    return dataclasses.replace(spec, units_min=0, instances_min=0, scale_from_zero=None)


def evaluate_group(
    search: Search, candidates: Sequence[Candidate], params: SimulateParams | None = None,
    max_rejected: float | None = None,
) -> list[Outcome]:
    """Candidates that may differ only in their minimum, each with the outcome ``evaluate`` gives it.

    Highest minimum first: when a run's minimum never bound (``result.Result.minimum_bound``), a candidate whose
    simulation input is the same but for a lower minimum (copies and instances) follows the very same run, so
    its outcome is copied instead of simulated again. Anything else about the input that differs, or a minimum
    that bound, means a simulation of its own."""
    specs = [(c, _spec(search, c, params)) for c in candidates]
    done: list[Outcome] = []
    unbound: list[tuple[SimSpec, SimSpec, Outcome]] = []  # (spec, spec without minimum, outcome) never bound
    ready = [(c, s) for c, s in specs if isinstance(s, SimSpec)]
    done += [s for _, s in specs if isinstance(s, Outcome)]
    ready.sort(key=lambda cs: (-cs[1].units_min, -cs[1].instances_min, cs[0].index))
    for candidate, spec in ready:
        bare = _without_minimum(spec)
        same = next((o for s, b, o in unbound if b == bare and spec.units_min <= s.units_min
                     and spec.instances_min <= s.instances_min and o.candidate.rates == candidate.rates), None)
        if same is not None:
            done.append(dataclasses.replace(same, candidate=candidate))
            continue
        outcome, bound = _simulate(search, candidate, spec, max_rejected)
        done.append(outcome)
        if not bound:
            unbound.append((spec, bare, outcome))
    return sorted(done, key=lambda o: o.candidate.index)


def minimum_groups(search: Search) -> list[list[int]]:
    """Candidate indexes grouped by everything but their minimum (the settings that only set it and the
    starting count), in candidate order: the units ``evaluate_group`` shares work within."""
    groups: dict[tuple[Any, ...], list[int]] = {}
    for c in search.candidates:
        rest = tuple((k, v) for k, v in c.settings.items() if not k.endswith(_MINIMUM_KEYS))
        groups.setdefault((c.instance_type, rest), []).append(c.index)
    return list(groups.values())


_MINIMUM_KEYS = ("copies.min", "copies.initial", "instances.min", "instances.initial")


_WORKER: dict[str, Any] = {}


def _init_worker(search: Search) -> None:
    _WORKER["search"] = search
    _WORKER["params"] = load_simulate_params()


def _evaluate_many(groups: list[list[int]], max_rejected: float | None) -> list[Outcome]:
    search: Search = _WORKER["search"]
    out: list[Outcome] = []
    for group in groups:
        out += evaluate_group(search, [search.candidates[i] for i in group], _WORKER["params"], max_rejected)
    return out


def evaluate_all(
    search: Search, workers: int | None = None, progress: Callable[[int], None] | None = None,
    max_rejected: float | None = None,
) -> tuple[Outcome, ...]:
    """Every candidate, on ``workers`` processes (default: all cores); results in candidate order.

    Candidates that differ only in their minimum are simulated together (``evaluate_group``), so one run serves
    every lower minimum that would not change it. With ``max_rejected`` (the SLO's ``--max-rejected``) a
    candidate's simulation stops once it has failed more requests than that allows (``Outcome.stopped_early``).
    The front and the choice are the same as with every candidate simulated on its own to the end. When no
    candidate is within ``max_rejected`` at all, the stopped ones are simulated to the end, so the reason can
    name the fewest rejections any candidate reached."""
    n = len(search.candidates)
    results: list[Outcome | None] = [None] * n
    _evaluate_groups(search, minimum_groups(search), results, workers, progress, max_rejected)
    if max_rejected is not None and not any(
        o is not None and o.error is None and not o.stopped_early and o.rejected_fraction <= max_rejected for o in results
    ):
        again = [[o.candidate.index] for o in results if o is not None and o.stopped_early]
        _evaluate_groups(search, again, results, workers, None, None)
    assert all(r is not None for r in results)
    return tuple(r for r in results if r is not None)


def _evaluate_groups(
    search: Search, groups: list[list[int]], results: list[Outcome | None], workers: int | None,
    progress: Callable[[int], None] | None, max_rejected: float | None,
) -> None:
    n = len(groups)
    if not n:
        return
    workers = max(1, min(workers or os.cpu_count() or 1, n))
    if workers == 1:
        params = load_simulate_params()
        for group in groups:
            for outcome in evaluate_group(search, [search.candidates[i] for i in group], params, max_rejected):
                results[outcome.candidate.index] = outcome
            if progress:
                progress(len(group))
        return
    chunk = max(1, min(4, n // (workers * 8) or 1))
    batches = [groups[start:start + chunk] for start in range(0, n, chunk)]
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(search,)) as pool:
        futures: dict[Future[list[Outcome]], int] = {
            pool.submit(_evaluate_many, b, max_rejected): sum(len(g) for g in b) for b in batches}
        for future in _as_completed(futures):
            for outcome in future.result():
                results[outcome.candidate.index] = outcome
            if progress:
                progress(futures[future])


def _as_completed(futures: Iterable[Future[list[Outcome]]]) -> Iterable[Future[list[Outcome]]]:
    from concurrent.futures import as_completed

    return as_completed(futures)


# --------------------------------------------------------------------------------------------- the front


def pareto_front(outcomes: Iterable[Outcome], max_rejected: float) -> tuple[Outcome, ...]:
    """Cost against TTFT p99 among candidates that reject at most ``max_rejected`` of the requests: no candidate
    on the front is cheaper-or-equal and faster-or-equal than another with one strictly better. One candidate
    per point (the lowest index), cheapest first."""
    eligible = [o for o in outcomes if o.error is None and o.ttft_p99_s is not None and math.isfinite(o.cost_usd)
                and o.rejected_fraction <= max_rejected]
    eligible.sort(key=lambda o: (o.cost_usd, o.ttft_p99_s, o.candidate.index))
    front: list[Outcome] = []
    best = math.inf
    for o in eligible:
        assert o.ttft_p99_s is not None
        if o.ttft_p99_s < best:
            front.append(o)
            best = o.ttft_p99_s
    return tuple(front)


def choose(front: Sequence[Outcome], ttft_p99: float) -> Outcome | None:
    """The cheapest point of the front whose TTFT p99 is within the SLO (the cheapest of every eligible candidate:
    any cheaper one meeting the SLO would be on the front before it)."""
    return next((o for o in front if o.ttft_p99_s is not None and o.ttft_p99_s <= ttft_p99), None)


def recommend(search: Search, outcomes: Sequence[Outcome], ttft_p99: float, max_rejected: float) -> Recommendation:
    if not ttft_p99 > 0:
        raise RecommendInputError(f"the TTFT p99 SLO must be above 0 seconds, not {ttft_p99:g}", "--ttft-p99")
    if not 0 <= max_rejected <= 1:
        raise RecommendInputError(f"--max-rejected is a fraction from 0 to 1, not {max_rejected:g}", "--max-rejected")
    if any(o.stopped_early and o.rejected_fraction <= max_rejected for o in outcomes):
        # Stopped under a stricter --max-rejected than this one: such a candidate might be eligible here.
        raise ValueError("outcomes stopped early under a smaller max_rejected: evaluate them with this one")
    front = pareto_front(outcomes, max_rejected)
    choice = choose(front, ttft_p99)
    reason = None
    if choice is None:
        if not front:
            least = min((o.rejected_fraction for o in outcomes if o.error is None), default=None)
            reason = (f"every candidate rejected more than {max_rejected:.2%} of the requests"
                      + (f" (the fewest: {least:.2%})" if least is not None else "")
                      + ": raise --max-rejected, add instance types, or lower the traffic")
        else:
            fastest = front[-1]
            reason = (f"no candidate has a TTFT p99 within {ttft_p99:g} s: the fastest reaches "
                      f"{fastest.ttft_p99_s:.2f} s at ${fastest.cost_usd:,.2f} over the trace; relax the SLO or try "
                      "faster instance types (--instance-types)")
    failed = tuple(o for o in outcomes if o.error is not None)
    return Recommendation(search, tuple(outcomes), front, choice, reason, ttft_p99, max_rejected, failed)


# --------------------------------------------------------------------------------------------- writing


def get_path(data: Any, path: str) -> Any:
    node = data
    for part in parse_path(path):
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return None
            node = node[part]
        else:
            if not isinstance(node, dict):
                return None
            node = node.get(part)
    return node


@dataclass(frozen=True)
class Written:
    text: str
    comments_kept: bool  # False: the data was written anew, the file's comments and layout are gone


def apply_to_text(text: str, settings: dict[str, Any], source: str) -> Written:
    """The config text with the settings applied: edited in place (comments kept) when every path can be, and
    read back to the same values; otherwise the file's data with the settings, written anew."""
    import yaml

    edited = edit(text, settings)
    if edited is not None:
        try:
            data = safe_yaml.load(edited).data
        except safe_yaml.UnsafeYamlError:
            data = None
        if data is not None and all(get_path(data, p) == v for p, v in settings.items()):
            return Written(edited, True)
    data = copy.deepcopy(safe_yaml.load(text).data)
    for path, value in settings.items():
        set_path(data, path, value)
    header = f"# Written by fastscale recommend from {source}; its comments could not be kept.\n"
    return Written(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), False)
