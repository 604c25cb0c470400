"""Scale-out timeline: how long from a traffic spike until new capacity serves, phase by phase.

The model is physical rather than a lookup of measured totals: transfer times come from sizes and the
instance's network bandwidth (shared between an image pull and a model download running at the same
time), image extraction from its own rate, model load from size and accelerator count. So it predicts
other instance types and sizes sensibly, and the published AWS runs it was fitted to are test cases,
not inputs. Every number comes from ``infra/analysis/estimate_params.json``.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from fastscale.infra.analysis.estimate.params import EstimateParams, load_params
from fastscale.infra.base import catalog
from fastscale.infra.base.artifacts import parse_image
from fastscale.infra.model.instance_fit import accelerator_architecture
from fastscale.infra.model.resolved import SCALING_DEFAULTS, ResolvedEndpoint, ResolvedWorkload
from fastscale.infra.rules._common import GIB_PER_GB, WEIGHTS_MAX_SHARE, cheapest_instance_for

#: Phases in timeline order, with the words the human output uses.
PHASE_LABELS: dict[str, str] = {
    "detection": "detection",
    "scaling_decision": "scaling decision",
    "capacity_wait": "no capacity on the first pool",
    "instance_provisioning": "instance provisioning",
    "image_pull": "image pull",
    "model_download": "model download",
    "container_start_model_load": "container start + model load",
    "health_check": "health check",
}

#: Scenarios in the order they are reported, with the words the human output uses.
SCENARIO_LABELS: dict[str, str] = {
    "copy_data_cache": "new copy on a running instance, data caching",
    "copy_no_data_cache": "new copy on a running instance, no data caching",
    "instance_image_cache": "new instance, container image caching",
    "instance_no_image_cache": "new instance, no container image caching",
    "from_zero": "from zero: alarm, instance, copy",
    "capacity_fallback": "capacity fallback: the first pool has no capacity, the next pool serves",
}


#: How a note about a model without a size starts (the CLI and tests find it by this).
MISSING_MODEL_SIZE = "model_size_gb not set"


class EstimateInputError(ValueError):
    """The inputs cannot be estimated (unknown instance type, impossible accelerator count): a user mistake."""


# --------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Phase:
    name: str
    seconds: float
    start: float  # offset from the traffic spike; phases that run in parallel share a start

    @property
    def end(self) -> float:
        return self.start + self.seconds

    @property
    def label(self) -> str:
        return PHASE_LABELS[self.name]


@dataclass(frozen=True)
class Scenario:
    name: str
    phases: tuple[Phase, ...]
    #: Seconds until every copy the spike needs serves, where that is later than the first (scale from zero:
    #: the step policy adds one copy per cooldown). None: the same as the first capacity (``total_seconds``).
    full_capacity: float | None = None

    @property
    def full_capacity_seconds(self) -> float:
        return self.total_seconds if self.full_capacity is None else self.full_capacity

    @property
    def label(self) -> str:
        return SCENARIO_LABELS[self.name]

    @property
    def total_seconds(self) -> float:
        return max((p.end for p in self.phases), default=0.0)

    def phase(self, name: str) -> Phase | None:
        return next((p for p in self.phases if p.name == name), None)

    def seconds_from(self, name: str) -> float:
        """Seconds from the start of phase ``name`` to serving (e.g. what a run timed from its API call sees)."""
        p = self.phase(name)
        if p is None:
            raise KeyError(f"scenario {self.name} has no phase {name}")
        return self.total_seconds - p.start

    def after_decision_seconds(self) -> float:
        """Seconds from SageMaker accepting the new desired count to serving: what measure-scaleout times."""
        decision = self.phase("scaling_decision")
        return self.total_seconds - (decision.end if decision else 0.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "total_seconds": round(self.total_seconds, 1),
            "first_capacity_seconds": round(self.total_seconds, 1),
            "full_capacity_seconds": round(self.full_capacity_seconds, 1),
            "phases": [{"name": p.name, "seconds": round(p.seconds, 1)} for p in self.phases],
        }


@dataclass(frozen=True)
class WorkloadInputs:
    """Everything the timeline depends on, for one single model or one inference component."""

    instance_type: str
    family: str
    network_gbps: float
    accelerators: int  # devices the model is loaded onto
    model_size_gb: float
    image_size_gb: float
    metric: str | None  # high_resolution | invocations; None when auto scaling is disabled
    image_cacheable: bool  # accelerator instance type and an Amazon ECR image
    data_cache: bool | None = None  # inference components only; None for a single-model endpoint
    scale_from_zero: tuple[int, int] | None = None  # (alarm period s, evaluation periods) when copies.min is 0
    fast_model_loader: bool = False  # weights streamed from S3 to the accelerators while they download
    percentile: str = "p50"  # p50 | p90: which cold-start values the timeline uses
    #: Scale from zero: copies the step policy adds one at a time to reach full capacity, and the seconds
    #: between two steps (the step cooldown, at least the alarm's one-minute re-invocation).
    copies_to_full: int = 1
    step_interval_seconds: float = 0.0  # only read when copies_to_full > 1


@dataclass(frozen=True)
class WorkloadEstimate:
    endpoint: str
    component: str | None
    instance_type: str
    inputs: WorkloadInputs | None
    scenarios: tuple[Scenario, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: The same scenarios on the P90 cold-start values (empty where nothing could be estimated).
    scenarios_p90: tuple[Scenario, ...] = ()
    #: What the estimate does not know (e.g. the model size), so its times are a lower bound.
    missing: tuple[str, ...] = ()

    def scenario(self, name: str) -> Scenario | None:
        return next((s for s in self.scenarios if s.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "component": self.component,
            "instance_type": self.instance_type,
            "inputs": asdict(self.inputs) if self.inputs else None,
            "notes": list(self.notes),
            "missing": list(self.missing),
            "scenarios": [s.to_dict() for s in self.scenarios],
            "scenarios_p90": [s.to_dict() for s in self.scenarios_p90],
        }


# --------------------------------------------------------------------------------------------- physics


def link_gb_per_s(network_gbps: float, params: EstimateParams) -> float:
    """What the instance's link carries (GB/s): the catalog's figure at TCP goodput."""
    return network_gbps / 8 * params.network.link_efficiency.value


def bandwidth_gb_per_s(network_gbps: float, params: EstimateParams, percentile: str = "p50") -> float:
    """Throughput of a model download from Amazon S3 alone: the link, or the S3 connections' limit (the lower)."""
    return min(link_gb_per_s(network_gbps, params), params.network.s3_download_gb_per_second.at(percentile))


