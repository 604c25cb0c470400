"""Scale-out timeline: how long from a traffic spike until new capacity serves, phase by phase.

The model is physical rather than a lookup of measured totals: transfer times come from sizes and the
instance's network bandwidth (shared between an image pull and a model download running at the same
time), image extraction from its own rate, model load from size and accelerator count. So it predicts
other instance types and sizes sensibly, and the published AWS runs it was fitted to are test cases,
not inputs. Every number comes from ``infra/estimate_params.json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from fastscale.infra.config import Autoscaling, EndpointSpec, FastscaleConfig, InferenceComponentSpec, ScaleFromZero
from fastscale.infra.estimate.params import EstimateParams, load_params

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


@dataclass(frozen=True)
class WorkloadEstimate:
    endpoint: str
    component: str | None
    instance_type: str
    inputs: WorkloadInputs | None
    scenarios: tuple[Scenario, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)

    def scenario(self, name: str) -> Scenario | None:
        return next((s for s in self.scenarios if s.name == name), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "component": self.component,
            "instance_type": self.instance_type,
            "inputs": asdict(self.inputs) if self.inputs else None,
            "notes": list(self.notes),
            "scenarios": [s.to_dict() for s in self.scenarios],
        }


# --------------------------------------------------------------------------------------------- physics


def bandwidth_gb_per_s(network_gbps: float, params: EstimateParams) -> float:
    """Throughput a transfer from ECR or S3 actually reaches on a link of ``network_gbps``."""
    return network_gbps / 8 * params.network.efficiency.value


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


def uncached_fetch(image_gb: float, model_gb: float, bandwidth: float, params: EstimateParams) -> tuple[float, float]:
    """(image pull s, model download s) when the image comes from ECR while the model comes from S3."""
    image_transfer, model_download = shared_transfers(image_gb, model_gb, bandwidth)
    extraction = image_gb / params.image.extraction_gb_per_second.value
    return image_transfer + extraction, model_download


def load_seconds(model_gb: float, accelerators: int, params: EstimateParams) -> float:
    """Container start and model load: fixed start, weights loaded in parallel shards, tensor-parallel set-up."""
    s = params.startup
    devices = max(1, accelerators)
    return (
        s.container_start_seconds.value
        + model_gb / (s.load_gb_per_second_per_accelerator.value * devices)
        + (devices - 1) * s.tensor_parallel_setup_seconds_per_extra_accelerator.value
    )


def detection_seconds(metric: str, params: EstimateParams) -> float:
    """Target tracking: the metric's period times the breaching datapoints it needs, plus publishing lag."""
    d = params.detection.for_metric(metric)
    return d.period_seconds.value * d.datapoints.value + params.detection.publishing_lag_seconds.value


def alarm_detection_seconds(period: int, evaluation_periods: int, params: EstimateParams) -> float:
    """Scale from zero: the NoCapacityInvocationFailures alarm must breach for all its evaluation periods."""
    return period * evaluation_periods + params.detection.publishing_lag_seconds.value


class _Timeline:
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
    bandwidth = bandwidth_gb_per_s(inputs.network_gbps, params)
    image, model = inputs.image_size_gb, inputs.model_size_gb
    # Image from the cache (pull 0) with the model download alone on the link, or both over the network.
    cached = (0.0, model / bandwidth)
    uncached = uncached_fetch(image, model, bandwidth, params)
    fetch_on_new_instance = cached if inputs.image_cacheable else uncached
    target_tracking = detection_seconds(inputs.metric, params) if inputs.metric else None

    def build(name: str, detection: float | None, provisioning: bool, fetch: tuple[float, float]) -> Scenario:
        t = _Timeline()
        if detection is not None:
            t.then("detection", detection)
            t.then("scaling_decision", params.scaling_decision_seconds.value)
        if provisioning:
            t.then("instance_provisioning", params.provisioning_seconds.seconds(inputs.family))
        t.together(("image_pull", fetch[0]), ("model_download", fetch[1]))
        t.then("container_start_model_load", load_seconds(model, inputs.accelerators, params))
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
        out.append(build("from_zero", alarm_detection_seconds(period, evaluations, params), True, fetch_on_new_instance))
    return tuple(out)


# --------------------------------------------------------------------------------------------- inputs


def _image_is_ecr(image: str) -> bool:
    from fastscale.infra.artifacts import parse_image

    return parse_image(image).is_ecr


