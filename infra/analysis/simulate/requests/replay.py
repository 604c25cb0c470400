"""The replay: the requests of a trace routed to the engine's copies, queued and served by continuous batching.

Each copy is a :class:`~fastscale.infra.analysis.simulate.requests.batching.Batcher`: the model server's steps,
each holding the next token of every decoding sequence and chunks of prompts up to a token budget (the batching
model, also in ``infra/analysis/simulate_params.json``, ``derivation``). A request reaches its copy's server
``request_overhead_seconds`` after it arrives (front end, tokenizer), joins at the next step boundary if a slot
is free (else it waits in that copy's FIFO queue), has its first token at the end of the step that finishes its
prompt, then decodes one token a step. A request whose first token would come later than the invocation timeout
fails. The copies' next changes and the queue time-outs are the events, arrivals read in order: a one-hour
trace of 20,000 requests takes well under a second.

:class:`RequestLoad` is the engine's :class:`~fastscale.infra.analysis.simulate.spec.Load`: the engine scales, the
load serves. The trace comes from :mod:`~fastscale.infra.analysis.simulate.requests.trace`, a copy's speed from
:mod:`~fastscale.infra.analysis.simulate.requests.rates`; what became of each request is summed up in
:mod:`~fastscale.infra.analysis.simulate.requests.results`. Pure Python, deterministic: random routing uses a
seeded generator.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import random
from collections.abc import Sequence
from typing import Any

from fastscale.infra.analysis.simulate.engine import simulate
from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.requests.batching import Batcher
from fastscale.infra.analysis.simulate.requests.rates import Profile, ServiceRates, service_rates
from fastscale.infra.analysis.simulate.requests.results import (
    NO_CAPACITY,
    TIMED_OUT,
    RequestSimulation,
    RequestStats,
)
from fastscale.infra.analysis.simulate.requests.trace import RequestTrace
from fastscale.infra.analysis.simulate.spec import LoadStopped, SimSpec

#: Routing strategies as the config spells them (ProductionVariantRoutingConfig.RoutingStrategy).
ROUTINGS = ("least_outstanding_requests", "random", "prefix_aware", "kv_aware")
#: Strategies queued as least outstanding requests. A trace holds token counts, not prompts, so which requests
#: share a prefix (PREFIX_AWARE) or whose prompt start an instance holds in its KV cache (KV_AWARE) is unknown,
#: and AWS documents no figure for the time a hit saves; KV_AWARE falls back to least outstanding requests
#: when no instance holds the prompt's start, and PREFIX_AWARE moves a request on at its concurrency
#: threshold. So both are modelled as least outstanding requests, with no prefill saved (docs/simulate.md).
QUEUED_AS_LEAST_OUTSTANDING = ("least_outstanding_requests", "prefix_aware", "kv_aware")


class FailureLimitExceeded(LoadStopped):
    """More requests failed than the caller allowed (``RequestLoad(stop_after_failures=...)``): the run stopped."""

    def __init__(self, failed: int, second: int):
        super().__init__(f"{failed} requests failed by second {second}")
        self.failed = failed
        self.second = second


class RequestLoad:
    """The requests of a trace, served on the copies the engine has in service (spec.Load).

    ``stop_after_failures``: raise FailureLimitExceeded at the end of the first second after which more requests
    than that have failed (no capacity or timed out). Failures only ever add up, so a run stopped this way would
    have failed at least as many requests had it gone on: ``recommend`` uses it to drop a candidate that can no
    longer meet ``--max-rejected`` without simulating the rest of the trace."""

    def __init__(self, trace: RequestTrace, rates: ServiceRates, routing: str, timeout: float, seed: int = 0,
                 stop_after_failures: int | None = None):
        if routing not in ROUTINGS:
            raise ValueError(f"routing must be one of {ROUTINGS}")
        n = len(trace)
        self.arr = trace.arrivals
        self.inp = trace.input_tokens
        self.out = trace.output_tokens
        self.n = n
        self.rates = rates
        self.timeout = float(timeout)
        self.overhead = rates.request_overhead_seconds
        self.lor = routing in QUEUED_AS_LEAST_OUTSTANDING
        self.rng = random.Random(seed)
        nan = math.nan
        self.ttft = [nan] * n
        self.e2e = [nan] * n
        self.wait = [nan] * n
        self.status = bytearray(n)
        self.next = 0
        self.heap: list[tuple[float, int, int]] = []  # (time-out, copy, request) of each queued request
        self.copies: list[Batcher] = []
        self.times: list[float] = []  # each copy's next planned change
        self.outstanding: list[int] = []
        self.index: dict[int, int] = {}
        self.routable: list[int] = []
        self.ids: list[int] = []
        self.total = 0
        self.waiting = 0
        self.last = 0.0
        self.area = 0.0
        self.qarea = 0.0
        self.failed = 0
        self.stop_after = stop_after_failures

    # -- the engine's side

    def step(self, second: int, serving: Sequence[int]) -> tuple[float, float, float]:
        if list(serving) != self.ids:
            self._sync(serving)
        rejected = self._run_until(second + 1.0)
        if self.stop_after is not None and self.failed > self.stop_after:
            raise FailureLimitExceeded(self.failed, second)
        self._account(second + 1.0)
        concurrency, queued = self.area, self.qarea
        self.area = self.qarea = 0.0
        return concurrency, queued, float(rejected)

    def finish(self) -> None:
        """After the window: the requests still queued or in flight run to their end on the last copies."""
        self._run_until(math.inf)

    def _sync(self, serving: Sequence[int]) -> None:
        self.ids = list(serving)
        for number in serving:
            if number not in self.index:
                self.index[number] = len(self.copies)
                self.copies.append(Batcher(self.rates, self.arr, self.inp, self.out, self.status, self.ttft, self.e2e,
                                           self.wait, self.timeout))
                self.times.append(math.inf)
                self.outstanding.append(0)
        # A copy no longer in service takes no new request; what it holds runs to the end (connection draining).
        self.routable = [self.index[number] for number in serving]

    # -- the event loop

    def _account(self, now: float) -> None:
        dt = now - self.last
        if dt > 0:
            self.area += self.total * dt
            self.qarea += self.waiting * dt
            self.last = now

    def _run_until(self, end: float) -> int:
        """Serve arrivals and events before ``end``; returns the requests that failed with no copy in service.

        One loop with everything in locals: it runs for every request of every candidate of a search. The copies'
        next changes are a plain list (a handful of copies: its minimum costs less than a heap's upkeep); the
        queue time-outs a heap."""
        heap, times, arr, n = self.heap, self.times, self.arr, self.n
        status, wait = self.status, self.wait
        copies, outstanding, routable, lor = self.copies, self.outstanding, self.routable, self.lor
        timeout, overhead = self.timeout, self.overhead
        push, pop, inf = heapq.heappush, heapq.heappop, math.inf
        total, waiting, last, area, qarea = self.total, self.waiting, self.last, self.area, self.qarea
        rejected = 0
        failed = self.failed
        i = self.next
        # The earliest planned change and its copy, kept up to date as each copy's plan changes.
        due = min(times) if times else inf
        first = times.index(due) if due < inf else -1
        while True:
            a = arr[i] + overhead if i < n else inf
            expiry = heap[0][0] if heap else inf
            e = due if due <= expiry else expiry
            if a >= end and e >= end:
                break
            if e <= a:
                if e > last:
                    area += total * (e - last)
                    qarea += waiting * (e - last)
                    last = e
                if due <= expiry:
                    c = first
                    copy = copies[c]
                    left, admitted, lost = copy.fire()
                else:
                    _, c, r = pop(heap)
                    if not status[r] and wait[r] != wait[r]:  # still queued when its time-out passes
                        status[r] = TIMED_OUT
                        failed += 1
                        wait[r] = timeout
                        outstanding[c] -= 1
                        total -= 1
                        waiting -= 1
                    continue
            else:
                if a > last:
                    area += total * (a - last)
                    qarea += waiting * (a - last)
                    last = a
                r = i
                i += 1
                if not routable:
                    status[r] = NO_CAPACITY
                    rejected += 1
                    failed += 1
                    continue
                if not lor:
                    c = routable[self.rng.randrange(len(routable))]
                elif len(routable) > 1:
                    c = min(routable, key=outstanding.__getitem__)
                else:
                    c = routable[0]
                outstanding[c] += 1
                total += 1
                copy = copies[c]
                left, admitted, lost, queued = copy.arrive(r, a)
                if queued:
                    waiting += 1
                    push(heap, (arr[r] + timeout, c, r))
            planned = copy.next_time
            times[c] = planned
            if planned <= due:
                due, first = planned, c
            elif c == first:
                due = min(times)
                first = times.index(due)
            if left:
                outstanding[c] -= left
                total -= left
                waiting -= admitted
                failed += lost
        self.next = i
        self.failed = failed
        self.total, self.waiting, self.last, self.area, self.qarea = total, waiting, last, area, qarea
        return rejected


def simulate_requests(
    spec: SimSpec, trace: RequestTrace, rates: ServiceRates, routing: str, timeout: float, seed: int = 0,
    stop_after_failures: int | None = None,
) -> RequestSimulation:
    """Replay ``trace`` request by request against ``spec``'s scaling; deterministic for a given seed.

    With ``stop_after_failures`` the run raises FailureLimitExceeded as soon as more requests than that failed.

    The window is the trace's (whole seconds up to its last arrival). The starting count is the steady state
    of the first minute's offered load (arrivals x the mean service time of a request alone on a copy).
    """
    load = RequestLoad(trace, rates, routing, timeout, seed, stop_after_failures)
    window = trace.seconds
    first_minute = sum(1 for a in trace.arrivals[: 100_000] if a < 60.0)
    alone = (
        rates.request_overhead_seconds
        + sum(trace.input_tokens) / len(trace) / rates.prefill_tokens_per_second
        + sum(trace.output_tokens) / len(trace) / rates.decode_tokens_per_second
    )
    start = first_minute / min(60.0, float(window)) * alone
    spec = dataclasses.replace(spec, capacity=float(rates.slots), service_time=max(alone, 1e-6))
    demand = [0.0] * window
    demand[0] = start
    result = simulate(spec, demand, load)
    load.finish()
    stats = RequestStats.of(load.status, load.ttft, load.e2e, load.wait, load.timeout)
    return RequestSimulation(result, stats, rates, routing)


def workload_config(config: Any, workload: Any) -> tuple[Any, Any]:
    """The endpoint and the model or component spec a simulated workload was built from."""
    ep = next(e for e in config.endpoints if e.name == workload.endpoint)
    if workload.component is None:
        return ep, ep.model
    return ep, next(c for c in ep.inference_components if c.name == workload.component)


def simulate_workload_requests(
    config: Any,
    workload: Any,
    trace: RequestTrace,
    params: SimulateParams,
    *,
    profile: Profile | None = None,
    timeout: float | None = None,
    seed: int = 0,
) -> RequestSimulation:
    """One workload of ``config`` (from ``select_workloads``) as configured, request by request, routed as its
    endpoint's ``routing`` says (random, AWS's default, when it is null)."""
    ep, w = workload_config(config, workload)
    rates = service_rates(ep, w, workload.capacity, params, profile, mean_request_tokens=trace.mean_request_tokens,
                          mean_context_tokens=trace.mean_context_tokens)
    limit = params.requests.invocation_timeout_seconds.value if timeout is None else timeout
    return simulate_requests(workload.spec(), trace, rates, ep.routing_in_effect, limit, seed)