def fetch_gb_per_s(network_gbps: float, params: EstimateParams, percentile: str = "p50") -> float:
    """Throughput an image pull and a model download share while both run."""
    return min(link_gb_per_s(network_gbps, params), params.network.concurrent_fetch_gb_per_second.at(percentile))


def shared_transfers(image_gb: float, model_gb: float, bandwidth: float) -> tuple[float, float]:
    """(image transfer s, model download s) when both start together and share ``bandwidth`` fairly.

    While both run each gets half; when the smaller one is done the other has the whole link. The link is
    busy throughout, so the larger one ends when all bytes are through.
    """
    both = (image_gb + model_gb) / bandwidth
    smaller = 2 * min(image_gb, model_gb) / bandwidth
    if image_gb <= model_gb:
        return smaller, both
    return both, smaller


def uncached_fetch(
    image_gb: float, model_gb: float, network_gbps: float, params: EstimateParams, percentile: str = "p50"
) -> tuple[float, float]:
    """(image pull s, model download s) when the image comes from ECR while the model comes from S3."""
    image_transfer, model_download = shared_transfers(image_gb, model_gb, fetch_gb_per_s(network_gbps, params, percentile))
    extraction = image_gb / params.image.extraction_gb_per_second.at(percentile)
    return image_transfer + extraction, model_download


def weights_load_seconds(model_gb: float, accelerators: int, params: EstimateParams, percentile: str = "p50") -> float:
    """Reading the weights into accelerator memory, shards in parallel."""
    return model_gb / (params.startup.load_gb_per_second_per_accelerator.at(percentile) * max(1, accelerators))


def load_seconds(
    model_gb: float, accelerators: int, params: EstimateParams, percentile: str = "p50", *, streamed: bool = False
) -> float:
    """Container start and model load: fixed start, weights loaded in parallel shards (unless streamed while
    they download, with Fast Model Loader), tensor-parallel set-up."""
    s = params.startup
    devices = max(1, accelerators)
    weights = 0.0 if streamed else weights_load_seconds(model_gb, devices, params, percentile)
    return (
        s.container_start_seconds.at(percentile)
        + weights
        + (devices - 1) * s.tensor_parallel_setup_seconds_per_extra_accelerator.at(percentile)
    )


def detection_seconds(metric: str, params: EstimateParams) -> float:
    """Target tracking: the metric's period times the breaching datapoints it needs, plus publishing lag."""
    d = params.detection.for_metric(metric)
    return d.period_seconds.value * d.datapoints.value + params.detection.publishing_lag_seconds.value


def alarm_detection_seconds(period: int, evaluation_periods: int, params: EstimateParams) -> float:
    """Scale from zero: the NoCapacityInvocationFailures alarm must breach for all its evaluation periods."""
    return period * evaluation_periods + params.detection.publishing_lag_seconds.value


