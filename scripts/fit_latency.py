"""Fit the request-level latency model on the calibration set of published serving benchmarks.

    python scripts/fit_latency.py            # fit, print the fitted values and every point's error
    python scripts/fit_latency.py --write    # and write the values into infra/analysis/simulate_params.json
    python scripts/fit_latency.py --table    # only the error table of the current parameters (docs/simulate.md)

The points are in tests/simulate/latency_benchmarks.json; each is replayed as a closed-loop load test of one
copy (infra/analysis/simulate/requests/closed_loop.py). The fit minimises, over the calibration points, the sum of
squared log errors, each divided by its tolerance (25% for time to first token, 15% for decode and end-to-end
times), with a steep penalty past 90% of the tolerance; a Nelder-Mead simplex over the logarithms of the seven
fitted parameters, from the values in the parameters file. Held-out points take no part in it. Points marked
``not_met`` in the data (the reason is there) are left out of the fit as well.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastscale.infra.analysis.simulate.params import Param, SimulateParams, load_params  # noqa: E402
from fastscale.infra.analysis.simulate.requests.closed_loop import run_benchmark  # noqa: E402

DATA = ROOT / "tests" / "simulate" / "latency_benchmarks.json"
PARAMS = ROOT / "infra" / "analysis" / "simulate_params.json"
#: The fitted parameters (under ``requests`` in the parameters file).
FITTED = (
    "decode_bandwidth_efficiency",
    "prefill_compute_efficiency",
    "step_overhead_seconds",
    "step_overhead_cpu_seconds",
    "sequence_overhead_seconds",
    "request_overhead_seconds",
    "request_overhead_cpu_seconds",
)
#: Fractions of a peak figure cannot pass 1.
CEILING = {"decode_bandwidth_efficiency": 0.9, "prefill_compute_efficiency": 0.9}
METRICS = ("ttft", "itl", "tpot", "e2e")


def with_values(params: SimulateParams, values: dict[str, float]) -> SimulateParams:
    r = params.requests
    update = {name: Param(value=v, unit=getattr(r, name).unit, source=getattr(r, name).source) for name, v in values.items()}
    return params.model_copy(update={"requests": r.model_copy(update=update)})


def errors(data: dict[str, Any], params: SimulateParams, sets: Sequence[str]) -> list[tuple[dict[str, Any], str, float, float]]:
    """(point, metric, predicted ms, relative error) of every published figure of the points in ``sets``."""
    out = []
    for point in data["points"]:
        if point["set"] not in sets:
            continue
        result = run_benchmark(point, data["models"][point["model"]], params)
        for metric, measured in point["measured"].items():
            predicted = result.get(metric) * 1000
            out.append((point, metric, predicted, predicted / measured - 1))
    return out


def loss(data: dict[str, Any], params: SimulateParams) -> float:
    total = 0.0
    for point, metric, _, error in errors(data, params, ("calibration",)):
        if metric in point.get("not_met", {}):
            continue
        scaled = math.log1p(error) / data["tolerance"][metric]
        total += scaled * scaled + (100 * (abs(scaled) - 0.9) ** 2 if abs(scaled) > 0.9 else 0.0)
    return total


def nelder_mead(f: Callable[[list[float]], float], start: list[float], step: float = 0.25, iterations: int = 300) -> list[float]:
    n = len(start)
    simplex = [list(start)] + [[x + (step if j == i else 0.0) for j, x in enumerate(start)] for i in range(n)]
    values = [f(p) for p in simplex]
    for _ in range(iterations):
        order = sorted(range(n + 1), key=values.__getitem__)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        centre = [sum(p[j] for p in simplex[:-1]) / n for j in range(n)]
        reflected = [2 * c - w for c, w in zip(centre, simplex[-1], strict=True)]
        fr = f(reflected)
        if fr < values[0]:
            expanded = [3 * c - 2 * w for c, w in zip(centre, simplex[-1], strict=True)]
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = [(c + w) / 2 for c, w in zip(centre, simplex[-1], strict=True)]
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                best = simplex[0]
                simplex = [best] + [[(b + x) / 2 for b, x in zip(best, p, strict=True)] for p in simplex[1:]]
                values = [values[0]] + [f(p) for p in simplex[1:]]
    return simplex[min(range(n + 1), key=values.__getitem__)]


def fit(data: dict[str, Any], params: SimulateParams, iterations: int) -> dict[str, float]:
    start = [math.log(getattr(params.requests, name).value) for name in FITTED]

    def objective(logs: list[float]) -> float:
        values = {name: math.exp(x) for name, x in zip(FITTED, logs, strict=True)}
        if any(values[name] > ceiling for name, ceiling in CEILING.items()):
            return math.inf
        return loss(data, with_values(params, values))

    best = nelder_mead(objective, start, iterations=iterations)
    return {name: float(f"{math.exp(x):.3g}") for name, x in zip(FITTED, best, strict=True)}


def table(data: dict[str, Any], params: SimulateParams) -> str:
    """The markdown table of docs/simulate.md: every published figure, the model's and the error."""
    names = {"ttft": "TTFT p50", "itl": "ITL p50", "tpot": "TPOT p50", "e2e": "end-to-end p50"}
    lines = ["| set | benchmark | in / out tokens | concurrency | metric | published ms | model ms | error | within |",
             "|---|---|---|---|---|---:|---:|---:|---|"]
    for point, metric, predicted, error in errors(data, params, ("calibration", "held_out")):
        ok = abs(error) <= data["tolerance"][metric]
        mark = "yes" if ok else ("no, see below" if metric in point.get("not_met", {}) else "NO")
        lines.append(f"| {point['set'].replace('_', '-')} | {point['id']} | {point['input_tokens']} / "
                     f"{point['output_tokens']} | {point['concurrency']} | {names[metric]} | "
                     f"{point['measured'][metric]:g} | {predicted:.1f} | {error:+.0%} | {mark} |")
    return "\n".join(lines)


def write(values: dict[str, float]) -> None:
    text = PARAMS.read_text(encoding="utf-8")
    for name, value in values.items():
        text, count = re.subn(rf'("{name}": \{{"value": )[^,]+', rf"\g<1>{value!r}", text)
        assert count == 1, name
    PARAMS.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the fitted values into the parameters file")
    parser.add_argument("--table", action="store_true", help="only print the error table of the current parameters")
    parser.add_argument("--iterations", type=int, default=300)
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    params = load_params(PARAMS)
    if not args.table:
        values = fit(data, params, args.iterations)
        print(json.dumps(values, indent=2))
        params = with_values(params, values)
        if args.write:
            write(values)
    print(table(data, params))
    return 0


if __name__ == "__main__":
    sys.exit(main())
