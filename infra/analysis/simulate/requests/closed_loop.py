"""A closed-loop load test of one copy, as published serving benchmarks run them.

``concurrency`` clients each send a request of fixed prompt and output lengths and send the next one the moment
the last token of the previous arrives (``vllm bench serve --max-concurrency C --request-rate inf``, genai-perf
and AIPerf with a concurrency, LMI's and FMBench's concurrency levels). The copy is the replay's
:class:`~fastscale.infra.analysis.simulate.requests.batching.Batcher`, so this measures the latency model the
replay serves traces with, under the load the benchmarks put on a real server: ``tests/simulate`` compares it
with every published figure in ``tests/simulate/latency_benchmarks.json``, and ``scripts/fit_latency.py`` fits the
model's parameters on them.
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastscale.infra.analysis.simulate.params import SimulateParams
from fastscale.infra.analysis.simulate.requests.batching import Batcher
from fastscale.infra.analysis.simulate.requests.rates import ServiceRates, service_rates
from fastscale.infra.config import parse_config

#: The image of the one-component config a benchmark point is described with (never deployed).
_IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/benchmark:1"


@dataclass(frozen=True)
class LoadTestResult:
    """Medians over the requests of a closed-loop run, in seconds."""

    ttft: float  # time to first token, from the request's arrival at the copy
    itl: float  # inter-token latency: the median gap between two tokens of a request, over all gaps
    tpot: float  # time per output token after the first: a request's (end - first token) / (tokens - 1)
    e2e: float  # whole request
    output_tokens_per_second: float  # the copy's throughput over the run

    def get(self, metric: str) -> float:
        value: float = getattr(self, metric)
        return value


def _weighted_median(pairs: list[tuple[float, int]]) -> float:
    pairs = sorted(pairs)
    half = sum(count for _, count in pairs) / 2
    seen = 0
    for value, count in pairs:
        seen += count
        if seen >= half:
            return value
    return math.nan


def closed_loop(
    rates: ServiceRates, concurrency: int, input_tokens: int, output_tokens: int, requests: int | None = None,
) -> LoadTestResult:
    """``requests`` requests (default 20 per client, as the vLLM benchmark sweeps send) on one copy at
    ``concurrency`` clients; the invocation time-out does not apply."""
    if concurrency < 1 or input_tokens < 1 or output_tokens < 1:
        raise ValueError("concurrency and token counts must be positive")
    n = requests or max(40, 20 * concurrency)
    arrivals = [0.0] * n
    inputs, outputs = [input_tokens] * n, [output_tokens] * n
    status = bytearray(n)
    nan = math.nan
    ttft, e2e, wait = [nan] * n, [nan] * n, [nan] * n
    gaps: list[tuple[float, int]] = []
    released: list[int] = []
    copy = Batcher(rates, arrivals, inputs, outputs, status, ttft, e2e, wait, math.inf, gaps, released)
    overhead = rates.request_overhead_seconds
    pending: list[tuple[float, int]] = [(overhead, r) for r in range(min(concurrency, n))]
    sent = len(pending)
    done = 0
    while done < n:
        arrival = pending[0][0] if pending else math.inf
        if copy.next_time <= arrival:
            copy.fire()
        else:
            _, r = heapq.heappop(pending)
            copy.arrive(r, arrival)
        # Each client whose request left sends its next one at once.
        for _ in released:
            done += 1
            if sent < n:
                arrivals[sent] = copy.t
                heapq.heappush(pending, (copy.t + overhead, sent))
                sent += 1
        released.clear()
    tpot = [(e2e[r] - ttft[r]) / (output_tokens - 1) for r in range(n)] if output_tokens > 1 else [0.0]
    span = max(arrivals[r] + e2e[r] for r in range(n))
    return LoadTestResult(
        ttft=statistics.median(ttft),
        itl=_weighted_median(gaps) if gaps else 0.0,
        tpot=statistics.median(tpot),
        e2e=statistics.median(e2e),
        output_tokens_per_second=n * output_tokens / span,
    )


def benchmark_rates(point: Mapping[str, Any], model: Mapping[str, Any], params: SimulateParams) -> ServiceRates:
    """The rates of a published benchmark's server: one accelerator of ``point["instance_type"]`` (the catalog
    type with the benchmark's accelerator) serving ``model`` (``model_size_gb``, ``model_shape``) with the
    benchmark's server settings, on its host's CPUs, exactly as ``simulate --requests`` would rate a copy."""
    serving: dict[str, Any] = {"model_shape": dict(model["model_shape"])}
    for key in ("gpu_memory_utilization", "max_batched_tokens"):
        if key in point:
            serving[key] = point[key]
    component = {"name": "model", "image": _IMAGE, "model_size_gb": model["model_size_gb"],
                 "resources": {"accelerators": 1, "memory_mb": 1024}, "serving": serving}
    config = parse_config({"project": "benchmark", "region": "us-east-1", "endpoints": [
        {"name": "server", "instance_type": point["instance_type"], "inference_components": [component]}]})
    ep = config.endpoints[0]
    w = ep.inference_components[0]
    prompt, output = point["input_tokens"], point["output_tokens"]
    return service_rates(ep, w, point["concurrency"], params, cpus=point.get("cpus"),
                         mean_request_tokens=prompt + output, mean_context_tokens=prompt + output / 2)


def run_benchmark(point: Mapping[str, Any], model: Mapping[str, Any], params: SimulateParams) -> LoadTestResult:
    """A published benchmark point replayed: its load test on the model's copy."""
    rates = benchmark_rates(point, model, params)
    return closed_loop(rates, point["concurrency"], point["input_tokens"], point["output_tokens"])
