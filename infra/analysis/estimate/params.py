"""The parameters of the scale-out and cost model, read from ``infra/analysis/estimate_params.json``.

Each number carries its unit and where it comes from (an AWS figure, the catalog, a fit to a published run,
or a stated assumption), so anyone can check or refresh it without reading the model's code.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

PARAMS_FILE = "estimate_params.json"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Param(_Strict):
    value: float = Field(..., ge=0)
    p90: float | None = Field(None, ge=0)  # the slower value to plan for, where the data gives a spread
    unit: str = Field(..., min_length=1)
    source: str = Field(..., min_length=1)

    def at(self, percentile: str = "p50") -> float:
        """The P50 value, or the P90 one where it is given (a parameter without a spread has one value)."""
        if percentile == "p90" and self.p90 is not None:
            return self.p90
        return self.value


class MetricDetection(_Strict):
    period_seconds: Param
    datapoints: Param


class Detection(_Strict):
    high_resolution: MetricDetection
    invocations: MetricDetection
    publishing_lag_seconds: Param

    def for_metric(self, metric: str) -> MetricDetection:
        detection: MetricDetection = getattr(self, metric)
        return detection


class Provisioning(_Strict):
    default: Param
    by_family: dict[str, Param] = Field(default_factory=dict)

    def seconds(self, family: str, percentile: str = "p50") -> float:
        return self.by_family.get(family, self.default).at(percentile)


class Network(_Strict):
    link_efficiency: Param
    s3_download_gb_per_second: Param
    concurrent_fetch_gb_per_second: Param


class Image(_Strict):
    extraction_gb_per_second: Param
    default_size_gb: Param


class Startup(_Strict):
    container_start_seconds: Param
    load_gb_per_second_per_accelerator: Param
    tensor_parallel_setup_seconds_per_extra_accelerator: Param
    health_check_seconds: Param


class CapacityFallback(_Strict):
    insufficient_capacity_seconds: Param


class ScaleIn(_Strict):
    detection_seconds: Param
    default_cooldown_minutes: Param
    scale_downs_per_day: Param


class Cost(_Strict):
    hours_per_month: Param
    default_hours_at_max_per_day: Param


class EstimateParams(_Strict):
    description: str
    sources: dict[str, str]
    derivation: list[str]
    detection: Detection
    alarm_reinvoke_seconds: Param
    scaling_decision_seconds: Param
    provisioning_seconds: Provisioning
    network: Network
    image: Image
    startup: Startup
    capacity_fallback: CapacityFallback
    scale_in: ScaleIn
    cost: Cost


class ParamsError(RuntimeError):
    """The parameters file is missing or malformed: a defect in fastscale, not in the user's config."""


def parse_params(text: str, source: str = PARAMS_FILE) -> EstimateParams:
    try:
        params = EstimateParams.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ParamsError(f"{source} is malformed: {exc}") from None
    # Rates divide sizes: a zero would turn an estimate into an infinity instead of an error here.
    for name, p in (
        ("network.link_efficiency", params.network.link_efficiency),
        ("network.s3_download_gb_per_second", params.network.s3_download_gb_per_second),
        ("network.concurrent_fetch_gb_per_second", params.network.concurrent_fetch_gb_per_second),
        ("image.extraction_gb_per_second", params.image.extraction_gb_per_second),
        ("startup.load_gb_per_second_per_accelerator", params.startup.load_gb_per_second_per_accelerator),
        ("cost.hours_per_month", params.cost.hours_per_month),
    ):
        if p.value <= 0 or (p.p90 is not None and p.p90 <= 0):
            raise ParamsError(f"{source}: {name} must be positive")
    if params.network.link_efficiency.value > 1:
        raise ParamsError(f"{source}: network.link_efficiency is a fraction of the link and cannot exceed 1")
    return params


def load_params(path: str | Path | None = None) -> EstimateParams:
    """The packaged parameters, or those of ``path`` (to try other values without editing the package)."""
    if path is None:
        return _packaged()
    return parse_params(Path(path).read_text(encoding="utf-8"), str(path))


@functools.cache
def _packaged() -> EstimateParams:
    try:
        text = resources.files("fastscale.infra.analysis").joinpath(PARAMS_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ParamsError(f"{PARAMS_FILE} is missing from the installed package") from None
    return parse_params(text)
