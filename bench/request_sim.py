"""How long the request-level model and `fastscale recommend` take on a one-hour trace and on a week.

    .venv/bin/python bench/request_sim.py                 # human-readable
    .venv/bin/python bench/request_sim.py --json
    .venv/bin/python bench/request_sim.py --skip-search   # only the single simulations
    .venv/bin/python bench/request_sim.py --skip-week     # only the one-hour measurements
    .venv/bin/python bench/request_sim.py --only-week     # only the week

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

3. A week: 3,000,000 requests over 7 days (scripts/gen_request_trace.py --days 7, fixed seed, seconds layout)
   parsed and simulated on the same component in a fresh process pinned to one core: parse time, simulation
   wall and CPU time, and the process's peak RSS (interpreter and imports included). Targets: the simulation
   under 15 s and the whole process under 300 MB.
4. `fastscale recommend` on that week (default grid, --ttft-p99 2, --max-rejected 0, 2 workers), the command as a
   user runs it: it searches a sample of the week's hours and replays the choice on the whole week. Wall time, the
   CPU time of the command and its workers, and the shortcut's error it printed. Target: under 10 minutes on two cores.

Exits 1 when a target is missed on wall time (or, for the week, on memory).
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
WEEK_DAYS = 7
WEEK_REQUESTS = 3_000_000
WEEK_SIM_TARGET_S = 15.0
WEEK_RSS_TARGET_MB = 300.0
WEEK_SEARCH_TARGET_S = 600.0
#: The week's simulation, in a fresh process pinned to one core: parse, simulate, peak RSS.
_WEEK_CHILD = r"""
import dataclasses, json, os, resource, sys, time
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from fastscale.infra.analysis.simulate import load_params, select_workloads
from fastscale.infra.analysis.simulate.requests import read_request_trace, simulate_workload_requests
from fastscale.infra.config import load_config
from fastscale.infra.model.resolved import resolve
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
w0, c0 = time.perf_counter(), time.process_time()
trace = read_request_trace(sys.argv[1])
parse_wall, parse_cpu = time.perf_counter() - w0, time.process_time() - c0
parsed = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
config = resolve(load_config(sys.argv[2]))
workload = select_workloads(config).workloads[0]
spec = dataclasses.replace(workload.spec(), units_max=16, instances_max=17)
workload = dataclasses.replace(workload, _spec=lambda layers: spec)
w0, c0 = time.perf_counter(), time.process_time()
result = simulate_workload_requests(config, workload, trace, load_params())
run_wall, run_cpu = time.perf_counter() - w0, time.process_time() - c0
print(json.dumps({
    "requests": len(trace), "seconds": trace.seconds, "parse_wall_s": round(parse_wall, 2),
    "parse_cpu_s": round(parse_cpu, 2), "run_wall_s": round(run_wall, 2), "run_cpu_s": round(run_cpu, 2),
    "rss_after_imports_mb": round(imported, 1), "rss_after_parse_mb": round(parsed, 1),
    "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    "peak_copies": result.result.summary.peak_copies, "served": result.stats.served,
    "ttft_p99_s": round(result.stats.ttft.p99 or 0, 3),
}))
"""


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


def week_trace(directory: Path) -> Path:
    path = directory / "week.csv"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_request_trace.py"), "--days", str(WEEK_DAYS),
                    "--requests", str(WEEK_REQUESTS), "-o", str(path)], check=True, capture_output=True)
    return path


def week_simulation(path: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _WEEK_CHILD, str(path), str(EXAMPLE)], check=True,
                          capture_output=True, text=True)
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def week_search(path: Path, workers: int) -> dict[str, Any]:
    command = [str(Path(sys.executable).parent / "fastscale"), "recommend", str(EXAMPLE), "--trace", str(path),
               "--ttft-p99", "2", "--workers", str(workers), "--json"]
    cpu0 = _children_cpu()
    w0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - w0
    if done.returncode not in (0, 1):
        raise SystemExit(f"recommend failed ({done.returncode}): {done.stderr[-2000:]}")
    doc = json.loads(done.stdout)
    check = doc.get("search_window", {})
    return {
        "workers": workers,
        "wall_s": round(wall, 1),
        "cpu_s": round(_children_cpu() - cpu0, 1),
        "candidates": doc["candidates"],
        "stopped_early": doc["candidates_stopped_early"],
        "window": check.get("window"),
        "window_requests": check.get("window", {}).get("requests"),
        "chosen_on_window": check.get("on_window"),
        "chosen_on_whole_week": check.get("on_whole_trace"),
        "error": check.get("error"),
    }


def _load() -> str:
    path = Path("/proc/loadavg")
    return " / ".join(path.read_text().split()[:3]) if path.exists() else "?"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    parser.add_argument("--skip-week", action="store_true")
    parser.add_argument("--only-week", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    from fastscale.infra.analysis.simulate.requests import read_request_trace

    load_before = _load()
    out: dict[str, object] = {"load_average_before": load_before}
    if not args.only_week:
        trace, parse = trace_20k()
        out["simulation"] = single_simulation(trace, parse)
        if not args.skip_search:
            out["search"] = search(trace, args.workers)
            out["search_example_trace"] = search(read_request_trace(HOUR_TRACE), args.workers)
    if not args.skip_week:
        with tempfile.TemporaryDirectory() as tmp:
            path = week_trace(Path(tmp))
            out["week_simulation"] = week_simulation(path)
            out["load_average_after_week_simulation"] = _load()
            if not args.skip_search:
                out["week_search"] = week_search(path, args.workers)
    load = _load()
    out["load_average"] = load
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"load average {load_before} before, {load} after")
        _print(out)
    return 1 if _missed(out) else 0


def _print(out: dict[str, Any]) -> None:
    sim = out.get("simulation")
    if isinstance(sim, dict):
        print(f"simulation: {sim['requests']} requests, parse {sim['parse_s']} s, one run {sim['run_wall_s']} s wall, "
              f"{sim['run_cpu_s']} s CPU (target {SIM_TARGET_S} s)")
    for key in ("search", "search_example_trace"):
        s = out.get(key)
        if isinstance(s, dict):
            print(f"search: {s['candidates']} candidates on {s['requests']} requests, {s['workers']} workers: "
                  f"{s['wall_s']} s wall ({s['candidates_per_s']} candidates/s), {s['worker_cpu_s']} s of worker "
                  f"CPU ({s['cpu_per_candidate_s']} s per candidate; {s['two_idle_cores_estimate_s']} s on two "
                  f"idle cores), {s['stopped_early']} stopped early")
    week = out.get("week_simulation")
    if isinstance(week, dict):
        print(f"week: {week['requests']:,} requests over {week['seconds']:,} s on one core: parse {week['parse_wall_s']} s "
              f"wall ({week['parse_cpu_s']} s CPU), simulation {week['run_wall_s']} s wall ({week['run_cpu_s']} s CPU; "
              f"target {WEEK_SIM_TARGET_S:g} s), peak RSS {week['peak_rss_mb']} MB (target {WEEK_RSS_TARGET_MB:g} MB; "
              f"{week['rss_after_imports_mb']} MB after imports, {week['rss_after_parse_mb']} MB after parsing); "
              f"load average {out.get('load_average_after_week_simulation')} after")
    ws = out.get("week_search")
    if isinstance(ws, dict):
        print(f"week recommend: {ws['candidates']} candidates on the sampled hours ({ws['window_requests']} requests), "
              f"{ws['workers']} workers: {ws['wall_s']} s wall, {ws['cpu_s']} s CPU (target {WEEK_SEARCH_TARGET_S:g} s); "
              f"shortcut error (sample vs whole week, chosen settings): {ws['error']}")


def _missed(out: dict[str, Any]) -> bool:
    missed = False
    sim = out.get("simulation")
    if isinstance(sim, dict):
        missed |= float(sim["run_wall_s"]) > SIM_TARGET_S
    for key in ("search", "search_example_trace"):
        s = out.get(key)
        if isinstance(s, dict):
            missed |= int(s["candidates"]) < SEARCH_MIN_CANDIDATES or float(s["wall_s"]) > SEARCH_TARGET_S
    week = out.get("week_simulation")
    if isinstance(week, dict):
        missed |= float(week["run_wall_s"]) > WEEK_SIM_TARGET_S or float(week["peak_rss_mb"]) > WEEK_RSS_TARGET_MB
    ws = out.get("week_search")
    if isinstance(ws, dict):
        missed |= float(ws["wall_s"]) > WEEK_SEARCH_TARGET_S
    return missed


if __name__ == "__main__":
    sys.exit(main())
