"""Replay a traffic profile against an endpoint's configured scaling, second by second, layer by layer.

``select_workloads`` turns a config into simulatable workloads; ``simulate_workload`` replays a
:class:`Traffic` against one as configured and with each scale-out layer flipped (10-second metrics, data
caching, container image caching, a warm minimum). ``engine.simulate`` is the model itself, on plain
numbers: a ``spec.SimSpec`` in, a ``result.Result`` out. ``requests/`` replays a request trace, request by request,
on the same scaling. Parameters and their sources: ``infra/analysis/simulate_params.json`` and
``infra/analysis/estimate_params.json``.
"""

from fastscale.infra.analysis.simulate.build import (
    FALLBACK_VARIANT,
    LAYER_VARIANTS,
    Layers,
    Selection,
    SimulateInputError,
    Variant,
    Workload,
    WorkloadSimulation,
    select_workloads,
    simulate_workload,
)
from fastscale.infra.analysis.simulate.engine import simulate
from fastscale.infra.analysis.simulate.params import SimulateParams, load_params
from fastscale.infra.analysis.simulate.result import Event, Result, Summary
from fastscale.infra.analysis.simulate.spec import Alarm, ScaleFromZero, SimSpec, Timings
from fastscale.infra.analysis.simulate.traffic import (
    Traffic,
    TrafficError,
    default_spike,
    parse_trace,
    ramp,
    read_trace,
    spike,
)

__all__ = [
    "FALLBACK_VARIANT",
    "LAYER_VARIANTS",
    "Alarm",
    "Event",
    "Layers",
    "Result",
    "ScaleFromZero",
    "Selection",
    "SimSpec",
    "SimulateInputError",
    "SimulateParams",
    "Summary",
    "Timings",
    "Traffic",
    "TrafficError",
    "Variant",
    "Workload",
    "WorkloadSimulation",
    "default_spike",
    "default_traffic",
    "load_params",
    "parse_trace",
    "ramp",
    "read_trace",
    "select_workloads",
    "simulate",
    "simulate_workload",
    "spike",
]


def default_traffic(
    workload: Workload,
    params: SimulateParams | None = None,
    service_time: float | None = None,
    window: int | None = None,
) -> Traffic:
    """Idle, then a spike to a share of what the workload's maximum serves (the parameters file sets the shape)."""
    params = params or load_params()
    p = params.default_traffic
    return default_spike(
        workload.max_concurrency,
        at=int(p.spike_at_seconds.value),
        hold=int(p.spike_hold_seconds.value),
        fraction=p.spike_peak_fraction_of_max.value,
        window=window or int(p.window_seconds.value),
        service_time=service_time or params.default_service_time_seconds.value,
    )
