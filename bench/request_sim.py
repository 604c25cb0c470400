"""How long the request-level model and `fastscale recommend` take on a one-hour trace.

    .venv/bin/python bench/request_sim.py                 # human-readable
    .venv/bin/python bench/request_sim.py --json
    .venv/bin/python bench/request_sim.py --skip-search   # only the single simulation

Two measurements:

1. One request-level simulation of a one-hour trace of 20,000 requests (written by
   scripts/gen_request_trace.py with its fixed seed) on the scale-to-zero example's component, its maximum
   raised so the peak is served: parse time, then the median of 5 runs after a warm-up, wall and CPU time of
   this process. Target: under 1 s per run.
2. `recommend`'s search on the example one-hour trace (examples/requests-1h-synthetic.csv) with its default
   grid, on 2 worker processes: the number of candidates, the wall time, and the CPU time of the workers
   (which shows what the run would take on two idle cores when the machine is shared). Target: at least 500
   candidates within 60 s on two cores.

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

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "scale-to-zero-short-tail.yaml"
HOUR_TRACE = ROOT / "examples" / "requests-1h-synthetic.csv"
SIM_TARGET_S = 1.0
SEARCH_TARGET_S = 60.0
SEARCH_MIN_CANDIDATES = 500


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def single_simulation() -> dict[str, float | int]:
    from fastscale.infra.config import load_config
    from fastscale.infra.simulate import load_params, select_workloads
    from fastscale.infra.simulate.requests import read_request_trace, simulate_workload_requests

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t20k.csv"
        subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_request_trace.py"), "--requests", "20000",
                        "-o", str(path)], check=True, capture_output=True)
        start = time.perf_counter()
        trace = read_request_trace(path)
        parse = time.perf_counter() - start
    config = load_config(EXAMPLE)
    config = config.model_copy(deep=True)
    params = load_params()
    workload = select_workloads(config).workloads[0]
    # Room for the peak: 16 copies on up to 17 instances.
    spec = dataclasses.replace(workload.spec(), units_max=16, instances_max=17)
    workload = dataclasses.replace(workload, _spec=lambda layers: spec)
    walls, cpus = [], []
    result = simulate_workload_requests(config, workload, trace, params)
    for _ in range(5):
        w0, c0 = time.perf_counter(), time.process_time()
        result = simulate_workload_requests(config, workload, trace, params)
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


def search(workers: int) -> dict[str, float | int]:
    from fastscale.infra import safe_yaml
    from fastscale.infra.config import load_config
    from fastscale.infra.recommend import build_search, evaluate_all, recommend
    from fastscale.infra.simulate.requests import read_request_trace

    text = EXAMPLE.read_text()
    trace = read_request_trace(HOUR_TRACE)
    w0 = time.perf_counter()
    found = build_search(load_config(EXAMPLE), safe_yaml.load(text).data, trace)
    cpu0 = _children_cpu()
    outcomes = evaluate_all(found, workers=workers)
    wall = time.perf_counter() - w0
    cpu = _children_cpu() - cpu0
    rec = recommend(found, outcomes, 2.0, 0.0)
    return {
        "requests": len(trace),
        "candidates": len(found.candidates),
        "workers": workers,
        "wall_s": round(wall, 1),
        "worker_cpu_s": round(cpu, 1),
        "cpu_per_candidate_s": round(cpu / len(found.candidates), 3),
        "two_idle_cores_estimate_s": round(cpu / 2, 1),
        "pareto_points": len(rec.pareto),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    load = Path("/proc/loadavg").read_text().split()[0] if Path("/proc/loadavg").exists() else "?"
    out: dict[str, object] = {"load_average": load, "simulation": single_simulation()}
    if not args.skip_search:
        out["search"] = search(args.workers)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        sim = out["simulation"]
        assert isinstance(sim, dict)
        print(f"load average {load}")
        print(f"simulation: {sim['requests']} requests, parse {sim['parse_s']} s, one run {sim['run_wall_s']} s wall, "
              f"{sim['run_cpu_s']} s CPU (target {SIM_TARGET_S} s)")
        if "search" in out:
            s = out["search"]
            assert isinstance(s, dict)
            print(f"search: {s['candidates']} candidates on {s['requests']} requests, {s['workers']} workers: "
                  f"{s['wall_s']} s wall, {s['worker_cpu_s']} s of worker CPU ({s['cpu_per_candidate_s']} s per "
                  f"candidate; {s['two_idle_cores_estimate_s']} s on two idle cores)")
    sim = out["simulation"]
    assert isinstance(sim, dict)
    missed = float(sim["run_wall_s"]) > SIM_TARGET_S
    if "search" in out:
        s = out["search"]
        assert isinstance(s, dict)
        missed |= int(s["candidates"]) < SEARCH_MIN_CANDIDATES or float(s["wall_s"]) > SEARCH_TARGET_S
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
