"""The replay: the requests of a trace routed to the engine's copies, queued and served by continuous batching.

Each copy is a :class:`~fastscale.infra.analysis.simulate.requests.batching.Batcher`: the model server's steps,
each holding the next token of every decoding sequence and chunks of prompts up to a token budget (the batching
model, also in ``infra/analysis/simulate_params.json``, ``derivation``). A request reaches its copy's server
``request_overhead_seconds`` after it arrives (front end, tokenizer), joins at the next step boundary if a slot
is free (else it waits in that copy's FIFO queue), has its first token at the end of the step that finishes its
prompt, then decodes one token a step. A request whose first token would come later than the invocation timeout
fails. The copies' next changes and the queue time-outs are the events, arrivals read in order: a one-hour
trace of 20,000 requests takes well under a second, a week of 3,000,000 about 14 s of CPU, of which the
statistics of :mod:`~fastscale.infra.analysis.simulate.requests.results` 0.45 s (``bench/README.md``).

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
from array import array
from collections import deque
from collections.abc import Callable, Generator, Sequence

from fastscale.infra.analysis.simulate.engine import simulate
from fastscale.infra.analysis.simulate.requests.batching import END_SHIFT, NEVER, REQUEST_MASK, Batcher
from fastscale.infra.analysis.simulate.requests.rates import ServiceRates
from fastscale.infra.analysis.simulate.requests.results import (
    NO_CAPACITY,
    SERVED,
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
#: Added to a draining copy's outstanding requests: more than any copy in service holds.
DRAINING = 1 << 40
#: What the engine sends the replay: the end of a stretch's first second and of its last, and where each second's
#: figures go (RequestLoad.serve).
_Stretch = tuple[float, float, Callable[[float], None], Callable[[float], None], Callable[[float], None]]


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
    longer meet ``--max-rejected`` without simulating the rest of the trace.

    The trace's requests must be in arrival order (as :class:`RequestTrace` holds them)."""

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
        self.lor = routing in QUEUED_AS_LEAST_OUTSTANDING
        self.rng = random.Random(seed)
        # What became of each request, columnar like the trace: 8 bytes a time, 1 byte a status.
        unknown = array("d", [math.nan])
        self.ttft = unknown * n
        self.e2e = unknown * n
        self.wait = unknown * n
        self.status = bytearray(n)
        # The copies that can still change: those in service, in the engine's order, then those draining. The
        # lists beside them are in the same order; a copy's position changes only when the engine's copies do.
        self.copies: list[Batcher] = []
        self.heap: list[tuple[float, int]] = []  # (next planned change, position) of the copies that plan one
        #: Requests in flight or queued on each copy, for least outstanding requests routing; a draining copy's
        #: count is raised by DRAINING so that the smallest count is always a copy in service.
        self.outstanding: list[int] = []
        self.routable = 0  # the first this many copies are in service
        self.index: dict[int, Batcher] = {}  # engine's copy number -> its batcher
        self.ids: list[int] = []
        self.failed = 0
        self.stop_after = math.inf if stop_after_failures is None else stop_after_failures
        self.run = self._events()
        next(self.run)

    # -- the engine's side

    def serve(self, first: int, stop: int, serving: Sequence[int], demand: Callable[[float], None],
              queued: Callable[[float], None], rejected: Callable[[float], None]) -> None:
        if serving != self.ids and list(serving) != self.ids:
            self._sync(serving)
        end = self.run.send((first + 1.0, float(stop), demand, queued, rejected))
        if self.failed > self.stop_after:
            raise FailureLimitExceeded(self.failed, int(end) - 1)

    def step(self, second: int, serving: Sequence[int]) -> tuple[float, float, float]:
        """One second: (mean concurrency, mean requests waiting for a slot, requests failed with no copy)."""
        out: list[float] = []
        self.serve(second, second + 1, serving, out.append, out.append, out.append)
        return out[0], out[1], out[2]

    def finish(self) -> None:
        """After the window: the requests still queued or in flight run to their end on the last copies."""
        ignored: list[float] = []
        self.run.send((math.inf, math.inf, ignored.append, ignored.append, ignored.append))

    def _sync(self, serving: Sequence[int]) -> None:
        self.ids = list(serving)
        # A copy no longer in service takes no new request; what it holds runs to the end (connection draining).
        # One that holds nothing is done with for good: the engine never serves a copy number again.
        before = {id(copy): c for c, copy in enumerate(self.copies)}
        index, outstanding = self.index, self.outstanding
        copies: list[Batcher] = []
        for number in serving:
            copy = index.get(number)
            if copy is None:
                copy = index[number] = Batcher(self.rates, self.arr, self.inp, self.out, self.status, self.ttft,
                                               self.e2e, self.wait, self.timeout)
            copies.append(copy)
        self.routable = len(copies)
        in_service = set(serving)
        for number, copy in list(index.items()):
            if number not in in_service:
                if copy.running:
                    copies.append(copy)
                else:
                    del index[number]
        counts = []
        for c, copy in enumerate(copies):
            old = before.get(id(copy))
            count = 0 if old is None else outstanding[old] % DRAINING
            counts.append(count if c < self.routable else count + DRAINING)
            copy.position = c
        self.copies[:], outstanding[:] = copies, counts
        self.heap[:] = [(copy.next_time, c) for c, copy in enumerate(copies) if copy.next_time < math.inf]
        heapq.heapify(self.heap)

    # -- the event loop

    def _events(self) -> Generator[float, _Stretch, None]:
        """Serve arrivals and events second by second over each stretch the engine sends (the end of its first
        second and of its last, ``inf`` for both to run everything out, and where each second's figures go:
        concurrency x seconds, queued x seconds, requests that failed with no copy in service); add the requests
        that failed to ``failed``, stop after the first second that takes it over the limit, and yield the end
        of the last second served.

        One generator, so that its locals last from second to second: it runs for every request of every
        candidate of a search. A copy's planned steps and what then changes are :class:`Batcher`'s ``fire``,
        ``arrive`` and ``_plan``, inlined here on the same state with the same arithmetic in the same order: the
        results are the same floats. The copies' next changes are a heap of (time, copy) whose first entry is always
        a copy's current plan (an entry whose copy has planned again since is dropped when it comes first); the queue time-outs come in arrival order (arrivals are sorted,
        the time-out is the same for all), so they are a FIFO."""
        arr, inp, out, n = self.arr, self.inp, self.out, self.n
        status, ttft, e2e, wait = self.status, self.ttft, self.e2e, self.wait
        copies, heap, outstanding = self.copies, self.heap, self.outstanding
        lor, getrandbits, stop_after = self.lor, self.rng.getrandbits, self.stop_after
        rates = self.rates
        timeout, overhead, slots = self.timeout, rates.request_overhead_seconds, rates.slots
        token_time, weights, kv_read = 1.0 / rates.prefill_tokens_per_second, rates.weights_seconds, \
            rates.kv_read_seconds_per_token
        # By decoding sequences: the prompt tokens a step takes; by requests running: the step's fixed time.
        budget = max(1, rates.token_budget)
        chunks = [max(1, budget - k) for k in range(slots + 1)]
        fixed, per_sequence = rates.step_overhead_seconds, rates.sequence_overhead_seconds
        fixed_times = [fixed + per_sequence * running for running in range(slots + 1)]
        measured = rates.measured_decode
        decode_steps = [rates.decode_step_seconds(k) for k in range(slots + 1)] if measured else []
        push, pop, replace, inf, ceil = heapq.heappush, heapq.heappop, heapq.heapreplace, math.inf, math.ceil
        shift, mask, never, served, timed_out = END_SHIFT, REQUEST_MASK, NEVER, SERVED, TIMED_OUT  # as locals
        expiries: deque[tuple[float, int, Batcher]] = deque()  # (time-out, request, copy) of queued requests
        expiry = inf  # the first of them
        total = waiting = 0
        last = area = qarea = 0.0
        i = 0
        a = arr[0] + overhead if n else inf  # the next arrival, at its server
        end, stop, add_area, add_queued, add_rejected = yield 0.0
        rejected, failed = 0.0, 0  # requests failed with no copy this second (a float: the engine's figure)
        while True:
            routable = self.routable
            bits = routable.bit_length()  # for random routing, below
            # For least outstanding requests: the fewest any copy has, and how many copies have that few.
            low = min(outstanding, default=0)
            lows = outstanding.count(low)
            due, first = heap[0] if heap else (inf, -1)  # the earliest planned change and its copy
            while True:
                # What comes first; at the same time a copy's change, then a time-out, then an arrival. What the
                # copies hold is summed over time up to it.
                if due <= a and due <= expiry:
                    e, kind = due, 0
                elif expiry <= a:
                    e, kind = expiry, 1
                else:
                    e, kind = a, 2
                if e >= end:  # the second is over: its last stretch, then its figures
                    if last < end < inf:
                        dt = end - last
                        area += total * dt
                        if waiting:
                            qarea += waiting * dt
                        last = end
                    if failed:
                        self.failed += failed
                        failed = 0
                        if self.failed > stop_after:
                            break
                    add_area(area)
                    add_queued(qarea)
                    add_rejected(rejected)
                    area = qarea = 0.0
                    rejected = 0.0
                    if end >= stop:
                        break
                    end += 1.0
                    continue
                if e > last:
                    dt = e - last
                    area += total * dt
                    if waiting:
                        qarea += waiting * dt
                    last = e
                if kind == 0:
                    c = first
                    copy = copies[c]
                    fire = True
                    r = -1
                elif kind == 1:
                    _, r, copy = expiries.popleft()
                    expiry = expiries[0][0] if expiries else inf
                    if not status[r] and wait[r] != wait[r]:  # still queued when its time-out passes
                        status[r] = timed_out
                        failed += 1
                        wait[r] = timeout
                        held = outstanding[copy.position] = outstanding[copy.position] - 1
                        if held <= low:
                            if held < low:
                                low, lows = held, 1
                            else:
                                lows += 1
                        total -= 1
                        waiting -= 1
                    continue
                else:
                    r = i
                    i += 1
                    if not routable:
                        status[r] = NO_CAPACITY
                        rejected += 1.0
                        failed += 1
                        a = arr[i] + overhead if i < n else inf
                        continue
                    if not lor:  # randrange(routable), drawn as random.Random draws it, without its call
                        c = getrandbits(bits)
                        while c >= routable:
                            c = getrandbits(bits)
                    elif routable > 1:
                        c = outstanding.index(low)  # the first copy with the fewest
                        lows -= 1
                        if not lows:
                            low += 1
                            lows = outstanding.count(low) + 1  # with the chosen one, counted below
                    else:
                        c = 0
                    outstanding[c] += 1
                    total += 1
                    copy = copies[c]
                    fire = False
                    if not copy.running:
                        copy.t = a
                    else:
                        steps = ceil((a - copy.t) / copy.duration - 1e-9)
                        if steps >= copy.plan_steps:
                            fire = True  # the copy's planned change comes at the boundary the request joins at
                        elif steps > 0:  # Batcher._advance
                            copy.steps += steps
                            copy.t += steps * copy.duration
                            copy.plan_steps -= steps
                            if copy.per_step:
                                done = copy.per_step * steps
                                copy.pending -= done
                                copy.head -= done
                if fire:  # Batcher.fire: the planned steps, then what changes
                    steps = copy.plan_steps
                    step = copy.steps = copy.steps + steps
                    now = copy.t = copy.next_time
                    left = 0
                    ends = copy.ends
                    if ends:
                        limit = (step + 1) << shift
                        if ends[0] < limit:
                            decoding, kv = copy.decoding, copy.kv
                            while ends and ends[0] < limit:
                                q = pop(ends) & mask
                                e2e[q] = now - arr[q]
                                decoding -= 1
                                kv -= inp[q] + out[q] / 2
                                left += 1
                            copy.decoding, copy.kv = decoding, kv
                    per_step = copy.per_step
                    if per_step:
                        done = per_step * steps
                        copy.pending -= done
                        prefill, head = copy.prefill, copy.head
                        while prefill and done >= head:
                            q = prefill.popleft()
                            done -= head
                            head = (inp[prefill[0]] or 1) if prefill else 0
                            latency = now - arr[q]
                            if latency > timeout:
                                # The client gave up before the first token; the server still ran the prompt.
                                status[q] = timed_out
                                failed += 1
                                left += 1
                                continue
                            status[q] = served
                            ttft[q] = latency
                            tokens = out[q]
                            if tokens <= 1:
                                e2e[q] = latency
                                left += 1
                            else:
                                push(ends, (step + tokens - 1) << shift | q)
                                copy.decoding += 1
                                copy.kv += inp[q] + tokens / 2
                        if done and prefill:
                            head -= done
                        copy.head = head
                    running = copy.running
                    if left:
                        running -= left
                        held = outstanding[c] = outstanding[c] - left
                        if held <= low:
                            if held < low:
                                low, lows = held, 1
                            else:
                                lows += 1
                        total -= left
                else:
                    running = copy.running
                # Batcher._admit, in the order the requests came: those queued (when the change freed slots), then
                # the arriving request (when the copy is idle, at its arrival). Slots left over mean an empty queue
                # (but for requests that timed out there: with none waiting anywhere, they stay until passed over).
                if waiting and running < slots and copy.queue:
                    queue = copy.queue
                    now = copy.t
                    prefill = copy.prefill
                    while running < slots and queue:
                        q = queue.popleft()
                        if status[q]:
                            continue  # timed out while queued
                        latency = now - arr[q] - overhead
                        wait[q] = latency if latency > 0.0 else 0.0
                        tokens = inp[q] or 1
                        if not prefill:
                            copy.head = tokens
                        prefill.append(q)
                        copy.pending += tokens
                        running += 1
                        waiting -= 1
                if r >= 0:
                    if not running and copy.t < a:
                        copy.t = a
                    a = arr[i] + overhead if i < n else inf
                    if running < slots:  # a slot takes it at once: it never waits in the queue
                        latency = copy.t - arr[r] - overhead
                        wait[r] = latency if latency > 0.0 else 0.0
                        tokens = inp[r] or 1
                        prefill = copy.prefill
                        if not prefill:
                            copy.head = tokens
                        prefill.append(r)
                        copy.pending += tokens
                        running += 1
                    else:  # waits for a slot
                        copy.queue.append(r)
                        waiting += 1
                        time_out = arr[r] + timeout
                        expiries.append((time_out, r, copy))
                        if expiry == inf:
                            expiry = time_out
                        if not fire:
                            continue  # nothing changed that the plan holds
                copy.running = running
                # Batcher._plan: the steps until what they hold changes
                if running:
                    k = copy.decoding
                    pending = copy.pending
                    if pending == 0:
                        tokens, steps = 0, never
                    elif pending <= chunks[k]:
                        tokens, steps = pending, 1
                    else:
                        chunk = chunks[k]
                        tokens, steps = chunk, -(-copy.head // chunk)
                        if pending // chunk < steps:
                            steps = pending // chunk
                    ends = copy.ends
                    if ends:
                        decode = (ends[0] >> shift) - copy.steps
                        if decode < steps:
                            steps = decode
                    compute = (k + tokens) * token_time
                    fixed_time = fixed_times[running]
                    if measured:
                        decode_time = decode_steps[k or 1]
                        duration = decode_time if decode_time > fixed_time + compute else fixed_time + compute
                    else:
                        memory = weights + copy.kv * kv_read
                        duration = fixed_time + (memory if memory > compute else compute)
                    copy.duration = duration
                    copy.per_step = tokens
                    copy.plan_steps = steps
                    planned = copy.next_time = copy.t + steps * duration
                    if r < 0:
                        replace(heap, (planned, c))
                    else:
                        push(heap, (planned, c))
                        if first != c:  # the first entry is still a current plan: the new one, or the one before
                            if planned < due or planned == due and c < first:
                                due, first = planned, c
                            continue
                else:
                    copy.next_time = inf
                    copy.plan_steps = copy.per_step = 0
                    if r < 0:
                        pop(heap)
                # The first entry, once those of copies that planned again since they were pushed are gone.
                while heap:
                    due, first = heap[0]
                    if copies[first].next_time == due:
                        break
                    pop(heap)
                else:
                    due = inf
            end, stop, add_area, add_queued, add_rejected = yield end


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
        + trace.input_total / len(trace) / rates.prefill_tokens_per_second
        + trace.output_total / len(trace) / rates.decode_tokens_per_second
    )
    start = first_minute / min(60.0, float(window)) * alone
    spec = dataclasses.replace(spec, capacity=float(rates.slots), service_time=max(alone, 1e-6))
    demand = [0.0] * window
    demand[0] = start
    result = simulate(spec, demand, load)
    load.finish()
    stats = RequestStats.of(load.status, load.ttft, load.e2e, load.wait, load.timeout)
    return RequestSimulation(result, stats, rates, routing)
