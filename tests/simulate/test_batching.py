"""One copy's continuous batching: the closed-form batcher against a literal step-by-step server, and the rules it
keeps (token budget, slots, next-step admission, request overhead, time-outs) on hand-checkable cases."""

from __future__ import annotations

import math
import random
from collections import deque

import pytest

from fastscale.infra.analysis.simulate.requests.batching import Batcher
from fastscale.infra.analysis.simulate.requests.closed_loop import closed_loop
from fastscale.infra.analysis.simulate.requests.rates import ServiceRates
from fastscale.infra.analysis.simulate.requests.results import SERVED, TIMED_OUT


def serve(rates: ServiceRates, rows: list[tuple[float, int, int]], timeout: float = math.inf):
    """Open-loop requests (arrival, prompt, output) on one batcher, as the replay drives each copy."""
    n = len(rows)
    arrivals = [r[0] for r in rows]
    status = bytearray(n)
    ttft, e2e, wait = [math.nan] * n, [math.nan] * n, [math.nan] * n
    copy = Batcher(rates, arrivals, [r[1] for r in rows], [r[2] for r in rows], status, ttft, e2e, wait, timeout)
    i = 0
    while i < n or copy.next_time < math.inf:
        at = arrivals[i] + rates.request_overhead_seconds if i < n else math.inf
        if copy.next_time <= at:
            copy.fire()
        else:
            copy.arrive(i, at)
            i += 1
    return status, ttft, e2e, wait


def literal(rates: ServiceRates, rows: list[tuple[float, int, int]]):
    """The same server one step at a time: at each step boundary admit who has arrived (FIFO, up to the slots),
    give every decoding sequence a token and the prompts chunks up to the budget, in admission order."""
    n = len(rows)
    ttft, e2e = [math.nan] * n, [math.nan] * n
    arrive = deque(sorted(range(n), key=lambda r: rows[r][0]))
    waiting: deque[int] = deque()
    prefill: list[list[int]] = []  # [request, prompt tokens left]
    decoding: dict[int, int] = {}  # request -> tokens left
    t = 0.0
    while arrive or waiting or prefill or decoding:
        if not (waiting or prefill or decoding):
            t = max(t, rows[arrive[0]][0] + rates.request_overhead_seconds)
        while arrive and rows[arrive[0]][0] + rates.request_overhead_seconds <= t + 1e-9:
            waiting.append(arrive.popleft())
        while waiting and len(prefill) + len(decoding) < rates.slots:
            r = waiting.popleft()
            prefill.append([r, max(1, rows[r][1])])
        if not (prefill or decoding):
            continue
        k = len(decoding)
        room = max(1, rates.token_budget - k)
        chunks = []
        for entry in prefill:
            if room <= 0:
                break
            take = min(entry[1], room)
            chunks.append((entry, take))
            room -= take
        kv = sum(rows[r][1] + rows[r][2] / 2 for r in decoding)
        t += rates.step_seconds(k, k + len(prefill), kv, sum(take for _, take in chunks))
        for r in list(decoding):
            decoding[r] -= 1
            if decoding[r] == 0:
                del decoding[r]
                e2e[r] = t - rows[r][0]
        for entry, take in chunks:
            entry[1] -= take
            if entry[1] == 0:
                r = entry[0]
                prefill.remove(entry)
                ttft[r] = t - rows[r][0]
                if rows[r][2] <= 1:
                    e2e[r] = ttft[r]
                else:
                    decoding[r] = rows[r][2] - 1
    return ttft, e2e


def modelled(**changes) -> ServiceRates:
    base = dict(slots=4, prefill_tokens_per_second=2000.0, decode_tokens_per_second=50.0, token_budget=64,
                step_overhead_seconds=0.001, sequence_overhead_seconds=0.0002, kv_read_seconds_per_token=2e-6,
                request_overhead_seconds=0.003)
    return ServiceRates(**{**base, **changes})


@pytest.mark.parametrize("seed", range(12))
def test_the_closed_form_batcher_equals_a_step_by_step_server(seed):
    rng = random.Random(seed)
    rates = modelled(slots=rng.choice([1, 2, 4, 8]), token_budget=rng.choice([16, 64, 512]),
                     decode_slowdown_per_sequence=rng.choice([0.0, 0.0, 0.3]))
    rows, t = [], 0.0
    for _ in range(40):
        t += rng.expovariate(rng.choice([2.0, 10.0, 50.0]))
        rows.append((round(t, 4), rng.choice([0, 1, 5, 40, 150]), rng.choice([1, 2, 7, 30])))
    status, ttft, e2e, _ = serve(rates, rows)
    want_ttft, want_e2e = literal(rates, rows)
    assert all(s == SERVED for s in status)
    assert ttft == pytest.approx(want_ttft, rel=1e-9, abs=1e-9)
    assert e2e == pytest.approx(want_e2e, rel=1e-9, abs=1e-9)


def test_an_arrival_joins_at_the_next_step_boundary():
    # Request 0 alone decodes in 0.1 s steps from its first token at 0.1 (a 1-token prompt step, as long as a decode
    # step). Request 1 arrives at 0.25, during the step from 0.2 to 0.3: its prompt starts at 0.3, in a step with
    # request 0's token, (1 + 1) / 1000 tokens/s of compute, shorter than the 0.1 s of memory -> first token at 0.4.
    rates = ServiceRates(4, 1000.0, 10.0)
    _, ttft, _, _ = serve(rates, [(0.0, 1, 50), (0.25, 1, 5)])
    assert ttft == pytest.approx([0.1, 0.15])