def _unknown_type_reason(instance_type: str) -> str:
    from fastscale.infra import catalog

    if catalog.is_known_instance_type(instance_type):
        return (
            f"{instance_type} has no accelerator; the catalog holds network bandwidth for GPU, Inferentia and "
            "Trainium types only, so no timeline can be computed"
        )
    hint = catalog.suggest(instance_type)
    return f"unknown instance type {instance_type!r}" + (f" (did you mean {', '.join(hint)}?)" if hint else "")


def workload_inputs(
    ep: EndpointSpec, workload: Any, params: EstimateParams
) -> tuple[WorkloadInputs | None, list[str]]:
    """The inputs for one single model or component of a config, or None and the reason it cannot be estimated."""
    from fastscale.infra import catalog

    spec = catalog.get(ep.instance_type)
    if spec is None:
        return None, [f"not estimated: {_unknown_type_reason(ep.instance_type)}"]
    if workload.model_size_gb is None:
        return None, ["not estimated: set model_size_gb (GB of weights) to estimate download and load times"]
    notes: list[str] = []
    image_gb = workload.image_size_gb
    if image_gb is None:
        image_gb = params.image.default_size_gb.value
        notes.append(f"image_size_gb not set: assumed {image_gb:g} GB (compressed)")
    ecr = _image_is_ecr(workload.image)
    if not ecr:
        notes.append("container image caching does not apply: the image is not in Amazon ECR")
    component = isinstance(workload, InferenceComponentSpec)
    if component:
        accelerators = workload.resources.accelerators or 1
    else:
        accelerators = spec.accelerator_count
    scaling: Autoscaling = workload.autoscaling
    if not scaling.enabled:
        notes.append("auto scaling is disabled: capacity changes only when you change it, so there is no detection phase")
    zero = None
    if component and workload.copies.min == 0 and scaling.enabled:
        zero = (scaling.scale_from_zero.period, scaling.scale_from_zero.evaluation_periods)
    return (
        WorkloadInputs(
            instance_type=spec.instance_type,
            family=spec.family,
            network_gbps=spec.network_gbps,
            accelerators=accelerators,
            model_size_gb=workload.model_size_gb,
            image_size_gb=image_gb,
            metric=scaling.metric if scaling.enabled else None,
            image_cacheable=ecr,  # `spec` exists, so the type has an accelerator
            data_cache=workload.data_cache if component else None,
            scale_from_zero=zero,
        ),
        notes,
    )


def estimate_config(config: FastscaleConfig, params: EstimateParams | None = None) -> list[WorkloadEstimate]:
    """One estimate per single-model endpoint and per inference component, in config order."""
    from fastscale.infra.estimate.fallback import fallback_scenario

    params = params or load_params()
    out = []
    for ep in config.endpoints:
        for _, workload in ep.workloads():
            inputs, notes = workload_inputs(ep, workload, params)
            found = scenarios(inputs, params) if inputs else ()
            if inputs is not None:
                # Endpoints with fallback pools: a new instance of the next pool, with its own timeline.
                fallback, fallback_notes = fallback_scenario(ep, workload, inputs, params)
                found += (fallback,) if fallback else ()
                notes += fallback_notes
            out.append(
                WorkloadEstimate(
                    endpoint=ep.name,
                    component=workload.name if isinstance(workload, InferenceComponentSpec) else None,
                    instance_type=ep.instance_type,
                    inputs=inputs,
                    scenarios=found,
                    notes=tuple(notes),
                )
            )
    return out


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
    from fastscale.infra import catalog

    params = params or load_params()
    spec = catalog.get(instance_type)
    if spec is None:
        raise EstimateInputError(_unknown_type_reason(instance_type))
    if accelerators is not None and accelerators > spec.accelerator_count:
        raise EstimateInputError(
            f"{instance_type} has {spec.accelerator_count} accelerator(s); a copy cannot use {accelerators}"
        )
    notes = []
    if image_size_gb is None:
        image_size_gb = params.image.default_size_gb.value
        notes.append(f"image size not given: assumed {image_size_gb:g} GB (compressed)")
    alarm = ScaleFromZero()
    inputs = WorkloadInputs(
        instance_type=spec.instance_type,
        family=spec.family,
        network_gbps=spec.network_gbps,
        accelerators=accelerators or spec.accelerator_count,
        model_size_gb=model_size_gb,
        image_size_gb=image_size_gb,
        metric=metric or Autoscaling().metric,
        image_cacheable=True,  # an accelerator type, and a what-if assumes the image is in ECR
        data_cache=data_cache,
        scale_from_zero=(alarm.period, alarm.evaluation_periods),
    )
    return WorkloadEstimate("what-if", None, spec.instance_type, inputs, scenarios(inputs, params), tuple(notes))
