"""Scale-out timeline and cost model.

``estimate_config`` gives, for every single-model endpoint and inference component, the phase-by-phase
time from a traffic spike to new capacity serving in each scenario that applies; ``cost_config`` the
on-demand cost of its capacity. All parameters, with their sources, are in ``infra/analysis/estimate_params.json``.
"""

from fastscale.infra.analysis.estimate.cost import CostReport, EndpointCost, cost_config, cost_what_if
from fastscale.infra.analysis.estimate.estimates import estimate_config
from fastscale.infra.analysis.estimate.params import EstimateParams, ParamsError, load_params
from fastscale.infra.analysis.estimate.timeline import (
    PHASE_LABELS,
    SCENARIO_LABELS,
    EstimateInputError,
    Phase,
    Scenario,
    WorkloadEstimate,
    WorkloadInputs,
    scenarios,
    what_if,
)

__all__ = [
    "PHASE_LABELS",
    "SCENARIO_LABELS",
    "CostReport",
    "EndpointCost",
    "EstimateInputError",
    "EstimateParams",
    "ParamsError",
    "Phase",
    "Scenario",
    "WorkloadEstimate",
    "WorkloadInputs",
    "cost_config",
    "cost_what_if",
    "estimate_config",
    "load_params",
    "scenarios",
    "what_if",
]
