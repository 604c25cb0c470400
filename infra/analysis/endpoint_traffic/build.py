"""A request trace built from what a live endpoint recorded: its data capture, else its CloudWatch metrics.

The result is the request-level simulation's own :class:`~fastscale.infra.analysis.simulate.requests.trace.RequestTrace`
(times in seconds from the window's start), so ``simulate`` and ``recommend`` replay it as they replay a CSV,
and :func:`trace_csv` writes it in the token format they read (``timestamp,input_tokens,output_tokens``).
:class:`EndpointTrace` carries beside it how it was built: every assumption, every read limit that was hit,
the lines that were skipped.

- From data capture (:func:`from_capture`): one request per captured record, at its ``inferenceTime``
  (taken as the arrival: AWS documents no more). Whole-second times put the requests of a second at
  even spacing within it. With a sampling percentage below 100 every captured request stands for
  100 / percentage requests, spaced evenly until the next captured one.
- From metrics (:func:`from_metrics`): the ``Invocations`` of each period (10 s where CloudWatch has them at
  that resolution, else 60 s), within a minute shared among its six 10-second periods in proportion to the
  10-second concurrency metric when there is one; within its period each request arrives at a random
  (seeded, so repeatable) time, as in a Poisson process with that count; every request has the stated token
  profile.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastscale.infra.analysis.endpoint_traffic.capture import ASSUMED, HOW, CaptureTally, TokenProfile
from fastscale.infra.analysis.endpoint_traffic.window import Window, iso
from fastscale.infra.analysis.simulate.requests.trace import SECONDS_COLUMNS, RequestTrace

DATA_CAPTURE = "data capture"
METRICS = "CloudWatch metrics"
#: Most requests a trace built from an endpoint holds (about 660 MB in memory as the simulation keeps them);
#: the trace ends where it is reached, and says so.
MAX_TRACE_REQUESTS = 2_000_000
#: Seed of the arrival times placed within a metric period: the same trace on every run.
ARRIVAL_SEED = 0
_ASSUMED_CODE = HOW.index(ASSUMED)


class NoTrafficError(ValueError):
    """The endpoint recorded no request in the window: there is nothing to replay."""


@dataclass(frozen=True)
class Series:
    """One CloudWatch metric as read: (period start, value) in time order."""

    name: str
    stat: str
    period: int
    points: tuple[tuple[datetime, float], ...] = ()

    @property
    def sub_minute(self) -> bool:
        """Whether its datapoints fall between minutes (CloudWatch holds it at a finer resolution than 60 s)."""
        return any(at.second % 60 for at, _ in self.points)


@dataclass(frozen=True)
class EndpointTrace:
    """A trace of a live endpoint's traffic and how it was built."""

    trace: RequestTrace
    endpoint: str
    component: str | None
    region: str
    source: str  # DATA_CAPTURE or METRICS
    window: Window
    notes: tuple[str, ...]  # how it was built and what was assumed, in the order to print
    limits: tuple[str, ...] = ()  # read limits that were reached
    skipped_lines: int = 0
    model_latency_s: float | None = None  # CloudWatch ModelLatency over the window, per request

    def to_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "component": self.component,
            "region": self.region,
            "source": self.source,
            "window": self.window.to_dict(),
            "requests": len(self.trace),
            "notes": list(self.notes),
            "limits_reached": list(self.limits),
            "skipped_lines": self.skipped_lines,
            "model_latency_mean_s": None if self.model_latency_s is None else round(self.model_latency_s, 3),
        }


def trace_csv(trace: RequestTrace) -> str:
    """The trace in the token format ``simulate --requests`` and ``recommend --trace`` read."""
    rows = [",".join(SECONDS_COLUMNS)]
    rows += [f"{a:.3f},{i},{o}" for a, i, o in zip(trace.arrivals, trace.input_tokens, trace.output_tokens, strict=True)]
    return "\n".join(rows) + "\n"


def _trace(arrivals: Sequence[float], prompt: Sequence[int], output: Sequence[int], endpoint: str, source: str) -> RequestTrace:
    order = sorted(range(len(arrivals)), key=lambda i: arrivals[i])
    return RequestTrace(
        arrivals=tuple(round(arrivals[i], 3) for i in order),
        input_tokens=tuple(prompt[i] for i in order),
        output_tokens=tuple(output[i] for i in order),
        source=f"endpoint {endpoint}",
        format=source,
    )


