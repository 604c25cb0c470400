"""The request-level model on hand-checkable traces: every expected number is worked out in a comment."""

from __future__ import annotations

import dataclasses

import pytest

from fastscale.infra.analysis.simulate import Alarm, ScaleFromZero, SimSpec, Timings, load_params
from fastscale.infra.analysis.simulate.requests.rates import ServiceRates, read_profile, roofline, service_rates
from fastscale.infra.analysis.simulate.requests.replay import RequestLoad, simulate_requests
from fastscale.infra.analysis.simulate.requests.trace import (
    RequestInputError,
    RequestTrace,
    parse_request_trace,
    read_request_trace,
)
from fastscale.infra.model.resolved import resolve

LOR = "least_outstanding_requests"


def spec(**changes) -> SimSpec:
    """Auto scaling off: a fixed number of copies in service from the start, one instance each."""
    base = SimSpec(
        target=1.0,
        units_min=1,
        units_max=1,
        instances_min=1,
        instances_max=4,
        copies_per_instance=1,
        timings=Timings(decision=5, copy_on_instance=100, provisioning=100, copy_on_new_instance=150),
        scale_out=None,
        scale_in=None,
        scale_in_threshold=0.9,
        scale_in_cooldown=300,
        scale_out_cooldown=0,
        lag=5,
        reinvoke=60,
        scale_from_zero=None,
        service_time=10.0,
        price_per_hour=3.6,
        initial_units=1,
    )
    return dataclasses.replace(base, **changes)


def trace(*rows: tuple[float, int, int]) -> RequestTrace:
    return RequestTrace(tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows), "t.csv", "seconds")


def rates(slots=1, prefill=100.0, decode=10.0, slowdown=0.0, **batching) -> ServiceRates:
    return ServiceRates(slots, prefill, decode, slowdown, **batching)


def test_one_slot_queues_the_second_request_behind_the_first():
    # Request 0 at 0 s: its 100-token prompt is one step of 100 tokens / 100 tokens/s = 1 s, which gives its first
    # token (TTFT 1); its 49 other tokens take a 0.1 s step each -> done at 1 + 4.9 = 5.9.
    # Request 1 at 2 s waits for the slot until 5.9 (queue 3.9 s), prompt step 1 s -> TTFT 4.9, then 19 steps
    # -> done at 6.9 + 1.9 = 8.8 (e2e 6.8).
    r = simulate_requests(spec(), trace((0, 100, 50), (2, 100, 20)), rates(), LOR, 60)
    st = r.stats
    assert (st.served, st.rejected) == (2, 0)
    assert st.ttft.p50 == pytest.approx(1) and st.ttft.p99 == pytest.approx(4.9)
    assert st.e2e.p50 == pytest.approx(5.9) and st.e2e.p99 == pytest.approx(6.8)
    assert st.queue.p99 == pytest.approx(3.9)
    # The engine reads the time-average of requests in flight or queued: second 2 holds both requests.
    assert r.result.demand[0] == pytest.approx(1) and r.result.demand[2] == pytest.approx(2)
    assert r.result.queued[2] == pytest.approx(1)


def test_a_long_prompt_is_prefilled_in_chunks_that_slow_the_decoding_sequences():
    # Two slots, both requests at 0, a budget of 100 tokens a step. Step 1: request 0's 100-token prompt (1 s):
    # its first token at 1. Then each step holds request 0's next token and 99 of request 1's 300 prompt tokens:
    # (1 + 99) / 100 = 1 s a step, three of them (297 tokens), then a step with the last 3 prompt tokens, as long
    # as a one-sequence decode step (0.1 s): request 1's first token at 4.1, request 0's 5th token too.
    # From there both decode at 0.1 x (1 + 0.5) = 0.15 s a step: request 0's 15 last tokens end at 6.35; request
    # 1 has 4 tokens left, alone: 6.75. Without chunking the prompts would have run one after the other.
    r = simulate_requests(spec(), trace((0, 100, 20), (0, 300, 20)), rates(slots=2, slowdown=0.5, token_budget=100), LOR, 60)
    assert r.stats.ttft.p50 == pytest.approx(1) and r.stats.ttft.p99 == pytest.approx(4.1)
    assert r.stats.e2e.p50 == pytest.approx(6.35) and r.stats.e2e.p99 == pytest.approx(6.75)
    assert r.stats.queue.p99 == 0
    # With a budget that holds both prompts, they share one 400-token step: both first tokens at 4 s.
    wide = simulate_requests(spec(), trace((0, 100, 20), (0, 300, 20)), rates(slots=2, slowdown=0.5), LOR, 60)
    assert wide.stats.ttft.p50 == pytest.approx(4) and wide.stats.ttft.p99 == pytest.approx(4)


