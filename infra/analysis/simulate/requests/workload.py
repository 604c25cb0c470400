"""One configured workload replayed request by request: the endpoint and model or component it was built from,
and the rates and routing the config gives it (:func:`~fastscale.infra.analysis.simulate.requests.replay.simulate_requests`
does the replay).
"""

from __future__ import annotations

from typing import Any

from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.requests.rates import Profile, service_rates
from fastscale.infra.analysis.simulate.requests.replay import simulate_requests
from fastscale.infra.analysis.simulate.requests.results import RequestSimulation
from fastscale.infra.analysis.simulate.requests.trace import RequestTrace
from fastscale.infra.model.resolved import ResolvedEndpoint, ResolvedStack, ResolvedWorkload


def workload_config(stack: ResolvedStack, workload: Any) -> tuple[ResolvedEndpoint, ResolvedWorkload]:
    """The resolved endpoint and the model or component a simulated workload was built from."""
    ep = stack.endpoint(workload.endpoint)
    w = ep.model if workload.component is None else next(c for c in ep.components if c.key == workload.component).workload
    assert w is not None, "a workload without a component is the endpoint's single model"
    return ep, w


def simulate_workload_requests(
    stack: ResolvedStack,
    workload: Any,
    trace: RequestTrace,
    params: SimulateParams,
    *,
    profile: Profile | None = None,
    timeout: float | None = None,
    seed: int = 0,
) -> RequestSimulation:
    """One workload of ``stack`` (from ``select_workloads``) as configured, request by request, routed as its
    endpoint's ``routing`` says (random, AWS's default, when it is null)."""
    ep, w = workload_config(stack, workload)
    rates = service_rates(ep, w, workload.capacity, params, profile, mean_request_tokens=trace.mean_request_tokens,
                          mean_context_tokens=trace.mean_context_tokens)
    limit = params.requests.invocation_timeout_seconds.value if timeout is None else timeout
    return simulate_requests(workload.spec(), trace, rates, ep.routing.in_effect, limit, seed)