def _share(how: dict[str, int], total: int) -> str:
    return ", ".join(f"{n} {what}" for what, n in how.items()) if how else f"{total} none"


# --------------------------------------------------------------------------------------------- data capture


def from_capture(
    tally: CaptureTally, *, endpoint: str, component: str | None, region: str, destination: str, sampling: float,
    notes: Sequence[str] = (), limits: Sequence[str] = (), most: int = MAX_TRACE_REQUESTS,
) -> EndpointTrace:
    """The captured requests of the window as a trace (``sampling``: the percentage of requests captured), of at
    most ``most`` requests."""
    window = tally.window
    n = len(tally)
    if not n:
        raise NoTrafficError(f"no captured request of {endpoint} between {iso(window.start)} and {iso(window.end)}")
    order = sorted(range(n), key=lambda i: tally.at[i])
    offsets = [tally.at[i] - window.start.timestamp() for i in order]
    prompt = [tally.prompt[i] for i in order]
    output = [tally.output[i] for i in order]
    said = [*notes, f"{n} requests captured in {destination} between {iso(window.start)} and {iso(window.end)}; "
            "each arrives at its eventMetadata.inferenceTime (taken as the arrival time)"]
    if not tally.fraction:
        offsets = _spread_within_seconds(offsets)
        said.append("inferenceTime has whole seconds: the requests of one second are spaced evenly within it")
    said.append(f"prompt tokens: {_share(tally.how('prompt'), n)}")
    said.append(f"output tokens: {_share(tally.how('output'), n)}")
    if _ASSUMED_CODE in tally.prompt_how or _ASSUMED_CODE in tally.output_how:
        said.append(f"a payload without counts or text takes {tally.default.describe()}")
    limits = list(limits)
    if sampling < 100:
        offsets, prompt, output, cut = _scale_sample(offsets, prompt, output, 100.0 / sampling, window.seconds, most)
        said.append(f"data capture samples {sampling:g}% of the requests: each captured request stands for "
                    f"{100 / sampling:g}, spaced evenly until the next captured one ({len(offsets)} requests)")
        if cut is not None:
            limits.append(f"the trace stops at {most} requests, {cut:.0f} s into the window")
    skipped = tally.skipped_summary()
    if skipped:
        said.append(skipped)
    if tally.outside:
        said.append(f"{tally.outside} captured requests outside the window left out")
    trace = _trace(offsets, prompt, output, endpoint, DATA_CAPTURE)
    return EndpointTrace(trace, endpoint, component, region, DATA_CAPTURE, window, tuple(said), tuple(limits),
                         sum(tally.skipped.values()))


def _spread_within_seconds(offsets: list[float]) -> list[float]:
    """Sorted whole-second offsets: the k requests of one second at (j + 0.5) / k of it."""
    out: list[float] = []
    i = 0
    while i < len(offsets):
        j = i
        while j < len(offsets) and offsets[j] == offsets[i]:
            j += 1
        k = j - i
        out += [offsets[i] + (m + 0.5) / k for m in range(k)]
        i = j
    return out


def _scale_sample(
    offsets: list[float], prompt: list[int], output: list[int], factor: float, end: float, most: int,
) -> tuple[list[float], list[int], list[int], float | None]:
    """Each captured request as ``factor`` requests (a running remainder keeps the total right), spaced evenly
    until the next one; stops before exceeding ``most`` requests (returning where)."""
    at: list[float] = []
    p: list[int] = []
    o: list[int] = []
    owed = 0.0
    for i, start in enumerate(offsets):
        owed += factor
        copies = int(owed)
        owed -= copies
        if len(at) + copies > most:
            return at, p, o, start
        gap = (offsets[i + 1] if i + 1 < len(offsets) else end) - start
        at += [start + m * gap / copies for m in range(copies)] if copies else []
        p += [prompt[i]] * copies
        o += [output[i]] * copies
    return at, p, o, None


# --------------------------------------------------------------------------------------------- metrics


