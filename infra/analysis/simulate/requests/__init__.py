"""Request-level simulation: every request of a trace routed to a copy, queued, prefilled and decoded.

The scaling is the engine's (:mod:`fastscale.infra.analysis.simulate.engine`): Application Auto Scaling's alarms,
cooldowns, step policy and the estimate model's cold starts. What changes is the load: instead of a number of
concurrent requests per second, the requests of a trace arrive one by one, and each second the engine reads
back what they did (requests in flight or queued per copy: the ``ConcurrentRequestsPerCopy`` metric) and which
failed with no copy in service (``NoCapacityInvocationFailures``).

In the order a run needs them:

- :mod:`~fastscale.infra.analysis.simulate.requests.trace`: the request trace, read and checked (two CSV layouts);
- :mod:`~fastscale.infra.analysis.simulate.requests.rates`: how fast one copy serves, from a measured profile,
  the config's ``serving.*`` or the accelerator's roofline;
- :mod:`~fastscale.infra.analysis.simulate.requests.replay`: the requests routed, queued and served on the
  engine's copies, second by second (the batching model);
- :mod:`~fastscale.infra.analysis.simulate.requests.results`: what became of them: failures, latency
  percentiles, and the run's summary;
- :mod:`~fastscale.infra.analysis.simulate.requests.workload`: a configured workload's rates and routing, replayed.

This package exports the entry points ``simulate --requests`` and ``recommend`` start from.
"""

from fastscale.infra.analysis.simulate.requests.rates import read_profile
from fastscale.infra.analysis.simulate.requests.replay import simulate_requests
from fastscale.infra.analysis.simulate.requests.trace import RequestInputError, read_request_trace
from fastscale.infra.analysis.simulate.requests.workload import simulate_workload_requests

__all__ = [
    "RequestInputError",
    "read_profile",
    "read_request_trace",
    "simulate_requests",
    "simulate_workload_requests",
]
