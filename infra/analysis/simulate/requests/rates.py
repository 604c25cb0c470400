"""How fast one copy serves requests: prefill and decode token rates, and the slots it runs at once.

Measured rates come first (a profile, ``--profile FILE``, else the config's ``serving.*``); what is not measured
is estimated from the accelerator's roofline (memory bandwidth for decode, compute for prefill). Rates measured
on one instance type are carried to another by the ratio of the two rooflines, which is how ``recommend``
compares instance types. :mod:`~fastscale.infra.analysis.simulate.requests.replay` serves a trace at these rates.
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
    """How fast one copy serves requests."""

    slots: int  # requests holding a slot at once (max_concurrency)
    prefill_tokens_per_second: float
    decode_tokens_per_second: float  # one sequence alone
    decode_slowdown_per_sequence: float
    decode_table: tuple[tuple[int, float], ...] = ()  # measured (sequences, per-sequence rate), overrides the slowdown
    sources: tuple[str, ...] = ()

    def per_sequence_decode(self, k: int) -> float:
        """Tokens per second each of ``k`` sequences on the copy decodes."""
        if self.decode_table:
            points = self.decode_table
            if k <= points[0][0]:
                return points[0][1]
            for (k0, r0), (k1, r1) in zip(points, points[1:], strict=False):
                if k <= k1:
                    return r0 + (r1 - r0) * (k - k0) / (k1 - k0)
            last_k, last_r = points[-1]
            return last_r * last_k / k  # beyond the table: the copy's throughput stays at its last measured value
        return self.decode_tokens_per_second / (1 + self.decode_slowdown_per_sequence * (k - 1))

    def to_dict(self) -> dict[str, Any]:
        return {
            "slots": self.slots,
            "prefill_tokens_per_second": round(self.prefill_tokens_per_second, 1),
            "decode_tokens_per_second": round(self.decode_tokens_per_second, 2),
            "decode_tokens_per_second_at_slots": round(self.per_sequence_decode(self.slots), 2),
            "decode_slowdown_per_sequence": self.decode_slowdown_per_sequence if not self.decode_table else None,
            "sources": list(self.sources),
        }


def roofline(instance_type: str, accelerators: int, model_size_gb: float, params: SimulateParams) -> tuple[float, float] | None:
    """(prefill tokens/s, decode tokens/s of one sequence alone) of one copy from the accelerator's figures;
    None when the catalog or the parameters do not know the accelerator."""
    spec = catalog.get(instance_type)
    if spec is None or model_size_gb <= 0 or accelerators < 1:
        return None
    figures = params.requests.accelerators.get(spec.accelerator_name)
    if figures is None:
        return None
    r = params.requests
    devices = accelerators * (1.0 if accelerators == 1 else r.tensor_parallel_efficiency.value)
    decode = r.decode_bandwidth_efficiency.value * figures.memory_bandwidth_gb_per_s.value * devices / model_size_gb
    prefill = r.prefill_compute_efficiency.value * figures.fp16_tflops.value * 1000 * devices / model_size_gb
    return prefill, decode


def copy_accelerators(ep: Any, w: Any, instance_type: str | None = None) -> int:
    """Accelerators one copy runs on: the component's reservation, or every accelerator of a single-model
    endpoint's instance."""
    if isinstance(w, InferenceComponentSpec):
        return int(w.resources.accelerators or 0)
    spec = catalog.get(instance_type or ep.instance_type)
    return spec.accelerator_count if spec is not None else 0


def service_rates(
    ep: Any,
    w: Any,
    capacity: float,
    params: SimulateParams,
    profile: Profile | None = None,
    *,
    instance_type: str | None = None,
    accelerators: int | None = None,
) -> ServiceRates:
    """A copy's rates: measured (the profile, else the config's ``serving.*``) where given, else the roofline.

    Measured rates belong to where they were measured (the profile's instance type and accelerators, else the
    endpoint's); on another instance type or accelerator count they are scaled by the ratio of the two
    rooflines. ``capacity`` is the copy's slots when the profile does not give them.
    """
    where = ep.name + (f" / {w.name}" if hasattr(w, "resources") else "")
    target_type = instance_type or ep.instance_type
    target_acc = accelerators if accelerators is not None else copy_accelerators(ep, w, target_type)
    ref_type = (profile.instance_type if profile and profile.instance_type else None) or ep.instance_type
    ref_acc = (profile.accelerators if profile and profile.accelerators else None) or copy_accelerators(ep, w, ref_type)
    size = w.model_size_gb
    here = roofline(target_type, target_acc, size, params) if size else None
    there = roofline(ref_type, ref_acc, size, params) if size else None
    same = (target_type, target_acc) == (ref_type, ref_acc)
    sources: list[str] = []

    def measured(value: float | None, kind: int, what: str, origin: str) -> float | None:
        if value is None:
            return None
        if same:
            sources.append(f"{what}: {origin}")
            return value
        if here is None or there is None:
            raise RequestInputError(
                f"{where}: {what} was measured on {ref_type} ({ref_acc} accelerator(s)) and cannot be carried over to "
                f"{target_type} ({target_acc}): give model_size_gb and a known accelerator, or a profile measured there"
            )
        sources.append(f"{what}: {origin} on {ref_type}, scaled by the roofline ratio to {target_type}")
        return value * here[kind] / there[kind]

    p_prefill = profile.prefill_tokens_per_second if profile else None
    p_decode = profile.decode_tokens_per_second if profile else None
    prefill = measured(p_prefill, 0, "prefill", "profile") if p_prefill is not None else measured(
        w.serving.prefill_tokens_per_second, 0, "prefill", "serving.prefill_tokens_per_second")
    table: tuple[tuple[int, float], ...] = ()
    if isinstance(p_decode, dict):
        points = sorted(p_decode.items())
        scale = 1.0
        if not same:
            first = measured(points[0][1], 1, "decode", "profile table")
            assert first is not None
            scale = first / points[0][1]
        else:
            sources.append("decode: profile table")
        table = tuple((k, v * scale) for k, v in points)
        decode: float | None = table[0][1]
    elif p_decode is not None:
        decode = measured(float(p_decode), 1, "decode", "profile")
    else:
        decode = measured(w.serving.decode_tokens_per_second, 1, "decode", "serving.decode_tokens_per_second")
    if prefill is None or decode is None:
        if here is None:
            missing = "model_size_gb" if not size else (
                f"the accelerator figures of {target_type}" if target_acc else "accelerators per copy")
            raise RequestInputError(
                f"{where}: no token rates: set serving.prefill_tokens_per_second and serving.decode_tokens_per_second "
                f"(or give --profile), or {missing} so they can be estimated from the accelerator"
            )
        if prefill is None:
            prefill = here[0]
            sources.append(f"prefill: roofline of {target_acc} x {target_type} accelerator(s), an estimate")
        if decode is None:
            decode = here[1]
            sources.append(f"decode: roofline of {target_acc} x {target_type} accelerator(s), an estimate")
    slowdown = params.requests.decode_slowdown_per_sequence.value
    if profile and profile.decode_slowdown_per_sequence is not None:
        slowdown = profile.decode_slowdown_per_sequence
    slots = profile.max_concurrency if profile and profile.max_concurrency else max(1, math.floor(capacity + 1e-9))
    return ServiceRates(slots, prefill, decode, slowdown, table, tuple(sources))