def _slot_counts(window: Window, invocations: Series, fine_invocations: Series | None,
                 concurrency: Series | None) -> tuple[list[tuple[float, float, int]], str]:
    """(start offset, length, requests) of every period with requests, and how they were found."""
    def inside(points: tuple[tuple[datetime, float], ...]) -> list[tuple[float, float]]:
        return [(window.offset(at), v) for at, v in points if window.start <= at < window.end]

    if fine_invocations is not None and fine_invocations.sub_minute:
        slots = [(t, float(fine_invocations.period), round(v)) for t, v in inside(fine_invocations.points)]
        return [s for s in slots if s[2] > 0], f"Invocations per {fine_invocations.period} s"
    per_minute = [(t, round(v)) for t, v in inside(invocations.points)]
    if concurrency is None or not concurrency.sub_minute:
        return [(t, 60.0, n) for t, n in per_minute if n > 0], "Invocations per minute"
    step = concurrency.period
    shape: dict[float, float] = {}
    for t, v in inside(concurrency.points):
        shape[t] = max(0.0, v)
    out: list[tuple[float, float, int]] = []
    for t, n in per_minute:
        if n <= 0:
            continue
        starts = [t + k * step for k in range(60 // step)]
        weights = [shape.get(s, 0.0) for s in starts]
        for s, c in zip(starts, _largest_remainder(n, weights), strict=True):
            if c:
                out.append((s, float(step), c))
    return out, f"Invocations per minute, shared among its {60 // step} periods of {step} s by {concurrency.name}"


def _largest_remainder(n: int, weights: list[float]) -> list[int]:
    """``n`` split in proportion to ``weights`` (equally when they are all 0), whole numbers summing to ``n``."""
    total = sum(weights)
    if total <= 0:
        weights, total = [1.0] * len(weights), float(len(weights))
    raw = [n * w / total for w in weights]
    counts = [math.floor(r) for r in raw]
    rest = n - sum(counts)
    for i in sorted(range(len(raw)), key=lambda i: (counts[i] - raw[i], i))[:rest]:
        counts[i] += 1
    return counts


def from_metrics(
    window: Window, *, endpoint: str, component: str | None, region: str, invocations: Series,
    fine_invocations: Series | None = None, concurrency: Series | None = None, latency: Series | None = None,
    tokens: TokenProfile, notes: Sequence[str] = (), limits: Sequence[str] = (), most: int = MAX_TRACE_REQUESTS,
) -> EndpointTrace:
    """Arrivals reconstructed from the metrics' counts, every request with ``tokens``; at most ``most``."""
    slots, how = _slot_counts(window, invocations, fine_invocations, concurrency)
    total = sum(c for _, _, c in slots)
    target = f"{endpoint}" + (f" / {component}" if component else "")
    if not total:
        raise NoTrafficError(f"CloudWatch recorded no Invocations of {target} between {iso(window.start)} and "
                             f"{iso(window.end)}")
    limits = list(limits)
    rng = random.Random(ARRIVAL_SEED)
    arrivals: list[float] = []
    for start, length, count in slots:
        if len(arrivals) + count > most:
            limits.append(f"the trace stops at {most} requests, {start:.0f} s into the window")
            break
        arrivals += sorted(start + rng.random() * length for _ in range(count))
    n = len(arrivals)
    said = [*notes,
            f"{total} requests from CloudWatch {how} between {iso(window.start)} and {iso(window.end)}; within its "
            "period each request arrives at a random time (seeded: the same trace every run)",
            f"every request: {tokens.describe()}"]
    mean = _mean_latency(invocations, latency, window)
    if mean is not None:
        said.append(f"CloudWatch ModelLatency over the window: {mean:.2f} s per request (mean); compare it with the "
                    "simulated end-to-end time to check the token profile")
    trace = _trace(arrivals, [tokens.prompt] * n, [tokens.output] * n, endpoint, METRICS)
    return EndpointTrace(trace, endpoint, component, region, METRICS, window, tuple(said), tuple(limits),
                         model_latency_s=mean)


def _mean_latency(invocations: Series, latency: Series | None, window: Window) -> float | None:
    """ModelLatency (microseconds, averaged per minute) weighted by each minute's invocations, in seconds."""
    if latency is None or not latency.points:
        return None
    counts = {at: v for at, v in invocations.points}
    weighted = [(v, counts.get(at, 0.0)) for at, v in latency.points if window.start <= at < window.end]
    total = sum(w for _, w in weighted)
    if total <= 0:
        return None
    return sum(v * w for v, w in weighted) / total / 1e6