def test_the_request_overhead_is_added_before_the_server():
    # 0.05 s outside the accelerator: the request reaches the server at 0.05; TTFT and e2e grow by as much.
    plain = simulate_requests(spec(), trace((0, 100, 50)), rates(), LOR, 60)
    slow = simulate_requests(spec(), trace((0, 100, 50)), rates(request_overhead_seconds=0.05), LOR, 60)
    assert slow.stats.ttft.p50 == pytest.approx(plain.stats.ttft.p50 + 0.05) == pytest.approx(1.05)
    assert slow.stats.e2e.p50 == pytest.approx(plain.stats.e2e.p50 + 0.05)


def test_a_request_without_a_first_token_within_the_timeout_fails_and_leaves_the_queue():
    # One slot, held by request 0 for 1 + 100 = 101 s. Request 1 (at 1 s) and 2 (at 2 s) queue; with a 30 s
    # timeout both leave the queue at 31 s and 32 s and fail. Request 3 at 200 s finds the slot free.
    t = trace((0, 100, 1000), (1, 100, 10), (2, 100, 10), (200, 100, 10))
    r = simulate_requests(spec(), t, rates(), LOR, 30)
    st = r.stats
    assert (st.served, st.timed_out, st.no_capacity) == (2, 2, 0)
    assert st.rejected_fraction == pytest.approx(0.5)
    # Gone from the queue at their time-out: second 40 holds only request 0.
    assert r.result.demand[40] == pytest.approx(1) and r.result.queued[40] == 0
    # A first token that would come too late also fails, even when the request got its slot in time.
    late = simulate_requests(spec(), trace((0, 5000, 1)), rates(), LOR, 30)  # prefill 50 s > 30 s
    assert (late.stats.served, late.stats.timed_out) == (0, 1)


def test_least_outstanding_requests_spreads_and_random_is_seeded():
    two = spec(units_min=2, units_max=2, initial_units=2)
    rows = [(0.1 * i, 100, 100) for i in range(4)]  # 4 requests of 1 + 99 x 0.1 = 10.9 s on two one-slot copies
    lor = simulate_requests(two, trace(*rows), rates(), LOR, 60)
    # Alternating copies: requests 0,1 start at once; 2 and 3 wait for the slots until 10.9 and 11.0: 10.7 s each.
    assert sorted(round(x, 1) for x in [lor.stats.queue.p50, lor.stats.queue.p99]) == [0.0, 10.7]
    runs = [simulate_requests(two, trace(*[(0.1 * i, 100, 100) for i in range(40)]), rates(), "random", 600, seed=s)
            for s in (1, 1, 2)]
    assert runs[0].stats == runs[1].stats
    # Random routing ignores load: with 40 requests some copy gets more than its half, so it queues longer.
    assert runs[0].stats.queue.p99 > lor.stats.queue.p99


def test_random_routing_draws_what_randrange_draws():
    """The replay draws a random copy as ``random.Random.randrange(n)`` does (``getrandbits(n.bit_length())`` until
    below ``n``) without calling it: the same seed routes the same requests to the same copies as randrange would."""
    import random

    for seed in range(5):
        for n in range(1, 20):
            expected, drawn = random.Random(seed), random.Random(seed)
            for _ in range(50):
                c = drawn.getrandbits(n.bit_length())
                while c >= n:
                    c = drawn.getrandbits(n.bit_length())
                assert c == expected.randrange(n)


