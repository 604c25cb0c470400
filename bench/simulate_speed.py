"""How long `fastscale simulate`'s model takes for a one-hour trace of one endpoint (target: under 1 s).

    .venv/bin/python bench/simulate_speed.py          # human-readable
    .venv/bin/python bench/simulate_speed.py --json   # machine-readable

The trace is generated, deterministic: one hour of per-second concurrency with bursts, a spike and quiet
periods, so every mechanism (scale-out, scale from zero, scale-in) runs. Cases: the single-model example,
and one inference component of the multi-model example (copies placed on instances, scale to zero). Each
figure is the median of 5 runs in this process, after one warm-up run; "layer table" is the configured run
plus the four layer variants `fastscale simulate` prints. Exits 1 when a single run misses the target.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 1.0


def trace(peak: float) -> list[float]:
    """An hour: quiet, a burst pattern, a 20-minute spike to ``peak``, then quiet again (no randomness)."""
    out = []
    for t in range(3600):
        wave = 0.25 * peak * (1 + math.sin(t / 97.0)) * (1 + math.sin(t / 13.0)) / 4
        spike = peak if 900 <= t < 2100 else 0.0
        out.append(0.0 if t < 300 or t >= 3000 else max(wave, spike))
    return out


def _median(fn, runs: int = 5) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    from fastscale.infra.analysis.simulate import Traffic, select_workloads, simulate, simulate_workload
    from fastscale.infra.config import load_config
    from fastscale.infra.model.resolved import resolve

    rows = []
    for name, path, component in (("qwen3-8b (single model)", "qwen3-8b.yaml", None),
                                  ("multi-model / qwen3-8b (component)", "multi-model.yaml", "qwen3-8b")):
        [w] = select_workloads(resolve(load_config(ROOT / "examples" / path)), component=component).workloads
        demand = trace(w.max_concurrency)
        traffic = Traffic(tuple(demand), "bench trace", "trace", 10.0)
        spec = w.spec()
        one = _median(lambda spec=spec, demand=demand: simulate(spec, demand))
        table = _median(lambda w=w, traffic=traffic: simulate_workload(w, traffic))
        rows.append({"case": name, "seconds": 3600, "one_run_s": round(one, 4), "layer_table_s": round(table, 4)})
    ok = all(r["one_run_s"] < TARGET_SECONDS for r in rows)
    if args.json:
        print(json.dumps({"target_s": TARGET_SECONDS, "ok": ok, "cases": rows}, indent=2))
    else:
        print(f"{'case':40} {'one run':>10} {'layer table (5 runs)':>22}")
        for r in rows:
            print(f"{r['case']:40} {r['one_run_s'] * 1000:>8.0f} ms {r['layer_table_s'] * 1000:>19.0f} ms")
        print(f"target: one run of a one-hour trace under {TARGET_SECONDS:g} s: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
