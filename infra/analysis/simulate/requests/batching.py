"""One copy's model server: continuous batching with chunked prefill, step by step in closed form.

The server runs steps back to back while it holds requests. A step takes the next token of every decoding
sequence and, in the order the requests were admitted, chunks of the prompts being prefilled, so that the step
holds at most ``token_budget`` tokens (vLLM's scheduler with chunked prefill). A request's first token comes at
the end of the step that finishes its prompt; from the next step on it decodes one token a step until its last.
A step's time is :meth:`ServiceRates.step_seconds` of what it holds, so a long prompt slows the decoding
sequences it shares steps with, and a request arriving while a step runs waits for the next one: time to first
token grows with the load as it does on a real server.

Between two changes of what the steps hold (a request admitted, a prompt finished, a sequence finished) every step
is the same, so :class:`Batcher` jumps over them at once instead of stepping: a change costs a few operations
whatever the number of steps. Requests beyond ``slots`` wait in the copy's FIFO queue. The closed-loop benchmark
(:mod:`~fastscale.infra.analysis.simulate.requests.closed_loop`) the latency model is checked with calls these
methods; the replay (:mod:`~fastscale.infra.analysis.simulate.requests.replay`) keeps one batcher per copy as its
state and runs the same rules inlined in its own loop (calling them measured 8% slower on a day of traffic), with
the same arithmetic in the same order: ``tests/simulate/test_batching.py`` holds the two to the same floats.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import MutableSequence, Sequence

from fastscale.infra.analysis.simulate.requests.rates import ServiceRates
from fastscale.infra.analysis.simulate.requests.results import SERVED, TIMED_OUT

#: More steps than any run takes: "no such event".
NEVER = 1 << 62
#: A sequence's end in ``Batcher.ends``: ``step << END_SHIFT | request``, one int (cheaper to order than a tuple,
#: and the same order as (step, request)).
END_SHIFT = 32
REQUEST_MASK = (1 << END_SHIFT) - 1


class Batcher:
    """One copy: its running requests, its queue, and the steps it is taking.

    The state is valid at ``t``, a step boundary (or the moment the copy last became idle); ``steps`` counts the
    steps taken. The plan: ``plan_steps`` steps of ``duration`` seconds, each with ``per_step`` prompt tokens,
    until ``next_time``, when what the steps hold changes; the caller calls :meth:`fire` then.

    Results go into the caller's per-request lists (``status``, ``ttft``, ``e2e``, ``wait``); times are measured
    from each request's arrival, ``arrivals[r]``, and a request reaches the batcher ``overhead`` seconds later.
    """

    __slots__ = (
        "arrivals", "inputs", "outputs", "status", "ttft", "e2e", "wait", "timeout", "overhead",
        "budget", "slots", "measured", "decode_steps", "fixed", "per_sequence", "weights", "kv_read", "token_time", "constants",
        "t", "steps", "duration", "per_step", "plan_steps", "next_time",
        "decoding", "running", "kv", "prefill", "head", "pending", "ends", "queue", "gaps", "released",
        "position",
    )

    def __init__(
        self,
        rates: ServiceRates,
        arrivals: Sequence[float],
        inputs: Sequence[int],
        outputs: Sequence[int],
        status: bytearray,
        ttft: MutableSequence[float],
        e2e: MutableSequence[float],
        wait: MutableSequence[float],
        timeout: float,
        gaps: list[tuple[float, int]] | None = None,
        released: list[int] | None = None,
    ):
        self.arrivals, self.inputs, self.outputs = arrivals, inputs, outputs
        self.status, self.ttft, self.e2e, self.wait = status, ttft, e2e, wait
        self.timeout = timeout
        self.overhead = rates.request_overhead_seconds
        self.budget = max(1, rates.token_budget)
        self.slots = rates.slots
        self.measured = rates.measured_decode
        # A decode-only step with k sequences, where it is measured (index 0: a step with no decoding sequence).
        self.decode_steps = [rates.decode_step_seconds(k) for k in range(rates.slots + 1)] if self.measured else []
        self.fixed = rates.step_overhead_seconds
        self.per_sequence = rates.sequence_overhead_seconds
        self.weights = rates.weights_seconds
        self.kv_read = rates.kv_read_seconds_per_token
        self.token_time = 1.0 / rates.prefill_tokens_per_second
        # The same, in one tuple: the plan reads them all each time.
        self.constants = (self.budget, self.token_time, self.fixed, self.per_sequence, self.weights, self.kv_read)
        self.t = 0.0
        self.steps = 0
        self.duration = 0.0
        self.per_step = 0
        self.plan_steps = 0
        self.next_time = math.inf
        self.decoding = 0  # sequences taking a token each step
        self.running = 0  # requests holding a slot: prefilling or decoding
        self.kv = 0.0  # tokens in the decoding sequences' KV cache (each counted at its mean over its decode)
        self.prefill: deque[int] = deque()  # requests whose prompt is being prefilled, in admission order
        self.head = 0  # prompt tokens left of the first of them (the others have all theirs left)
        self.pending = 0  # prompt tokens left in all
        self.ends: list[int] = []  # heap: step at whose end the last token is out << END_SHIFT | request
        self.queue: deque[int] = deque()  # waiting for a slot
        self.gaps = gaps  # when a list: (step seconds, tokens decoded at that gap) for inter-token latencies
        self.released = released  # when a list: every request that left the copy, in order
        self.position = 0  # where the replay keeps this copy among its copies

    # -- the plan

    def _plan(self) -> None:
        """The steps until what they hold changes: a prompt finished, a sequence finished, or fewer prompt tokens
        left than a step takes."""
        running = self.running
        if not running:
            self.next_time, self.plan_steps, self.per_step = math.inf, 0, 0
            return
        budget, token_time, fixed, per_sequence, weights, kv_read = self.constants
        k = self.decoding
        chunk = budget - k
        if chunk < 1:
            chunk = 1
        left = self.pending
        if left == 0:
            tokens, n = 0, NEVER
        elif left <= chunk:
            tokens, n = left, 1
        else:
            tokens, n = chunk, -(-self.head // chunk)
            if left // chunk < n:
                n = left // chunk
        ends = self.ends
        if ends:
            decode_steps = (ends[0] >> END_SHIFT) - self.steps
            if decode_steps < n:
                n = decode_steps
        # The step's time: the server's overhead plus the longer of reading weights and KV cache or computing
        # the step's tokens (measured decode steps, when given, as a floor). Inline: this runs for every change
        # of every copy.
        compute = (k + tokens) * token_time
        overhead = fixed + per_sequence * running
        if self.measured:
            decode = self.decode_steps[k or 1]
            duration = decode if decode > overhead + compute else overhead + compute
        else:
            memory = weights + self.kv * kv_read
            duration = overhead + (memory if memory > compute else compute)
        self.duration = duration
        self.per_step = tokens
        self.plan_steps = n
        self.next_time = self.t + n * duration

    def _admit(self, r: int, now: float) -> None:
        wait = now - self.arrivals[r] - self.overhead
        self.wait[r] = wait if wait > 0.0 else 0.0
        tokens = self.inputs[r] or 1
        if not self.prefill:
            self.head = tokens
        self.prefill.append(r)
        self.pending += tokens
        self.running += 1

    def _advance(self, n: int) -> None:
        """``n`` steps of the plan that change nothing it holds (no prompt or sequence finishes)."""
        if n <= 0:
            return
        if self.gaps is not None and self.decoding:
            self.gaps.append((self.duration, self.decoding * n))
        self.steps += n
        self.t += n * self.duration
        self.plan_steps -= n
        if self.per_step:
            done = self.per_step * n
            self.pending -= done
            self.head -= done

    # -- events

    def fire(self) -> tuple[int, int, int]:
        """Take the planned steps up to ``next_time`` and what then changes; returns (requests that left the copy,
        requests admitted from the queue, requests that failed: first token after the time-out)."""
        n = self.plan_steps
        if self.gaps is not None and self.decoding:
            self.gaps.append((self.duration, self.decoding * n))
        step = self.steps = self.steps + n
        now = self.t = self.next_time
        arrivals, outputs, inputs, released = self.arrivals, self.outputs, self.inputs, self.released
        left = failed = 0
        ends = self.ends
        limit = (step + 1) << END_SHIFT
        while ends and ends[0] < limit:
            r = heapq.heappop(ends) & REQUEST_MASK
            self.e2e[r] = now - arrivals[r]
            self.decoding -= 1
            self.kv -= inputs[r] + outputs[r] / 2
            left += 1
            if released is not None:
                released.append(r)
        if self.per_step:
            done = self.per_step * n
            self.pending -= done
            prefill = self.prefill
            status, timeout = self.status, self.timeout
            while prefill and done >= self.head:
                r = prefill.popleft()
                done -= self.head
                self.head = (inputs[prefill[0]] or 1) if prefill else 0
                first = now - arrivals[r]
                if first > timeout:
                    # The client gave up before the first token; the server still ran the prompt.
                    status[r] = TIMED_OUT
                    failed += 1
                    left += 1
                    if released is not None:
                        released.append(r)
                    continue
                status[r] = SERVED
                self.ttft[r] = first
                out = outputs[r]
                if out <= 1:
                    self.e2e[r] = first
                    left += 1
                    if released is not None:
                        released.append(r)
                else:
                    heapq.heappush(ends, (step + out - 1) << END_SHIFT | r)
                    self.decoding += 1
                    self.kv += inputs[r] + out / 2
            if done and prefill:
                self.head -= done
        admitted = 0
        if left:
            self.running -= left
            status, queue = self.status, self.queue
            while self.running < self.slots and queue:
                r = queue.popleft()
                if status[r]:
                    continue  # timed out while queued
                self._admit(r, now)
                admitted += 1
        self._plan()
        return left, admitted, failed

    def arrive(self, r: int, at: float) -> tuple[int, int, int, bool]:
        """Request ``r`` reaches the server at ``at`` (no event of the copy is due before ``at``). It joins at the
        next step boundary: at once when the copy is idle. Returns ``fire``'s counts for an event due at that
        boundary, and whether ``r`` had to queue for a slot."""
        left = admitted = failed = 0
        if not self.running:
            self.t = at
        else:
            steps = math.ceil((at - self.t) / self.duration - 1e-9)
            if steps >= self.plan_steps:
                left, admitted, failed = self.fire()
                if not self.running and self.t < at:
                    self.t = at
            elif steps > 0:
                self._advance(steps)
        if self.running < self.slots:
            self._admit(r, self.t)
            self._plan()
            return left, admitted, failed, False
        self.queue.append(r)
        return left, admitted, failed, True
