"""The estimate of every workload of a config: the scenarios of :mod:`.timeline` plus, for an endpoint with
fallback pools, the capacity-fallback scenario of :mod:`.fallback`."""

from __future__ import annotations

import dataclasses

from fastscale.infra.analysis.estimate.fallback import fallback_scenario
from fastscale.infra.analysis.estimate.params import EstimateParams, load_params
from fastscale.infra.analysis.estimate.timeline import Scenario, WorkloadEstimate, scenarios, workload_inputs
from fastscale.infra.model.resolved import ResolvedStack


def estimate_config(stack: ResolvedStack, params: EstimateParams | None = None) -> list[WorkloadEstimate]:
    """One estimate per single-model endpoint and per inference component, in config order."""
    params = params or load_params()
    out = []
    for ep in stack.endpoints:
        for workload in ep.workloads:
            inputs, notes = workload_inputs(ep, workload, params)
            found: tuple[Scenario, ...] = ()
            found_p90: tuple[Scenario, ...] = ()
            if inputs is not None:
                slow = dataclasses.replace(inputs, percentile="p90")
                found, found_p90 = scenarios(inputs, params), scenarios(slow, params)
                # Endpoints with fallback pools: a new instance of the next pool, with its own timeline.
                fallback, fallback_notes = fallback_scenario(ep, workload, inputs, params)
                found += (fallback,) if fallback else ()
                fallback_p90, _ = fallback_scenario(ep, workload, slow, params)
                found_p90 += (fallback_p90,) if fallback_p90 else ()
                notes += fallback_notes
            out.append(
                WorkloadEstimate(
                    endpoint=ep.key,
                    component=workload.key if workload.is_component else None,
                    instance_type=ep.instance_type,
                    inputs=inputs,
                    scenarios=found,
                    notes=tuple(notes),
                    scenarios_p90=found_p90,
                    missing=("model_size_gb",) if workload.model_size_gb is None and inputs is not None else (),
                )
            )
    return out
