"""Write a synthetic one-hour request trace in the Azure LLM inference trace format (fixed seed).

    python scripts/gen_request_trace.py                      # examples/requests-1h-synthetic.csv
    python scripts/gen_request_trace.py --requests 20000 -o /tmp/t.csv
    python scripts/gen_request_trace.py --days 7 --requests 3000000 -o /tmp/week.csv   # seconds layout

The trace is made up, not measured: arrivals are a Poisson process whose rate follows a working hour (a
quiet start, a ramp to a peak at about 25 minutes, a slow decline and a short burst at 50 minutes); prompt and
output lengths are log-normal (medians of about 900 prompt and 180 output tokens, long tails), chosen to look
like a chat workload and not fitted to any published trace. Same arguments, same bytes.

With ``--days N`` the trace spans N days instead, in the seconds layout (``timestamp,input_tokens,output_tokens``,
18 bytes a request where the Azure layout takes 45): each weekday the rate rises from a night floor (a quarter of
the peak) to its peak in the early afternoon and falls back by 20:00; Saturdays and Sundays run at half that.
The same token lengths. Written as it is generated: a week of 3,000,000 requests takes about 60 MB on disk and
little memory.
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


DAY = 86400


def day_shape(t: float) -> float:
    """Relative request rate at second ``t`` of a multi-day trace (peak 1.0)."""
    hour = (t % DAY) / 3600
    level = 0.25 + 0.75 * math.sin(math.pi * (hour - 6) / 14) if 6 <= hour <= 20 else 0.25
    return level / 2 if int(t // DAY) % 7 >= 5 else level


def write_days(days: int, requests: int, seed: int, out: Path) -> int:
    """A trace of ``days`` days and about ``requests`` requests, written as it is generated; the count."""
    rng = random.Random(seed)
    span = days * DAY
    mean = sum(day_shape(t) for t in range(0, span, 60)) / (span / 60)
    ceiling = requests / span / mean  # requests per second at shape 1.0, the most the shape asks for
    t, count = 0.0, 0
    with out.open("w", encoding="utf-8") as handle:
        handle.write("timestamp,input_tokens,output_tokens\n")
        lines: list[str] = []
        while True:
            t += rng.expovariate(ceiling)
            if t >= span - 1:
                break
            if rng.random() > day_shape(t):
                continue
            prompt = min(8000, max(16, int(rng.lognormvariate(math.log(900), 0.8))))
            output = min(2000, max(1, int(rng.lognormvariate(math.log(180), 0.7))))
            lines.append(f"{t:.3f},{prompt},{output}\n")
            count += 1
            if len(lines) >= 100_000:
                handle.writelines(lines)
                lines.clear()
        handle.writelines(lines)
    return count


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
    parser.add_argument("--days", type=int, help="span this many days instead of one hour (seconds layout)")
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    if args.days:
        count = write_days(args.days, args.requests, args.seed, args.out)
        print(f"{args.out}: {count} requests over {args.days} days")
        return
    rows = generate(args.requests, args.seed)
    write(rows, args.out)
    print(f"{args.out}: {len(rows)} requests over one hour")


if __name__ == "__main__":
    main()