@pytest.mark.parametrize("seed", range(4))
def test_random_routing_sends_each_request_to_the_copy_randrange_picks(seed):
    """Two one-slot copies, 12 requests of 10.9 s alone arriving within 0.12 s: each waits about 10.9 s for every
    earlier request routed to its copy, so the waits say which copy each request went to."""
    import random

    load = RequestLoad(trace(*[(0.01 * i, 100, 100) for i in range(12)]), rates(), "random", 600, seed)
    for second in range(150):
        load.step(second, [0, 1])
    load.finish()
    draw = random.Random(seed)
    picks = [draw.randrange(2) for _ in range(12)]
    ahead = [picks[:i].count(p) for i, p in enumerate(picks)]
    assert [round(w / 10.9) for w in load.wait] == ahead and 0 < sum(picks) < 12  # both copies used


@pytest.mark.parametrize("routing", ["prefix_aware", "kv_aware"])
def test_prefix_and_kv_aware_routing_queue_as_least_outstanding_requests(routing):
    """No prompt text in a trace, no documented cache-hit saving: modelled as least outstanding requests."""
    two = spec(units_min=2, units_max=2, initial_units=2)
    rows = trace(*[(0.1 * i, 100, 100) for i in range(40)])
    aware = simulate_requests(two, rows, rates(), routing, 600)
    assert aware.stats == simulate_requests(two, rows, rates(), LOR, 600).stats
    assert aware.stats != simulate_requests(two, rows, rates(), "random", 600, seed=1).stats
    assert aware.routing == routing  # reported as configured


def test_requests_fail_with_no_copy_in_service_and_the_step_policy_scales_from_zero():
    # Scale to zero: no copy at the start; every request fails (NoCapacity) until the alarm adds one.
    zero = spec(
        units_min=0, units_max=1, instances_min=0, initial_units=None, scale_out=Alarm(10, 3), scale_in=Alarm(60, 15),
        scale_from_zero=ScaleFromZero(Alarm(60, 1), 60),
    )
    rows = [(float(t), 10, 10) for t in range(101, 900, 2)]  # idle first minute: the endpoint starts at zero
    r = simulate_requests(zero, trace(*rows), rates(), LOR, 60)
    # The first failure (101 s) is in the datapoint [60, 120), which reaches the alarm at 125; the decision
    # lands at 130 and a new instance serves 100 + 150 s later (380): requests before that fail, later ones are served.
    assert r.result.serving[379] == 0 and r.result.serving[380] == 1
    assert r.stats.no_capacity == len([t for t, _, _ in rows if t < 380])
    assert r.stats.served == len(rows) - r.stats.no_capacity
    assert r.result.summary.rejected_requests == r.stats.no_capacity


def test_the_concurrency_the_requests_make_drives_target_tracking():
    auto = spec(units_max=4, scale_out=Alarm(10, 3), scale_in=Alarm(60, 15), initial_units=None, target=2.0)
    # 2 requests per second of 10 s each: ~20 in flight on one 5-slot copy, far above the target of 2.
    rows = [(100 + i * 0.5, 100, 90) for i in range(1200)]  # idle first minute: one copy (the minimum) at the start
    r = simulate_requests(auto, trace(*rows), rates(slots=5), LOR, 60)
    assert r.result.desired[100] == 1 and max(r.result.desired) == 4
    assert r.result.summary.detection_seconds is not None and r.result.summary.detection_seconds <= 40


