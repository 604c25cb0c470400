"""Write a synthetic one-hour request trace in the Azure LLM inference trace format (fixed seed).

    python scripts/gen_request_trace.py                      # examples/requests-1h-synthetic.csv
    python scripts/gen_request_trace.py --requests 20000 -o /tmp/t.csv

The trace is made up, not measured: arrivals are a Poisson process whose rate follows a working hour (a
quiet start, a ramp to a peak at about 25 minutes, a slow decline and a short burst at 50 minutes); prompt and
output lengths are log-normal (medians of about 900 prompt and 180 output tokens, long tails), chosen to look
like a chat workload and not fitted to any published trace. Same arguments, same bytes.
"""

from __future__ import annotations

import argparse
import math
import random
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "examples" / "requests-1h-synthetic.csv"
START = datetime(2023, 11, 16, 18, 0, 0)
HOUR = 3600


def shape(t: float) -> float:
    """Relative request rate at second ``t`` of the hour (peak 1.0)."""
    minute = t / 60
    if minute < 15:
        level = 0.3
    elif minute < 25:
        level = 0.3 + 0.7 * (minute - 15) / 10
    elif minute < 35:
        level = 1.0
    elif minute < 45:
        level = 1.0 - 0.7 * (minute - 35) / 10
    else:
        level = 0.3
    if 50 <= minute < 52:
        level += 0.5
    return level


def mean_shape() -> float:
    return sum(shape(t) for t in range(HOUR)) / HOUR


def generate(requests: int, seed: int) -> list[tuple[float, int, int]]:
    rng = random.Random(seed)
    peak = requests / HOUR / mean_shape()  # requests per second at shape 1.0
    ceiling = peak * 1.5  # above every shape value, for thinning
    rows: list[tuple[float, int, int]] = []
    t = 0.0
    while True:
        t += rng.expovariate(ceiling)
        if t >= HOUR:
            break
        if rng.random() * 1.5 > shape(t):
            continue
        prompt = min(8000, max(16, int(rng.lognormvariate(math.log(900), 0.8))))
        output = min(2000, max(1, int(rng.lognormvariate(math.log(180), 0.7))))
        rows.append((t, prompt, output))
    return rows


def write(rows: list[tuple[float, int, int]], out: Path) -> None:
    lines = ["TIMESTAMP,ContextTokens,GeneratedTokens"]
    for t, prompt, output in rows:
        stamp = START + timedelta(microseconds=round(t * 1e6))
        lines.append(f"{stamp:%Y-%m-%d %H:%M:%S.%f}0,{prompt},{output}")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=12000, help="expected number of requests (default 12000)")
    parser.add_argument("--seed", type=int, default=20231116)
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    rows = generate(args.requests, args.seed)
    write(rows, args.out)
    print(f"{args.out}: {len(rows)} requests over one hour")


if __name__ == "__main__":
    main()
