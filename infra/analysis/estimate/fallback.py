"""The capacity-fallback scenario: the first instance pool has no capacity, the next one serves.

A new instance of the next pool by priority, with that pool's own family (provisioning), network bandwidth,
accelerators and, where the pool overrides them, image and model sizes. Before it, the time SageMaker
spends on the first pool until an insufficient capacity error moves it on. The provision timeout bounds
the whole attempt (AWS: it is the total across pools, not a per-pool wait).
"""

from __future__ import annotations

from fastscale.infra.analysis.estimate.params import EstimateParams
from fastscale.infra.analysis.estimate.timeline import (
    PhaseBuilder,
    Scenario,
    WorkloadInputs,
    bandwidth_gb_per_s,
    detection_seconds,
    image_is_ecr,
    load_seconds,
    uncached_fetch,
)
from fastscale.infra.base import catalog
from fastscale.infra.model.resolved import ResolvedEndpoint, ResolvedWorkload

SCENARIO = "capacity_fallback"


def fallback_scenario(
    ep: ResolvedEndpoint, workload: ResolvedWorkload, inputs: WorkloadInputs, params: EstimateParams
) -> tuple[Scenario | None, list[str]]:
    """The scenario (None when the endpoint has no fallback pool or it cannot be estimated) and notes."""
    pool = ep.next_pool
    if pool is None:
        return None, []
    spec = catalog.get(pool.instance_type)
    if spec is None:
        return None, [f"capacity fallback not estimated: no accelerator catalog entry for {pool.instance_type}"]
    on_pool = ep.on_pool(workload, pool)
    model_gb = on_pool.model_size_gb if on_pool.model_size_gb is not None else inputs.model_size_gb
    image_gb = on_pool.image_size_gb if on_pool.image_size_gb is not None else inputs.image_size_gb
    if on_pool.resources is not None:
        accelerators = on_pool.resources.accelerators or 1
    else:
        accelerators = spec.accelerator_count

    bandwidth = bandwidth_gb_per_s(spec.network_gbps, params)
    cached = image_is_ecr(on_pool.image)  # the pool's type has accelerators: it is in the catalog
    fetch = (0.0, model_gb / bandwidth) if cached else uncached_fetch(image_gb, model_gb, bandwidth, params)

    t = PhaseBuilder()
    if inputs.metric:
        t.then("detection", detection_seconds(inputs.metric, params))
        t.then("scaling_decision", params.scaling_decision_seconds.value)
    wait = params.capacity_fallback.insufficient_capacity_seconds.value
    provisioning = params.provisioning_seconds.seconds(spec.family)
    t.then("capacity_wait", wait)
    t.then("instance_provisioning", provisioning)
    t.together(("image_pull", fetch[0]), ("model_download", fetch[1]))
    t.then("container_start_model_load", load_seconds(model_gb, accelerators, params))
    t.then("health_check", params.startup.health_check_seconds.value)

    notes = [
        f"capacity fallback: {pool.instance_type} (priority {pool.priority}) serves with {accelerators} accelerator"
        f"{'s' if accelerators != 1 else ''}, model {model_gb:g} GB, image {image_gb:g} GB"
        + ("" if cached else ", image pulled (not in ECR)")
    ]
    timeout = ep.provision_timeout
    if timeout is not None and wait + provisioning > timeout:
        notes.append(
            f"capacity fallback: {wait + provisioning:.0f} s of waiting and provisioning exceed the provision timeout "
            f"({timeout} s): the scale-out would fail before the fallback pool serves"
        )
    return Scenario(SCENARIO, tuple(t.phases)), notes