def test_azure_and_seconds_traces_parse_and_sort():
    azure = parse_request_trace(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:47.6805900,10,2\n2023-11-16 18:15:46.6805900,374,44\n",
        "a.csv",
    )
    assert azure.format == "azure" and list(azure.arrivals) == [0.0, pytest.approx(1.0)]
    assert list(azure.input_tokens) == [374, 10] and list(azure.output_tokens) == [44, 2]
    seconds = parse_request_trace("output_tokens,timestamp,input_tokens\n5,3.5,7\n\n1,0.25,2\n", "s.csv")
    assert (list(seconds.arrivals), list(seconds.input_tokens), list(seconds.output_tokens)) == ([0.25, 3.5], [2, 7], [1, 5])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("when,prompt,output\n1,2,3\n", "line 1: expected the header"),
        ("timestamp,input_tokens,output_tokens\n", "no requests"),
        ("timestamp,input_tokens,output_tokens\n0,1,1\n1,x,1\n", r"line 3: input_tokens \(column 2\) is not a whole number"),
        ("timestamp,input_tokens,output_tokens\n0,1,1\n1,1\n", "line 3: 2 values for 3 columns"),
        ("timestamp,input_tokens,output_tokens\n-1,1,1\n", "line 2: timestamp must be a finite number >= 0"),
        ("timestamp,input_tokens,output_tokens\n0,1,-4\n", r"line 2: output_tokens \(column 3\) must be 0 or more"),
        ("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.x,1,1\n", "line 2: TIMESTAMP"),
    ],
)
def test_malformed_traces_name_the_line(text, message):
    with pytest.raises(RequestInputError, match=message):
        parse_request_trace(text, "t.csv")


def test_a_missing_trace_is_an_input_error(tmp_path):
    with pytest.raises(RequestInputError, match="trace file not found"):
        read_request_trace(tmp_path / "nope.csv")


def test_the_example_trace_is_the_committed_generator_s_output(tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    out = tmp_path / "t.csv"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_request_trace.py"), "-o", str(out)], check=True,
                   capture_output=True)
    committed = ROOT / "examples" / "requests-1h-synthetic.csv"
    assert out.read_bytes() == committed.read_bytes()
    t = read_request_trace(committed)
    assert 10_000 <= len(t) <= 20_000 and t.seconds <= 3600 and committed.stat().st_size < 1_000_000


# ------------------------------------------------------------------------------------------ rates


def _config(**serving):
    from fastscale.infra.config import parse_config

    component = {
        "name": "llm", "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1", "model_size_gb": 16,
        "resources": {"accelerators": 1, "memory_mb": 16384}, "serving": serving,
    }
    return parse_config({"project": "p", "region": "us-east-1", "endpoints": [
        {"name": "e", "instance_type": "ml.g6.2xlarge", "inference_components": [component]}]})


def _ep_w(cfg):
    """The resolved endpoint and component workload of a one-component config."""
    ep = resolve(cfg).endpoints[0]
    return ep, ep.components[0].workload


