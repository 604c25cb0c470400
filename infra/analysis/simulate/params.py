"""The simulation's own parameters, read from ``infra/analysis/simulate_params.json``.

Everything a new copy or instance goes through (detection periods, publishing lag, the scaling decision,
provisioning, image pull, model download, start-up) comes from the estimate parameters instead, so the
simulation and ``fastscale estimate`` cannot disagree about a timeline.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from fastscale.infra.analysis.estimate.params import Param, ParamsError

PARAMS_FILE = "simulate_params.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScaleIn(_Strict):
    period_seconds: Param
    datapoints: Param
    threshold_fraction: Param


class CapacityDefaults(_Strict):
    default_target_fraction: Param


class DefaultTraffic(_Strict):
    spike_at_seconds: Param
    spike_peak_fraction_of_max: Param
    spike_hold_seconds: Param
    window_seconds: Param


class AcceleratorRates(_Strict):
    memory_bandwidth_gb_per_s: Param
    fp16_tflops: Param


class KvCacheDefaults(_Strict):
    """KV-cache bytes per token by model size, when the config gives no model shape: ``bytes_per_token[i]`` for
    models of at most ``up_to_gb[i]`` GB (the last bound null: every larger model)."""

    source: str
    up_to_gb: list[float | None]
    bytes_per_token: list[int]

    def bytes_for(self, model_size_gb: float) -> int:
        for bound, value in zip(self.up_to_gb, self.bytes_per_token, strict=True):
            if bound is None or model_size_gb <= bound:
                return value
        return self.bytes_per_token[-1]


class BatchingDefaults(_Strict):
    """The model server's per-step limits when the config sets none (vLLM's defaults by accelerator memory)."""

    source: str
    large_memory_gib: float
    large_memory_excludes: list[str]
    token_budget: int
    token_budget_large_memory: int
    max_sequences: int
    max_sequences_large_memory: int

    def large(self, accelerator_name: str, memory_gib: float) -> bool:
        return memory_gib >= self.large_memory_gib and accelerator_name not in self.large_memory_excludes


class RequestParams(_Strict):
    """The request-level model's defaults: the invocation timeout, the continuous-batching step model (roofline
    efficiencies and the model server's CPU overheads, fitted on published benchmarks), the KV-cache capacity,
    and the figures per accelerator a copy's speed comes from when nothing measured is given."""

    invocation_timeout_seconds: Param
    decode_bandwidth_efficiency: Param
    prefill_compute_efficiency: Param
    tensor_parallel_efficiency: Param
    step_overhead_seconds: Param
    step_overhead_cpu_seconds: Param
    sequence_overhead_seconds: Param
    request_overhead_seconds: Param
    request_overhead_cpu_seconds: Param
    gpu_memory_utilization: Param
    memory_reserve_gb_per_accelerator: Param
    default_request_tokens: Param
    kv_cache_bytes_by_model_size: KvCacheDefaults
    batching_defaults: BatchingDefaults
    accelerators: dict[str, AcceleratorRates]

    def figures(self, accelerator_name: str, memory_gib: float) -> AcceleratorRates | None:
        """The accelerator's figures: an entry for its memory size first (``NVIDIA A100 80GB``), else its name."""
        return self.accelerators.get(f"{accelerator_name} {memory_gib:g}GB") or self.accelerators.get(accelerator_name)


class SimulateParams(_Strict):
    description: str
    sources: dict[str, str]
    derivation: list[str]
    alarm_reinvoke_seconds: Param
    scale_in: ScaleIn
    capacity: CapacityDefaults
    default_service_time_seconds: Param
    default_traffic: DefaultTraffic
    requests: RequestParams


def parse_params(text: str, source: str = PARAMS_FILE) -> SimulateParams:
    try:
        params = SimulateParams.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ParamsError(f"{source} is malformed: {exc}") from None
    for name, p in (
        ("alarm_reinvoke_seconds", params.alarm_reinvoke_seconds),
        ("scale_in.period_seconds", params.scale_in.period_seconds),
        ("scale_in.datapoints", params.scale_in.datapoints),
        ("default_service_time_seconds", params.default_service_time_seconds),
        ("default_traffic.window_seconds", params.default_traffic.window_seconds),
    ):
        if p.value <= 0:
            raise ParamsError(f"{source}: {name} must be positive")
    r = params.requests
    for name, p in (
        ("requests.invocation_timeout_seconds", r.invocation_timeout_seconds),
        ("requests.decode_bandwidth_efficiency", r.decode_bandwidth_efficiency),
        ("requests.prefill_compute_efficiency", r.prefill_compute_efficiency),
        ("requests.tensor_parallel_efficiency", r.tensor_parallel_efficiency),
        ("requests.gpu_memory_utilization", r.gpu_memory_utilization),
        ("requests.default_request_tokens", r.default_request_tokens),
    ):
        if p.value <= 0:
            raise ParamsError(f"{source}: {name} must be positive")
    for name, p in (
        ("requests.decode_bandwidth_efficiency", r.decode_bandwidth_efficiency),
        ("requests.prefill_compute_efficiency", r.prefill_compute_efficiency),
        ("requests.gpu_memory_utilization", r.gpu_memory_utilization),
    ):
        if p.value > 1:
            raise ParamsError(f"{source}: {name} is a fraction and cannot exceed 1")
    kv = r.kv_cache_bytes_by_model_size
    if not kv.up_to_gb or len(kv.up_to_gb) != len(kv.bytes_per_token) or kv.up_to_gb[-1] is not None:
        raise ParamsError(f"{source}: requests.kv_cache_bytes_by_model_size needs one value per bound, the last bound null")
    b = r.batching_defaults
    if min(b.token_budget, b.token_budget_large_memory, b.max_sequences, b.max_sequences_large_memory) < 1:
        raise ParamsError(f"{source}: requests.batching_defaults must be positive")
    if not 0 < params.capacity.default_target_fraction.value <= 1:
        raise ParamsError(f"{source}: capacity.default_target_fraction must be in (0, 1]")
    if not 0 < params.scale_in.threshold_fraction.value <= 1:
        raise ParamsError(f"{source}: scale_in.threshold_fraction must be in (0, 1]")
    return params


def load_params(path: str | Path | None = None) -> SimulateParams:
    """The packaged parameters, or those of ``path``."""
    if path is None:
        return _packaged()
    return parse_params(Path(path).read_text(encoding="utf-8"), str(path))


@functools.cache
def _packaged() -> SimulateParams:
    try:
        text = resources.files("fastscale.infra.analysis").joinpath(PARAMS_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParamsError(f"{PARAMS_FILE} is missing from the installed package") from None
    return parse_params(text)
