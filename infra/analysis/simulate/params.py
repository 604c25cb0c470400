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


class RequestParams(_Strict):
    """The request-level model's defaults: the invocation timeout, how decoding slows with more sequences on
    a copy, and the roofline figures a copy's token rates come from when nothing measured is given."""

    invocation_timeout_seconds: Param
    decode_slowdown_per_sequence: Param
    decode_bandwidth_efficiency: Param
    prefill_compute_efficiency: Param
    tensor_parallel_efficiency: Param
    accelerators: dict[str, AcceleratorRates]


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
    ):
        if p.value <= 0:
            raise ParamsError(f"{source}: {name} must be positive")
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