def test_rates_from_the_roofline_config_and_profile(tmp_path):
    params = load_params()
    r_ = params.requests
    ep, w = _ep_w(_config())
    r = service_rates(ep, w, 5, params)
    # One L4 (300 GB/s, 121 TFLOPS) for the copy, with the 8 vCPUs of ml.g6.2xlarge. A step with one sequence alone:
    # the step's CPU time (a fixed part and one that shrinks with more CPUs), one sequence's, and the 16 GB of
    # weights read at the bandwidth efficiency. Prompt tokens: the dense FP16 throughput at the compute efficiency
    # over 16 GB (2 FLOP per parameter at 16 bits).
    step = r_.step_overhead_seconds.value + r_.step_overhead_cpu_seconds.value / 8
    alone = step + r_.sequence_overhead_seconds.value + 16 / (r_.decode_bandwidth_efficiency.value * 300)
    assert r.decode_tokens_per_second == pytest.approx(1 / alone)
    assert r.prefill_tokens_per_second == pytest.approx(r_.prefill_compute_efficiency.value * 121 * 1000 / 16)
    assert r.step_overhead_seconds == pytest.approx(step)
    assert r.request_overhead_seconds == pytest.approx(r_.request_overhead_seconds.value + r_.request_overhead_cpu_seconds.value / 8)
    # The KV cache: 24 GiB x 0.9, less the reserve and the weights, over 128 KiB a token (the stated default for a
    # model of 8-20 GB: Llama 3.1 8B's 32 layers x 8 KV heads x 128 x 2 x 2 bytes), for requests of 1,280 tokens.
    kv = int((24 * 2**30 / 1e9 * 0.9 - r_.memory_reserve_gb_per_accelerator.value - 16) * 1e9 // 131072)
    assert r.kv_cache_tokens == kv and r.slots == kv // 1280 and r.token_budget == 2048  # vLLM's default below 70 GiB
    # A trace of longer requests fits fewer of them.
    assert service_rates(ep, w, 5, params, mean_request_tokens=4000).slots == kv // 4000
    measured = _config(prefill_tokens_per_second=2000, decode_tokens_per_second=20)
    mep, mw = _ep_w(measured)
    assert service_rates(mep, mw, 8.5, params).decode_tokens_per_second == 20
    # Carried to an L40S (864 GB/s) by the ratio of the two rooflines (overheads included).
    other = service_rates(mep, mw, 8, params, instance_type="ml.g6e.2xlarge")
    ratio = roofline("ml.g6e.2xlarge", 1, 16, params)[1] / roofline("ml.g6.2xlarge", 1, 16, params)[1]
    assert other.decode_tokens_per_second == pytest.approx(20 * ratio)
    assert 864 / 300 * 0.9 < ratio < 864 / 300  # bandwidth-bound, less the fixed overheads
    profile = tmp_path / "p.yaml"
    profile.write_text("max_concurrency: 16\nprefill_tokens_per_second: 4000\ndecode_tokens_per_second: {1: 30, 8: 20, 16: 10}\n")
    p = service_rates(ep, w, 5, params, read_profile(profile))
    assert p.slots == 16 and p.prefill_tokens_per_second == 4000
    # Interpolated between 1 -> 30 and 8 -> 20; beyond 16 the copy's throughput (160 tokens/s) holds.
    assert p.per_sequence_decode(1) == 30 and p.per_sequence_decode(4.5) == pytest.approx(25)
    assert p.per_sequence_decode(32) == pytest.approx(5)
    # A measured table gives a decode-only step's time: 8 sequences, 1 / 20 s a step.
    assert p.step_seconds(8, 8, 0, 0) == pytest.approx(1 / 20)


def test_slots_come_from_the_kv_cache_unless_the_config_says_otherwise():
    params = load_params()
    r_ = params.requests
    free = 24 * 2**30 / 1e9 * 0.9 - r_.memory_reserve_gb_per_accelerator.value - 16  # GB of one L4 for the KV cache

    def slots(**serving):
        return service_rates(*_ep_w(_config(**serving)), 5, params).slots

    # Qwen3-8B's shape: 36 layers x 8 KV heads x 128 x 2 x 2 bytes = 144 KiB a token; an fp8 cache takes half.
    shape = {"layers": 36, "kv_heads": 8, "head_dim": 128}
    assert slots(model_shape=shape) == int(free * 1e9 // 147456) // 1280
    assert slots(model_shape={**shape, "kv_cache_dtype": "fp8"}) == int(free * 1e9 // 73728) // 1280
    # Less of the memory for the server: 80% instead of 90%.
    assert slots(gpu_memory_utilization=0.8) == int((24 * 2**30 / 1e9 * 0.8 - r_.memory_reserve_gb_per_accelerator.value
                                                      - 16) * 1e9 // 131072) // 1280
    assert slots(max_concurrency=6.5) == 6
    # A small model: more than the server runs at once -> vLLM's limit of 256 sequences below 70 GiB.
    ep, w = _ep_w(_config())
    w = dataclasses.replace(w, model_size_gb=1.0)
    assert service_rates(ep, w, 5, params).slots == 256
    # On an H100 (80 GiB): a budget of 8192 tokens a step and up to 1024 sequences.
    h100 = service_rates(ep, w, 5, params, instance_type="ml.p5.4xlarge", accelerators=1)
    assert (h100.token_budget, h100.slots) == (8192, 1024)


def test_no_rates_and_bad_profiles_are_input_errors(tmp_path):
    ep, w = _ep_w(_config())
    w = dataclasses.replace(w, model_size_gb=None)
    with pytest.raises(RequestInputError, match="no token rates.*model_size_gb"):
        service_rates(ep, w, 5, load_params())
    bad = tmp_path / "bad.yaml"
    bad.write_text("decode_tokens_per_second: 5\nmax_concurency: 4\n")
    with pytest.raises(RequestInputError, match="line 2: a key that is not a profile setting; did you mean "
                                                "max_concurrency") as failed:
        read_profile(bad)
    assert "max_concurency" not in str(failed.value)  # the file's own text is never repeated
    bad.write_text("decode_tokens_per_second: {0: 5}\n")
    with pytest.raises(RequestInputError, match="table of sequences"):
        read_profile(bad)


#: What a file named by mistake may hold: it must never come back in an error message.
LEAK = "AWS_SECRET_ACCESS_KEY=wJalrFAKEsecret"


@pytest.mark.parametrize("text", [
    f"{LEAK}\0HOME=/root\0",  # /proc/self/environ, or a .env file
    f"{LEAK},input_tokens,output_tokens\n0,1,1\n",
    f"timestamp,input_tokens,output_tokens\n{LEAK},1,1\n",
    f"timestamp,input_tokens,output_tokens\n0,{LEAK},1\n",
    f"timestamp,input_tokens,output_tokens\n0,1,-{LEAK}\n",
    f"TIMESTAMP,ContextTokens,GeneratedTokens\n{LEAK},1,1\n",
])
def test_no_error_repeats_what_the_trace_holds(text):
    with pytest.raises(RequestInputError) as failed:
        parse_request_trace(text, "t.csv")
    assert "wjalr" not in str(failed.value).lower() and str(failed.value).startswith("t.csv")


def test_the_header_error_says_what_is_missing_in_its_own_words():
    with pytest.raises(RequestInputError, match="line 1 has 2 column.s., without output_tokens"):
        parse_request_trace("timestamp,input_tokens\n0,1\n", "t.csv")
    with pytest.raises(RequestInputError, match="line 1 has 1 column.s., without TIMESTAMP, ContextTokens, GeneratedTokens"):
        parse_request_trace("when\n0\n", "t.csv")


@pytest.mark.parametrize("count", ["100000001", "9" * 4000, "9" * 5000, "00000000000000000001" + "0" * 9])
def test_token_counts_past_the_limit_are_input_errors(count):
    with pytest.raises(RequestInputError, match=r"line 2: input_tokens \(column 2\) is more than 100,000,000 tokens"):
        parse_request_trace(f"timestamp,input_tokens,output_tokens\n0,{count},1\n", "t.csv")


def test_token_counts_up_to_the_limit_are_read():
    from fastscale.infra.base.limits import MAX_REQUEST_TOKENS

    trace = parse_request_trace(f"timestamp,input_tokens,output_tokens\n0,{MAX_REQUEST_TOKENS},0000012\n", "t.csv")
    assert (list(trace.input_tokens), list(trace.output_tokens)) == ([MAX_REQUEST_TOKENS], [12])


def test_a_copy_taken_out_of_service_finishes_what_it_holds_and_takes_nothing_new():
    from fastscale.infra.analysis.simulate.requests.replay import RequestLoad

    # One slot a copy; a 100-token prompt is 1 s, 50 more tokens 5 s: each request alone takes 6 s.
    rows = [(0.1 * r, 100, 51) for r in range(5)] + [(1.5, 100, 51)]
    load = RequestLoad(trace(*rows), rates(), LOR, 60)
    # Least outstanding requests, ties to the first copy in the engine's order (1, 3, 2): requests 0 and 3 on copy
    # 1, 1 and 4 on copy 3 (3 and 4 queued), 2 on copy 2.
    load.step(0, [1, 3, 2])
    for second in range(1, 25):
        load.step(second, [1, 3])  # copy 2 leaves service while it serves request 2
    load.finish()
    assert bytes(load.status) == bytes([1] * 6)
    # Request 2 runs to its end on copy 2 (connection draining): 6 s, as alone.
    assert load.e2e[2] == pytest.approx(6.0)
    assert load.wait[4] == pytest.approx(5.7) and load.e2e[4] == pytest.approx(11.7)  # behind request 1
    # Request 5 goes to copy 1, though copy 2 holds fewer: it waits for requests 0 and 3 to end (at 6 s and 12 s).
    assert load.wait[5] == pytest.approx(10.5) and load.e2e[5] == pytest.approx(16.5)