class PhaseBuilder:
    """Builds a phase list: sequential steps, and steps that run side by side (image pull || model download)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.phases: list[Phase] = []

    def then(self, name: str, seconds: float) -> None:
        self.phases.append(Phase(name, seconds, self.now))
        self.now += seconds

    def together(self, *steps: tuple[str, float]) -> None:
        for name, seconds in steps:
            self.phases.append(Phase(name, seconds, self.now))
        self.now += max(seconds for _, seconds in steps)


def scenarios(inputs: WorkloadInputs, params: EstimateParams | None = None) -> tuple[Scenario, ...]:
    """Every scenario that applies to the workload, in report order."""
    params = params or load_params()
    pct = inputs.percentile
    bandwidth = bandwidth_gb_per_s(inputs.network_gbps, params, pct)
    image, model = inputs.image_size_gb, inputs.model_size_gb
    # Image from the cache (pull 0) with the model download alone, or both over the network at once.
    cached = (0.0, model / bandwidth)
    uncached = uncached_fetch(image, model, inputs.network_gbps, params, pct)
    fetch_on_new_instance = cached if inputs.image_cacheable else uncached
    target_tracking = detection_seconds(inputs.metric, params) if inputs.metric else None
    streamed = inputs.fast_model_loader
    weights = weights_load_seconds(model, inputs.accelerators, params, pct)

    def build(name: str, detection: float | None, provisioning: bool, fetch: tuple[float, float]) -> Scenario:
        t = PhaseBuilder()
        if detection is not None:
            t.then("detection", detection)
            t.then("scaling_decision", params.scaling_decision_seconds.value)
        if provisioning:
            t.then("instance_provisioning", params.provisioning_seconds.seconds(inputs.family, pct))
        download = fetch[1]
        if streamed and download > 0:
            # Fast Model Loader: the weights go to the accelerators as they arrive, so the download and the
            # load overlap and the longer of the two counts.
            download = max(download, weights)
        t.together(("image_pull", fetch[0]), ("model_download", download))
        t.then("container_start_model_load", load_seconds(model, inputs.accelerators, params, pct, streamed=streamed and fetch[1] > 0))
        t.then("health_check", params.startup.health_check_seconds.value)
        return Scenario(name, tuple(t.phases))

    out: list[Scenario] = []
    if inputs.data_cache is not None:
        if inputs.data_cache:
            # Image and model are already on the instance: loading from its local cache is the load phase.
            out.append(build("copy_data_cache", target_tracking, False, (0.0, 0.0)))
        out.append(build("copy_no_data_cache", target_tracking, False, fetch_on_new_instance))
    if inputs.image_cacheable:
        out.append(build("instance_image_cache", target_tracking, True, cached))
    # Always shown: it is also what a cache miss falls back to.
    out.append(build("instance_no_image_cache", target_tracking, True, uncached))
    if inputs.scale_from_zero is not None:
        period, evaluations = inputs.scale_from_zero
        first = build("from_zero", alarm_detection_seconds(period, evaluations, params), True, fetch_on_new_instance)
        # The step policy adds one copy per interval while the alarm stays in ALARM (requests keep failing
        # until the first copy serves); the later copies start in parallel, one interval apart.
        full = first.total_seconds + (inputs.copies_to_full - 1) * inputs.step_interval_seconds
        out.append(dataclasses.replace(first, full_capacity=full if inputs.copies_to_full > 1 else None))
    return tuple(out)


# --------------------------------------------------------------------------------------------- inputs


def image_is_ecr(image: str) -> bool:
    return parse_image(image).is_ecr


def _unknown_type_reason(instance_type: str) -> str:
    if catalog.is_known_instance_type(instance_type):
        return (
            f"{instance_type} has no accelerator; the catalog holds network bandwidth for GPU, Inferentia and "
            "Trainium types only, so no timeline can be computed"
        )
    hint = catalog.suggest(instance_type)
    return f"unknown instance type {instance_type!r}" + (f" (did you mean {', '.join(hint)}?)" if hint else "")


def workload_inputs(
    ep: ResolvedEndpoint, workload: ResolvedWorkload, params: EstimateParams
) -> tuple[WorkloadInputs | None, list[str]]:
    """The inputs for one single model or component of a config, or None and the reason it cannot be estimated."""
    spec = catalog.get(ep.instance_type)
    if spec is None:
        return None, [f"not estimated: {_unknown_type_reason(ep.instance_type)}"]
    notes: list[str] = []
    model_gb = workload.model_size_gb
    if model_gb is None:
        # A model from the Hugging Face Hub (or any without a size) is still estimated: provisioning, image
        # pull, start and health check are known; the download and the weight load are not.
        model_gb = 0.0
        notes.append(
            f"{MISSING_MODEL_SIZE}: the model download and weight load are not counted, so every time is a lower "
            "bound; set model_size_gb (GB of weights) to include them"
        )
    image_gb = workload.image_size_gb
    if image_gb is None:
        image_gb = params.image.default_size_gb.value
        notes.append(f"image_size_gb not set: assumed {image_gb:g} GB (compressed)")
    ecr = image_is_ecr(workload.image)
    if not ecr:
        notes.append("container image caching does not apply: the image is not in Amazon ECR")
    component = workload.is_component
    if workload.resources is not None:
        accelerators = workload.resources.accelerators or 1
    else:
        accelerators = spec.accelerator_count
    scaling = workload.scaling
    if not scaling.enabled:
        notes.append("auto scaling is disabled: capacity changes only when you change it, so there is no detection phase")
    zero = None
    copies_to_full, interval = 1, params.alarm_reinvoke_seconds.value
    if component and scaling.scale_from_zero is not None:  # copies.min 0 with auto scaling on
        zero = (scaling.scale_from_zero.period, scaling.scale_from_zero.evaluation_periods)
        per_instance = max(1, spec.accelerator_count // accelerators)
        copies_to_full = max(1, min(scaling.count.max, ep.instances.max * per_instance))
        # An alarm in ALARM invokes its policy once a minute: a shorter step cooldown adds copies no faster.
        interval = float(max(scaling.scale_from_zero.cooldown, params.alarm_reinvoke_seconds.value))
    return (
        WorkloadInputs(
            instance_type=spec.instance_type,
            family=spec.family,
            network_gbps=spec.network_gbps,
            accelerators=accelerators,
            model_size_gb=model_gb,
            image_size_gb=image_gb,
            metric=scaling.metric_setting if scaling.enabled else None,
            image_cacheable=ecr,  # `spec` exists, so the type has an accelerator
            data_cache=workload.data_cache if component else None,
            scale_from_zero=zero,
            fast_model_loader=workload.serving.fast_model_loader,
            copies_to_full=copies_to_full,
            step_interval_seconds=interval,
        ),
        notes,
    )


def what_if(
    instance_type: str,
    model_size_gb: float,
    image_size_gb: float | None = None,
    *,
    accelerators: int | None = None,
    metric: str | None = None,
    data_cache: bool = True,
    params: EstimateParams | None = None,
) -> WorkloadEstimate:
    """A quick estimate without a config: an inference component on ``instance_type`` with an ECR image.

    Unset options take the config's defaults (high-resolution metric, the scale-from-zero alarm settings),
    so a what-if matches what the same workload would get from a config file.
    """
    params = params or load_params()
    spec = catalog.get(instance_type)
    if spec is None:
        raise EstimateInputError(_unknown_type_reason(instance_type))
    if accelerators is not None and accelerators > spec.accelerator_count:
        raise EstimateInputError(
            f"{instance_type} has {spec.accelerator_count} accelerator(s); a copy cannot use {accelerators}"
        )
    _check_fits(spec, model_size_gb, accelerators or spec.accelerator_count)
    notes = []
    if image_size_gb is None:
        image_size_gb = params.image.default_size_gb.value
        notes.append(f"image size not given: assumed {image_size_gb:g} GB (compressed)")
    inputs = WorkloadInputs(
        instance_type=spec.instance_type,
        family=spec.family,
        network_gbps=spec.network_gbps,
        accelerators=accelerators or spec.accelerator_count,
        model_size_gb=model_size_gb,
        image_size_gb=image_size_gb,
        metric=metric or SCALING_DEFAULTS.metric_setting,
        image_cacheable=True,  # an accelerator type, and a what-if assumes the image is in ECR
        data_cache=data_cache,
        scale_from_zero=(SCALING_DEFAULTS.scale_from_zero_period, SCALING_DEFAULTS.scale_from_zero_evaluation_periods),
    )
    slow = dataclasses.replace(inputs, percentile="p90")
    return WorkloadEstimate(
        "what-if", None, spec.instance_type, inputs, scenarios(inputs, params), tuple(notes), scenarios(slow, params)
    )


def _check_fits(spec: Any, model_size_gb: float, accelerators: int) -> None:
    """Refuse weights that cannot load into the accelerator memory a copy gets, with the fix."""
    weights_gib = model_size_gb * GIB_PER_GB
    available = accelerators * spec.accelerator_memory_gib
    if weights_gib <= available:
        return
    need = math.ceil(weights_gib / WEIGHTS_MAX_SHARE / spec.accelerator_memory_gib)
    if need <= spec.accelerator_count:
        fix = f"give the copy {need} accelerators (--accelerators {need})"
    else:
        bigger = cheapest_instance_for(weights_gib, accelerator_architecture(spec))
        fix = f"choose a type with more accelerator memory{f' such as {bigger}' if bigger else ''}"
    raise EstimateInputError(
        f"{model_size_gb:g} GB of weights do not fit the {available:g} GiB of accelerator memory a copy gets on "
        f"{spec.instance_type} ({accelerators} x {spec.accelerator_memory_gib:g} GiB): the model cannot load; {fix}"
    )
