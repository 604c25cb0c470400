"""How fast one copy serves requests: the time of one model-server step, and the requests it runs at once.

A copy serves by continuous batching (:mod:`~fastscale.infra.analysis.simulate.requests.batching`): each step
takes the next token of every decoding sequence and chunks of the prompts being prefilled, up to a token budget.
:class:`ServiceRates` says how long such a step takes. Measured rates come first (a profile, ``--profile FILE``,
else the config's ``serving.*``); what is not measured is estimated from the accelerator's roofline (memory
bandwidth for the weights and KV cache a decoding step reads, compute for the tokens of a step) and the model
server's CPU overheads, every figure in ``infra/analysis/simulate_params.json``. Rates measured on one instance
type are carried to another by the ratio of the two rooflines, which is how ``recommend`` compares instance
types. The requests a copy runs at once come from the KV cache the accelerator memory left after the weights
holds, unless ``serving.max_concurrency`` (or the profile) says otherwise.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.requests.trace import RequestInputError
from fastscale.infra.base import catalog
from fastscale.infra.base.catalog import InstanceSpec
from fastscale.infra.base.safe_files import SpecialFileError, read_bytes
from fastscale.infra.config import InferenceComponentSpec, safe_yaml


class Profile(BaseModel):
    """A measured service profile of one copy (``--profile FILE``, YAML); see docs/simulate.md."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    instance_type: str | None = Field(None, description="Where it was measured (default: the endpoint's instance type).")
    accelerators: int | None = Field(None, ge=1, description="Accelerators of the copy it was measured on.")
    max_concurrency: int | None = Field(None, ge=1, description="Slots: requests one copy runs at once.")
    prefill_tokens_per_second: float | None = Field(None, gt=0)
    decode_tokens_per_second: float | dict[int, float] | None = Field(
        None, description="Per-sequence decode rate alone, or a table: sequences on the copy -> per-sequence rate."
    )
    decode_slowdown_per_sequence: float | None = Field(None, ge=0)


def read_profile(path: str | Path) -> Profile:
    p = Path(path)
    try:
        raw = read_bytes(p, safe_yaml.MAX_BYTES + 1, "profile")  # never blocks on a FIFO, never reads /proc
        if len(raw) > safe_yaml.MAX_BYTES:
            raise RequestInputError(f"{p}: the profile is larger than {safe_yaml.MAX_BYTES} bytes")
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise RequestInputError(f"{p}: profile file not found") from None
    except SpecialFileError as exc:
        raise RequestInputError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestInputError(f"{p}: cannot read the profile ({exc.__class__.__name__})") from None
    try:
        loaded = safe_yaml.load(text)
    except safe_yaml.UnsafeYamlError as exc:
        raise RequestInputError(f"{p}: " + "; ".join(f"line {q.line}: {q.message}" for q in exc.problems)) from None
    try:
        profile = Profile.model_validate(loaded.data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":  # the file's own key is not repeated: it may be anything
            line = loaded.lines.get(loc)
            where = f"line {line}: a key" if line else "a key"
            close = difflib.get_close_matches(str(loc[-1]), list(Profile.model_fields), n=1)
            guess = f"; did you mean {close[0]}?" if close else ""
            raise RequestInputError(f"{p}: {where} that is not a profile setting{guess} (keys: "
                                    f"{', '.join(Profile.model_fields)})") from None
        # Only the setting's own name: a table key below it is the file's text.
        where = str(loc[0]) if loc and loc[0] in Profile.model_fields else "<file>"
        raise RequestInputError(f"{p}: {where}: {err['msg']} (keys: {', '.join(Profile.model_fields)})") from None
    table = profile.decode_tokens_per_second
    if isinstance(table, dict):
        bad = [f"{k}: {v}" for k, v in table.items() if k < 1 or not v > 0]
        if bad or not table:
            raise RequestInputError(f"{p}: decode_tokens_per_second: a table of sequences (>= 1) -> tokens per second (> 0)")
        if profile.decode_slowdown_per_sequence is not None:
            raise RequestInputError(f"{p}: decode_slowdown_per_sequence only goes with a single decode_tokens_per_second")
    elif table is not None and not table > 0:
        raise RequestInputError(f"{p}: decode_tokens_per_second must be positive")
    return profile


@dataclass(frozen=True)
class ServiceRates:
    """How fast one copy serves: the slots it runs at once and the time of one model-server step.

    A step runs the next token of each decoding sequence and up to ``token_budget`` tokens in all (decode tokens
    included) of the prompts being prefilled. It takes::

        step_overhead + sequence_overhead x running sequences + max(memory time, compute time)

    memory time: the weights (what is left of ``1 / decode_tokens_per_second`` once the overheads of one sequence
    are taken off) and the KV cache of every decoding sequence (``kv_read_seconds_per_token`` per token it holds);
    compute time: every token of the step at ``prefill_tokens_per_second``. A measured decode table, or a measured
    slowdown per sequence, gives a decode-only step's time directly instead. A request also spends
    ``request_overhead_seconds`` outside the accelerator (front end, tokenizer) before it reaches the step loop.
    """

    slots: int  # requests running at once (prefilling or decoding): the server's batch limit
    prefill_tokens_per_second: float  # tokens a compute-bound step processes per second
    decode_tokens_per_second: float  # one sequence alone: the speed of a step holding one decoding sequence
    decode_slowdown_per_sequence: float = 0.0  # measured (profile): each extra sequence slows a step by this share
    decode_table: tuple[tuple[int, float], ...] = ()  # measured (sequences, per-sequence rate), overrides the model
    sources: tuple[str, ...] = ()
    token_budget: int = 1 << 30  # tokens per step (vLLM --max-num-batched-tokens); the default: no limit
    step_overhead_seconds: float = 0.0
    sequence_overhead_seconds: float = 0.0
    kv_read_seconds_per_token: float = 0.0
    request_overhead_seconds: float = 0.0
    kv_cache_tokens: int | None = None  # what the KV cache holds, where it is known
    mean_context_tokens: float = 0.0  # tokens a decoding sequence holds on average (for the rates reported)

    @property
    def measured_decode(self) -> bool:
        """A decode-only step's time is measured (table or slowdown), not modelled."""
        return bool(self.decode_table) or self.decode_slowdown_per_sequence > 0

    @property
    def weights_seconds(self) -> float:
        """Memory time of a step that reads the weights only: one sequence alone, less the step's overheads."""
        return max(0.0, 1.0 / self.decode_tokens_per_second - self.step_overhead_seconds - self.sequence_overhead_seconds)

    def decode_step_seconds(self, k: int, kv_tokens: float | None = None) -> float:
        """A step holding ``k`` decoding sequences (``kv_tokens`` in their KV cache; default ``k`` x the mean
        context) and nothing else."""
        k = max(1, k)
        if self.decode_table:
            return 1.0 / self._table_rate(k)
        if self.decode_slowdown_per_sequence > 0:
            return (1 + self.decode_slowdown_per_sequence * (k - 1)) / self.decode_tokens_per_second
        kv = k * self.mean_context_tokens if kv_tokens is None else kv_tokens
        return self.step_overhead_seconds + self.sequence_overhead_seconds * k + self.weights_seconds + kv * self.kv_read_seconds_per_token

    def step_seconds(self, decoding: int, running: int, kv_tokens: float, prefill_tokens: int) -> float:
        """A step with ``decoding`` sequences taking their next token, ``running`` sequences in all (decoding or
        prefilling) and ``prefill_tokens`` prompt tokens."""
        compute = (decoding + prefill_tokens) / self.prefill_tokens_per_second
        overhead = self.step_overhead_seconds + self.sequence_overhead_seconds * running
        if self.measured_decode:
            return max(self.decode_step_seconds(decoding), overhead + compute)
        memory = self.weights_seconds + kv_tokens * self.kv_read_seconds_per_token
        return overhead + (memory if memory > compute else compute)

    def _table_rate(self, k: float) -> float:
        points = self.decode_table
        if k <= points[0][0]:
            return points[0][1]
        for (k0, r0), (k1, r1) in zip(points, points[1:], strict=False):
            if k <= k1:
                return r0 + (r1 - r0) * (k - k0) / (k1 - k0)
        last_k, last_r = points[-1]
        return last_r * last_k / k  # beyond the table: the copy's throughput stays at its last measured value

    def per_sequence_decode(self, k: float) -> float:
        """Tokens per second each of ``k`` sequences decodes when nothing is being prefilled."""
        if self.decode_table:
            return self._table_rate(k)
        return 1.0 / self.decode_step_seconds(max(1, round(k)))

    def to_dict(self) -> dict[str, Any]:
        one, at_slots = self.decode_step_seconds(1), self.decode_step_seconds(self.slots)
        return {
            "slots": self.slots,
            "prefill_tokens_per_second": round(self.prefill_tokens_per_second, 1),
            "decode_tokens_per_second": round(self.decode_tokens_per_second, 2),
            "decode_tokens_per_second_at_slots": round(self.per_sequence_decode(self.slots), 2),
            "decode_slowdown_per_sequence": None if self.decode_table else round(
                (at_slots / one - 1) / (self.slots - 1) if self.slots > 1 else 0.0, 4),
            "token_budget_per_step": self.token_budget if self.token_budget < 1 << 30 else None,
            "request_overhead_seconds": round(self.request_overhead_seconds, 4),
            "kv_cache_tokens": self.kv_cache_tokens,
            "sources": list(self.sources),
        }


@dataclass(frozen=True)
class Roofline:
    """One copy's speed from the accelerator's figures and the model server's overheads (no measurement)."""

    prefill_tokens_per_second: float
    decode_tokens_per_second: float  # one sequence alone, overheads included
    kv_read_seconds_per_token: float
    step_overhead_seconds: float
    sequence_overhead_seconds: float
    request_overhead_seconds: float


def overheads(params: SimulateParams, cpus: float | None) -> tuple[float, float, float]:
    """(per step, per running sequence and step, per request) seconds of the model server's CPU work, for a copy
    with ``cpus`` host CPUs (None: unknown, the parts that grow with fewer CPUs are left out)."""
    r = params.requests
    share = 1.0 / cpus if cpus else 0.0
    step = r.step_overhead_seconds.value + r.step_overhead_cpu_seconds.value * share
    request = r.request_overhead_seconds.value + r.request_overhead_cpu_seconds.value * share
    return step, r.sequence_overhead_seconds.value, request


def kv_bytes_per_token(w: Any, params: SimulateParams) -> int | None:
    """Bytes of KV cache one token takes: from ``serving.model_shape``, else the stated default by model size."""
    shape = w.serving.model_shape
    if shape is not None:
        return int(shape.kv_bytes_per_token)
    if not w.model_size_gb:
        return None
    return params.requests.kv_cache_bytes_by_model_size.bytes_for(float(w.model_size_gb))


def roofline_of(
    spec: InstanceSpec | None, accelerators: int, model_size_gb: float, params: SimulateParams,
    *, cpus: float | None = None, kv_bytes: int | None = None,
) -> Roofline | None:
    """A copy's speed on ``accelerators`` of ``spec`` from the accelerator's figures; None when the catalog or the
    parameters do not know the accelerator."""
    if spec is None or model_size_gb <= 0 or accelerators < 1:
        return None
    figures = params.requests.figures(spec.accelerator_name, spec.accelerator_memory_gib)
    if figures is None:
        return None
    r = params.requests
    devices = accelerators * (1.0 if accelerators == 1 else r.tensor_parallel_efficiency.value)
    bandwidth = r.decode_bandwidth_efficiency.value * figures.memory_bandwidth_gb_per_s.value * 1e9 * devices
    step, sequence, request = overheads(params, cpus)
    weights = model_size_gb * 1e9 / bandwidth
    prefill = r.prefill_compute_efficiency.value * figures.fp16_tflops.value * 1000 * devices / model_size_gb
    return Roofline(
        prefill_tokens_per_second=prefill,
        decode_tokens_per_second=1.0 / (step + sequence + weights),
        kv_read_seconds_per_token=(kv_bytes or 0) / bandwidth,
        step_overhead_seconds=step,
        sequence_overhead_seconds=sequence,
        request_overhead_seconds=request,
    )


def roofline(instance_type: str, accelerators: int, model_size_gb: float, params: SimulateParams) -> tuple[float, float] | None:
    """(prefill tokens/s, decode tokens/s of one sequence alone) of one copy on ``accelerators`` of the instance,
    with its share of the instance's vCPUs, from the accelerator's figures; None when the catalog or the
    parameters do not know the accelerator."""
    spec = catalog.get(instance_type)
    cpus = spec.vcpus / max(1, spec.accelerator_count // max(1, accelerators)) if spec is not None else None
    rates = roofline_of(spec, accelerators, model_size_gb, params, cpus=cpus)
    return None if rates is None else (rates.prefill_tokens_per_second, rates.decode_tokens_per_second)


def copy_accelerators(ep: Any, w: Any, instance_type: str | None = None) -> int:
    """Accelerators one copy runs on: the component's reservation, or every accelerator of a single-model
    endpoint's instance."""
    if isinstance(w, InferenceComponentSpec):
        return int(w.resources.accelerators or 0)
    spec = catalog.get(instance_type or ep.instance_type)
    return spec.accelerator_count if spec is not None else 0


def copy_cpus(w: Any, spec: InstanceSpec | None, accelerators: int) -> float | None:
    """Host CPUs one copy's model server has: the component's ``resources.cpus`` (at most its share of the host),
    else its share of the instance's vCPUs (all of them for a single-model endpoint)."""
    if spec is None:
        return float(w.resources.cpus) if isinstance(w, InferenceComponentSpec) and w.resources.cpus else None
    share = float(spec.vcpus)
    if isinstance(w, InferenceComponentSpec):
        share = spec.vcpus / max(1, spec.accelerator_count // max(1, accelerators))
        if w.resources.cpus:
            share = min(share, float(w.resources.cpus))
    return share


def batching_limits(w: Any, spec: InstanceSpec | None, params: SimulateParams) -> tuple[int, int]:
    """(token budget per step, most sequences at once) of the model server: ``serving.max_batched_tokens`` where
    set, else vLLM's defaults for the accelerator."""
    b = params.requests.batching_defaults
    large = spec is not None and b.large(spec.accelerator_name, spec.accelerator_memory_gib)
    budget = w.serving.max_batched_tokens or (b.token_budget_large_memory if large else b.token_budget)
    return int(budget), b.max_sequences_large_memory if large else b.max_sequences


def kv_cache_tokens(w: Any, spec: InstanceSpec | None, accelerators: int, params: SimulateParams) -> int | None:
    """Tokens the KV cache of one copy holds: its accelerators' memory x ``gpu_memory_utilization``, less the
    weights and the server's reserve, over the bytes one token takes; None when the model size or the
    accelerator is unknown."""
    size = w.model_size_gb
    per_token = kv_bytes_per_token(w, params)
    if not size or spec is None or accelerators < 1 or not per_token:
        return None
    r = params.requests
    utilization = w.serving.gpu_memory_utilization or r.gpu_memory_utilization.value
    per_device_gb = spec.accelerator_memory_gib * 2**30 / 1e9 * utilization - r.memory_reserve_gb_per_accelerator.value
    free_gb = per_device_gb * accelerators - float(size)
    return max(0, int(free_gb * 1e9 // per_token))


def kv_slots(
    w: Any, spec: InstanceSpec | None, accelerators: int, params: SimulateParams, request_tokens: float | None = None,
) -> tuple[int, str] | None:
    """Requests one copy runs at once when ``serving.max_concurrency`` is not set: what its KV cache holds of
    requests of ``request_tokens`` (prompt and output; default the stated mean request), at most the server's
    batch limit, at least one. With how it was found; None when the KV cache cannot be sized."""
    tokens = kv_cache_tokens(w, spec, accelerators, params)
    if tokens is None or spec is None:
        return None
    mean = request_tokens if request_tokens and request_tokens > 0 else params.requests.default_request_tokens.value
    _, most = batching_limits(w, spec, params)
    slots = max(1, min(most, int(tokens // mean)))
    why = (f"the KV cache of {accelerators} x {spec.accelerator_name} holds {tokens} tokens: {slots} requests of "
           f"{mean:.0f} tokens" + (f" (the server's limit is {most})" if tokens // mean > most else ""))
    return slots, why


def service_rates(
    ep: Any,
    w: Any,
    capacity: float,
    params: SimulateParams,
    profile: Profile | None = None,
    *,
    instance_type: str | None = None,
    accelerators: int | None = None,
    mean_request_tokens: float | None = None,
    mean_context_tokens: float | None = None,
    cpus: float | None = None,
) -> ServiceRates:
    """A copy's rates: measured (the profile, else the config's ``serving.*``) where given, else the roofline.

    Measured rates belong to where they were measured (the profile's instance type and accelerators, else the
    endpoint's); on another instance type or accelerator count they are scaled by the ratio of the two
    rooflines. Slots: the profile's ``max_concurrency``, else ``serving.max_concurrency``, else what the KV cache
    holds of requests of ``mean_request_tokens`` (a trace's mean prompt and output), else ``capacity``.
    ``cpus``: the host CPUs of the copy where they are not the instance's share (a benchmark host).
    """
    where = ep.name + (f" / {w.name}" if hasattr(w, "resources") else "")
    target_type = instance_type or ep.instance_type
    target_acc = accelerators if accelerators is not None else copy_accelerators(ep, w, target_type)
    ref_type = (profile.instance_type if profile and profile.instance_type else None) or ep.instance_type
    ref_acc = (profile.accelerators if profile and profile.accelerators else None) or copy_accelerators(ep, w, ref_type)
    spec, ref_spec = catalog.get(target_type), catalog.get(ref_type)
    size = w.model_size_gb
    kv_bytes = kv_bytes_per_token(w, params)
    cpus = cpus if cpus is not None else copy_cpus(w, spec, target_acc)
    here = roofline_of(spec, target_acc, size, params, cpus=cpus, kv_bytes=kv_bytes) if size else None
    there = roofline_of(ref_spec, ref_acc, size, params, cpus=copy_cpus(w, ref_spec, ref_acc), kv_bytes=kv_bytes) if size else None
    same = (target_type, target_acc) == (ref_type, ref_acc)
    sources: list[str] = []

    def ratio(kind: str) -> float:
        assert here is not None and there is not None
        if kind == "prefill":
            return here.prefill_tokens_per_second / there.prefill_tokens_per_second
        return here.decode_tokens_per_second / there.decode_tokens_per_second

    def measured(value: float | None, kind: str, origin: str) -> float | None:
        if value is None:
            return None
        if same:
            sources.append(f"{kind}: {origin}")
            return value
        if here is None or there is None:
            raise RequestInputError(
                f"{where}: {kind} was measured on {ref_type} ({ref_acc} accelerator(s)) and cannot be carried over to "
                f"{target_type} ({target_acc}): give model_size_gb and a known accelerator, or a profile measured there"
            )
        sources.append(f"{kind}: {origin} on {ref_type}, scaled by the roofline ratio to {target_type}")
        return value * ratio(kind)

    p_prefill = profile.prefill_tokens_per_second if profile else None
    p_decode = profile.decode_tokens_per_second if profile else None
    prefill = measured(p_prefill, "prefill", "profile") if p_prefill is not None else measured(
        w.serving.prefill_tokens_per_second, "prefill", "serving.prefill_tokens_per_second")
    table: tuple[tuple[int, float], ...] = ()
    if isinstance(p_decode, dict):
        points = sorted(p_decode.items())
        scale = 1.0
        if not same:
            first = measured(points[0][1], "decode", "profile table")
            assert first is not None
            scale = first / points[0][1]
        else:
            sources.append("decode: profile table")
        table = tuple((k, v * scale) for k, v in points)
        decode: float | None = table[0][1]
    elif p_decode is not None:
        decode = measured(float(p_decode), "decode", "profile")
    else:
        decode = measured(w.serving.decode_tokens_per_second, "decode", "serving.decode_tokens_per_second")
    if prefill is None or decode is None:
        if here is None:
            missing = "model_size_gb" if not size else (
                f"the accelerator figures of {target_type}" if target_acc else "accelerators per copy")
            raise RequestInputError(
                f"{where}: no token rates: set serving.prefill_tokens_per_second and serving.decode_tokens_per_second "
                f"(or give --profile), or {missing} so they can be estimated from the accelerator"
            )
        if prefill is None:
            prefill = here.prefill_tokens_per_second
            sources.append(f"prefill: roofline of {target_acc} x {target_type} accelerator(s), an estimate")
        if decode is None:
            decode = here.decode_tokens_per_second
            sources.append(f"decode: roofline of {target_acc} x {target_type} accelerator(s), an estimate")
    slowdown = profile.decode_slowdown_per_sequence if profile and profile.decode_slowdown_per_sequence else 0.0
    step, sequence, request = (here.step_overhead_seconds, here.sequence_overhead_seconds, here.request_overhead_seconds) \
        if here is not None else overheads(params, cpus)
    budget, _ = batching_limits(w, spec, params)
    kv_tokens = kv_cache_tokens(w, spec, target_acc, params)
    if profile and profile.max_concurrency:
        slots = profile.max_concurrency
    elif w.serving.max_concurrency is not None:
        slots = max(1, math.floor(w.serving.max_concurrency + 1e-9))
    else:
        found = kv_slots(w, spec, target_acc, params, mean_request_tokens)
        if found is not None:
            slots = found[0]
            sources.append(f"slots: {found[1]}")
        else:
            slots = max(1, math.floor(capacity + 1e-9))
    return ServiceRates(
        slots=slots,
        prefill_tokens_per_second=prefill,
        decode_tokens_per_second=decode,
        decode_slowdown_per_sequence=slowdown,
        decode_table=table,
        sources=tuple(sources),
        token_budget=max(budget, slots),
        step_overhead_seconds=step,
        sequence_overhead_seconds=sequence,
        kv_read_seconds_per_token=here.kv_read_seconds_per_token if here is not None else 0.0,
        request_overhead_seconds=request,
        kv_cache_tokens=kv_tokens,
        mean_context_tokens=mean_context_tokens or 0.0,
    )