def test_requests_beyond_the_slots_wait_for_one_and_leave_at_the_timeout():
    # One slot: request 0 holds it from 0 to 0.1 + 99 x 0.1 = 10.0 s. Request 1 (at 1 s) waits 9 s for it; request 2
    # (at 2 s) would wait 8 s and more, past its 5 s time-out: it fails and never holds the slot.
    rates = ServiceRates(1, 1000.0, 10.0)
    status, ttft, e2e, wait = serve(rates, [(0.0, 1, 100), (1.0, 1, 2)], timeout=60)
    assert wait[1] == pytest.approx(9.0) and ttft[1] == pytest.approx(9.1)
    status, ttft, _, _ = serve(rates, [(0.0, 1, 100), (2.0, 1000, 2)], timeout=5)
    # The replay takes queued requests off at their time-out; served on its own, request 2's prompt of 1000 tokens
    # ends at 10 + 1 = 11 s, 9 s after it arrived: past the time-out, so it fails at its first token.
    assert status[1] == TIMED_OUT and math.isnan(ttft[1])


def test_a_prompt_above_the_budget_takes_several_steps():
    # 64 tokens a step: a 150-token prompt takes 64 + 64 + 22, three steps. At 20,000 tokens/s a chunk's compute
    # (3.2 ms at most) stays under the weights' read (1/50 s - 1.2 ms of overhead = 18.8 ms): 20 ms a step.
    rates = modelled(request_overhead_seconds=0.0, prefill_tokens_per_second=20_000.0)
    _, ttft, _, _ = serve(rates, [(0.0, 150, 1)])
    assert ttft[0] == pytest.approx(3 * 0.02)
    # At 200 tokens/s the chunks are compute-bound: the whole prompt's compute and three steps' overhead.
    big = modelled(request_overhead_seconds=0.0, prefill_tokens_per_second=200.0)
    _, ttft, _, _ = serve(big, [(0.0, 150, 1)])
    assert ttft[0] == pytest.approx(3 * 0.0012 + 150 / 200)


def test_decoding_slows_with_the_kv_cache_and_the_sequences_it_holds():
    rates = modelled()
    one = rates.decode_step_seconds(1, kv_tokens=0)
    assert one == pytest.approx(1 / 50)
    # Eight sequences of 1,000 tokens each: 7 more sequences' overhead and 8,000 tokens of KV cache to read.
    assert rates.decode_step_seconds(8, kv_tokens=8000) == pytest.approx(one + 7 * 0.0002 + 8000 * 2e-6)


def test_time_to_first_token_grows_with_the_clients_of_a_closed_loop():
    # A copy like a small model on an L4: prompts of 256 tokens, 128 out. More clients send their prompts into
    # steps full of other prompts and decode tokens, and wait for them.
    rates = modelled(slots=64, prefill_tokens_per_second=40_000.0, decode_tokens_per_second=200.0, token_budget=2048,
                     request_overhead_seconds=0.02)
    ttft = [closed_loop(rates, c, 256, 128).ttft for c in (1, 4, 16, 32)]
    assert ttft == sorted(ttft) and ttft[-1] > 2.5 * ttft[0]
    assert ttft[0] == pytest.approx(0.02 + 0.001 + 0.0002 + 256 / 40_000)


@pytest.mark.parametrize("seed", range(24))
def test_the_replay_serves_a_copy_to_the_last_bit_as_the_batcher_does(seed):
    """The replay runs the batcher's rules inlined in its own loop: on one copy, every request's status, first
    token, end and wait are the very floats the batcher gives (queues, chunked prompts, measured decode)."""
    from array import array

    from fastscale.infra.analysis.simulate.requests.replay import RequestLoad
    from fastscale.infra.analysis.simulate.requests.trace import RequestTrace

    rng = random.Random(seed)
    count = rng.choice([3, 40, 300])
    rows = sorted((round(rng.uniform(0, 30), 3), rng.choice([0, 1, 7, 300, 3000]), rng.choice([1, 2, 41, 300]))
                  for _ in range(count))
    measured = {"decode_slowdown_per_sequence": 0.05} if seed % 3 == 1 else (
        {"decode_table": ((1, 40.0), (4, 25.0))} if seed % 3 == 2 else {})
    rates = ServiceRates(
        slots=rng.choice([1, 3, 16]), prefill_tokens_per_second=rng.choice([3000.0, 9000.0]),
        decode_tokens_per_second=rng.choice([25.0, 60.0]), token_budget=rng.choice([64, 512, 1 << 30]),
        step_overhead_seconds=rng.choice([0.0, 0.004]), sequence_overhead_seconds=rng.choice([0.0, 0.0002]),
        kv_read_seconds_per_token=rng.choice([0.0, 2e-8]), request_overhead_seconds=rng.choice([0.0, 0.03]),
        mean_context_tokens=500.0, **measured)
    status, ttft, e2e, wait = serve(rates, rows)
    load = RequestLoad(RequestTrace(*zip(*rows, strict=True), "t.csv", "seconds"), rates, "least_outstanding_requests",
                       1e9)
    for second in range(int(rows[-1][0]) + 1):
        load.step(second, [1])
    load.finish()
    assert bytes(load.status) == bytes(status) and set(status) == {SERVED}
    for replayed, batcher in ((load.ttft, ttft), (load.e2e, e2e), (load.wait, wait)):
        assert replayed.tobytes() == array("d", batcher).tobytes()
