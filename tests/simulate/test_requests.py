"""The request-level model on hand-checkable traces: every expected number is worked out in a comment."""

from __future__ import annotations

import dataclasses

import pytest

from fastscale.infra.analysis.simulate import Alarm, ScaleFromZero, SimSpec, Timings, load_params
from fastscale.infra.analysis.simulate.requests.rates import ServiceRates, read_profile, roofline, service_rates
from fastscale.infra.analysis.simulate.requests.replay import simulate_requests
from fastscale.infra.analysis.simulate.requests.trace import (
    RequestInputError,
    RequestTrace,
    parse_request_trace,
    read_request_trace,
)

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


def rates(slots=1, prefill=100.0, decode=10.0, slowdown=0.0) -> ServiceRates:
    return ServiceRates(slots, prefill, decode, slowdown)


def test_one_slot_queues_the_second_request_behind_the_first():
    # Request 0 at 0 s: prefill 100 tokens / 100 tokens/s = 1 s (TTFT 1), decode 50 / 10 = 5 s -> done at 6.
    # Request 1 at 2 s waits for the slot until 6 (queue 4 s), prefill 1 s -> TTFT 5, done 6 + 1 + 2 = 9 (e2e 7).
    r = simulate_requests(spec(), trace((0, 100, 50), (2, 100, 20)), rates(), LOR, 60)
    st = r.stats
    assert (st.served, st.rejected) == (2, 0)
    assert st.ttft.p50 == pytest.approx(1) and st.ttft.p99 == pytest.approx(5)
    assert st.e2e.p50 == pytest.approx(6) and st.e2e.p99 == pytest.approx(7)
    assert st.queue.p99 == pytest.approx(4)
    # The engine reads the time-average of requests in flight or queued: second 2 holds both requests.
    assert r.result.demand[0] == pytest.approx(1) and r.result.demand[2] == pytest.approx(2)
    assert r.result.queued[2] == pytest.approx(1)


def test_prefill_is_one_prompt_at_a_time_and_decode_slows_with_the_batch():
    # Two slots, both requests at 0: prompts of 100 and 300 tokens at 100 tokens/s run one after the other,
    # so TTFTs are 1 s and 1 + 3 = 4 s. The first decodes alone (k = 1): 10 tokens/s, 20 tokens -> 1 + 2 = 3 s.
    # The second took its slot with k = 2: 10 / (1 + 0.5 x 1) = 6.67 tokens/s, 20 tokens -> 4 + 3 = 7 s.
    r = simulate_requests(spec(), trace((0, 100, 20), (0, 300, 20)), rates(slots=2, slowdown=0.5), LOR, 60)
    assert r.stats.ttft.p50 == pytest.approx(1) and r.stats.ttft.p99 == pytest.approx(4)
    assert r.stats.e2e.p50 == pytest.approx(3) and r.stats.e2e.p99 == pytest.approx(7)
    assert r.stats.queue.p99 == 0


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
    rows = [(0.1 * i, 100, 100) for i in range(4)]  # 4 requests of 11 s each on two one-slot copies
    lor = simulate_requests(two, trace(*rows), rates(), LOR, 60)
    # Alternating copies: requests 0,1 start at once; 2 and 3 wait for 11 s slots -> queue ~10.8 s each.
    assert sorted(round(x, 1) for x in [lor.stats.queue.p50, lor.stats.queue.p99]) == [0.0, 10.8]
    runs = [simulate_requests(two, trace(*[(0.1 * i, 100, 100) for i in range(40)]), rates(), "random", 600, seed=s)
            for s in (1, 1, 2)]
    assert runs[0].stats == runs[1].stats
    # Random routing ignores load: with 40 requests some copy gets more than its half, so it queues longer.
    assert runs[0].stats.queue.p99 > lor.stats.queue.p99


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
    assert azure.format == "azure" and azure.arrivals == (0.0, pytest.approx(1.0))
    assert azure.input_tokens == (374, 10) and azure.output_tokens == (44, 2)
    seconds = parse_request_trace("output_tokens,timestamp,input_tokens\n5,3.5,7\n\n1,0.25,2\n", "s.csv")
    assert seconds.arrivals == (0.25, 3.5) and seconds.input_tokens == (2, 7) and seconds.output_tokens == (1, 5)


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


def test_rates_from_the_roofline_config_and_profile(tmp_path):
    params = load_params()
    cfg = _config()
    ep, w = cfg.endpoints[0], cfg.endpoints[0].inference_components[0]
    # L4: 300 GB/s x 0.7 / 16 GB = 13.125 tokens/s alone; 121 TFLOPS x 0.4 x 1000 / 16 = 3025 prompt tokens/s.
    r = service_rates(ep, w, 5, params)
    assert (r.slots, r.prefill_tokens_per_second, r.decode_tokens_per_second) == (5, pytest.approx(3025), pytest.approx(13.125))
    measured = _config(prefill_tokens_per_second=2000, decode_tokens_per_second=20)
    mep, mw = measured.endpoints[0], measured.endpoints[0].inference_components[0]
    assert service_rates(mep, mw, 8.5, params).decode_tokens_per_second == 20
    # Carried to an L40S (864 GB/s): 20 x 864 / 300.
    other = service_rates(mep, mw, 8, params, instance_type="ml.g6e.2xlarge")
    assert other.decode_tokens_per_second == pytest.approx(20 * 864 / 300)
    assert roofline("ml.g6e.2xlarge", 1, 16, params)[1] / roofline("ml.g6.2xlarge", 1, 16, params)[1] == pytest.approx(864 / 300)
    profile = tmp_path / "p.yaml"
    profile.write_text("max_concurrency: 16\nprefill_tokens_per_second: 4000\ndecode_tokens_per_second: {1: 30, 8: 20, 16: 10}\n")
    p = service_rates(ep, w, 5, params, read_profile(profile))
    assert p.slots == 16 and p.prefill_tokens_per_second == 4000
    # Interpolated between 1 -> 30 and 8 -> 20; beyond 16 the copy's throughput (160 tokens/s) holds.
    assert p.per_sequence_decode(1) == 30 and p.per_sequence_decode(4.5) == pytest.approx(25)
    assert p.per_sequence_decode(32) == pytest.approx(5)


def test_no_rates_and_bad_profiles_are_input_errors(tmp_path):
    cfg = _config()
    ep, w = cfg.endpoints[0], cfg.endpoints[0].inference_components[0].model_copy(update={"model_size_gb": None})
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
    assert (trace.input_tokens, trace.output_tokens) == ((MAX_REQUEST_TOKENS,), (12,))
