"""How long the request-level model and `fastscale recommend` take on a one-hour trace.

    .venv/bin/python bench/request_sim.py                 # human-readable
    .venv/bin/python bench/request_sim.py --json
    .venv/bin/python bench/request_sim.py --skip-search   # only the single simulation

Two measurements:

1. One request-level simulation of a one-hour trace of 20,000 requests (written by
   scripts/gen_request_trace.py with its fixed seed) on the scale-to-zero example's component, its maximum
   raised so the peak is served: parse time, then the median of 5 runs after a warm-up, wall and CPU time of
   this process. Target: under 1 s per run.
2. `recommend`'s search with its default grid and default SLO (`--max-rejected 0`, which lets hopeless
   candidates stop early), on 2 worker processes, on the same one-hour 20,000-request trace and on the
   example one-hour trace (examples/requests-1h-synthetic.csv, 12,044 requests): the number of candidates,
   candidates per second, the wall time, and the CPU time of the workers (which shows what the run would
   take on two idle cores when the machine is shared). Target: at least 500 candidates within 60 s on two
   cores.

Exits 1 when a target is missed on wall time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "scale-to-zero-short-tail.yaml"
HOUR_TRACE = ROOT / "examples" / "requests-1h-synthetic.csv"
SIM_TARGET_S = 1.0
SEARCH_TARGET_S = 60.0
SEARCH_MIN_CANDIDATES = 500


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def trace_20k() -> tuple[Any, float]:
    """The one-hour 20,000-request trace and the seconds it took to parse."""
    from fastscale.infra.analysis.simulate.requests import read_request_trace

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t20k.csv"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_request_trace.py"), "--requests", "20000",
                        "-o", str(path)], check=True, capture_output=True)
        start = time.perf_counter()
        trace = read_request_trace(path)
        return trace, time.perf_counter() - start


def single_simulation(trace: Any, parse: float) -> dict[str, float | int]:
    from fastscale.infra.analysis.simulate import load_params, select_workloads
    from fastscale.infra.analysis.simulate.requests import simulate_workload_requests
    from fastscale.infra.config import load_config
    from fastscale.infra.model.resolved import resolve

    stack = resolve(load_config(EXAMPLE))
    params = load_params()
    workload = select_workloads(stack).workloads[0]
    # Room for the peak: 16 copies on up to 17 instances.
    spec = dataclasses.replace(workload.spec(), units_max=16, instances_max=17)
    workload = dataclasses.replace(workload, _spec=lambda layers: spec)
    walls, cpus = [], []
    result = simulate_workload_requests(stack, workload, trace, params)
    for _ in range(5):
        w0, c0 = time.perf_counter(), time.process_time()
        result = simulate_workload_requests(stack, workload, trace, params)
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return {
        "requests": len(trace),
        "parse_s": round(parse, 3),
        "run_wall_s": round(statistics.median(walls), 3),
        "run_cpu_s": round(statistics.median(cpus), 3),
        "peak_copies": result.result.summary.peak_copies,
        "ttft_p99_s": round(result.stats.ttft.p99 or 0, 2),
    }


def search(trace: Any, workers: int) -> dict[str, float | int]:
    from fastscale.infra.analysis.recommend import build_search, evaluate_all, recommend
    from fastscale.infra.config import load_config, safe_yaml
    from fastscale.infra.model.resolved import resolve

    text = EXAMPLE.read_text()
    w0 = time.perf_counter()
    found = build_search(resolve(load_config(EXAMPLE)), safe_yaml.load(text).data, trace)
    cpu0 = _children_cpu()
    outcomes = evaluate_all(found, workers=workers, max_rejected=0.0)
    wall = time.perf_counter() - w0
    cpu = _children_cpu() - cpu0
    rec = recommend(found, outcomes, 2.0, 0.0)
    n = len(found.candidates)
    return {
        "requests": len(trace),
        "candidates": n,
        "workers": workers,
        "wall_s": round(wall, 1),
        "candidates_per_s": round(n / wall, 1),
        "worker_cpu_s": round(cpu, 1),
        "cpu_per_candidate_s": round(cpu / n, 4),
        "two_idle_cores_estimate_s": round(cpu / 2, 1),
        "stopped_early": sum(1 for o in outcomes if o.stopped_early),
        "pareto_points": len(rec.pareto),
    }


def _load() -> str:
    path = Path("/proc/loadavg")
    return " / ".join(path.read_text().split()[:3]) if path.exists() else "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    from fastscale.infra.analysis.simulate.requests import read_request_trace

    load_before = _load()
    trace, parse = trace_20k()
    out: dict[str, object] = {"load_average_before": load_before, "simulation": single_simulation(trace, parse)}
    if not args.skip_search:
        out["search"] = search(trace, args.workers)
        out["search_example_trace"] = search(read_request_trace(HOUR_TRACE), args.workers)
    load = _load()
    out["load_average"] = load
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        sim = out["simulation"]
        assert isinstance(sim, dict)
        print(f"load average {load_before} before, {load} after")
        print(f"simulation: {sim['requests']} requests, parse {sim['parse_s']} s, one run {sim['run_wall_s']} s wall, "
              f"{sim['run_cpu_s']} s CPU (target {SIM_TARGET_S} s)")
        for key in ("search", "search_example_trace"):
            if key in out:
                s = out[key]
                assert isinstance(s, dict)
                print(f"search: {s['candidates']} candidates on {s['requests']} requests, {s['workers']} workers: "
                      f"{s['wall_s']} s wall ({s['candidates_per_s']} candidates/s), {s['worker_cpu_s']} s of worker "
                      f"CPU ({s['cpu_per_candidate_s']} s per candidate; {s['two_idle_cores_estimate_s']} s on two "
                      f"idle cores), {s['stopped_early']} stopped early")
    sim = out["simulation"]
    assert isinstance(sim, dict)
    missed = float(sim["run_wall_s"]) > SIM_TARGET_S
    for key in ("search", "search_example_trace"):
        if key in out:
            s = out[key]
            assert isinstance(s, dict)
            missed |= int(s["candidates"]) < SEARCH_MIN_CANDIDATES or float(s["wall_s"]) > SEARCH_TARGET_S
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
