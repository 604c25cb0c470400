"""Traffic profiles: what the simulated endpoint is asked to serve, one value per second.

A profile is offered concurrency: the requests that want to be in flight in each second. A spike or a ramp
is written ``BASE:PEAK@...`` in concurrent requests; a trace is a CSV of per-second concurrency, or of
requests per second turned into concurrency with a mean service time (Little's law at full speed).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path

from fastscale.infra.base.safe_files import SpecialFileError, read_bytes

#: Upper bound on a window, so a typo (``--duration 3600000``) is an error rather than minutes of work.
MAX_WINDOW_SECONDS = 7 * 24 * 3600
#: Upper bound on a trace file read into memory.
MAX_TRACE_BYTES = 64 * 1024 * 1024


class TrafficError(ValueError):
    """A traffic profile that cannot be read: a user mistake, reported with where and how to fix it."""


@dataclass(frozen=True)
class Traffic:
    """Offered concurrency per second over the window, and how it was described."""

    demand: tuple[float, ...]
    description: str
    kind: str  # spike | ramp | trace
    service_time_seconds: float
    spike_at: int | None = None  # when the spike or ramp starts, if the profile has one

    @property
    def seconds(self) -> int:
        return len(self.demand)

    @property
    def peak(self) -> float:
        return max(self.demand, default=0.0)

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "description": self.description,
            "window_seconds": self.seconds,
            "service_time_seconds": self.service_time_seconds,
            "spike_at_seconds": self.spike_at,
            "peak_concurrency": round(self.peak, 3),
        }


_NUMBER = r"(\d+(?:\.\d+)?)"
_SPIKE = re.compile(rf"{_NUMBER}:{_NUMBER}@(\d+)(?:\+(\d+))?")
_RAMP = re.compile(rf"{_NUMBER}:{_NUMBER}@(\d+)-(\d+)")


def _window(duration: int | None, needed: int, default: int) -> int:
    window = duration if duration is not None else max(default, needed)
    if window <= 0:
        raise TrafficError("the window must be at least 1 second long")
    if window > MAX_WINDOW_SECONDS:
        raise TrafficError(f"the window is {window} s; at most {MAX_WINDOW_SECONDS} s (one week) is simulated")
    return window


def spike(text: str, *, duration: int | None, default_window: int, service_time: float) -> Traffic:
    """``BASE:PEAK@T`` (peak from second T to the end) or ``BASE:PEAK@T+HOLD`` (peak for HOLD seconds, then base)."""
    m = _SPIKE.fullmatch(text.strip())
    if not m:
        raise TrafficError(
            f"--spike {text!r}: expected BASE:PEAK@T or BASE:PEAK@T+HOLD in concurrent requests and seconds, "
            "e.g. 0:16@60+1200 (idle, then 16 concurrent requests from second 60 for 20 minutes)"
        )
    base, peak, at = float(m[1]), float(m[2]), int(m[3])
    hold = int(m[4]) if m[4] is not None else None
    if hold == 0:
        raise TrafficError(f"--spike {text!r}: HOLD must be at least 1 second")
    window = _window(duration, at + (hold or 0) + 1, default_window)
    if at >= window:
        raise TrafficError(f"--spike {text!r}: the spike starts at {at} s, after the {window} s window ends")
    end = window if hold is None else min(window, at + hold)
    demand = tuple(peak if at <= t < end else base for t in range(window))
    desc = f"{base:g} -> {peak:g} concurrent requests at {at} s" + (f" for {hold} s, then {base:g}" if hold else "")
    return Traffic(demand, desc, "spike", service_time, at)


def ramp(text: str, *, duration: int | None, default_window: int, service_time: float) -> Traffic:
    """``BASE:PEAK@START-END``: base until START, linear to peak at END, then peak to the end of the window."""
    m = _RAMP.fullmatch(text.strip())
    if not m:
        raise TrafficError(
            f"--ramp {text!r}: expected BASE:PEAK@START-END in concurrent requests and seconds, e.g. 0:16@60-360"
        )
    base, peak, start, end = float(m[1]), float(m[2]), int(m[3]), int(m[4])
    if end <= start:
        raise TrafficError(f"--ramp {text!r}: END ({end} s) must be after START ({start} s)")
    window = _window(duration, end + 1, default_window)
    if start >= window:
        raise TrafficError(f"--ramp {text!r}: the ramp starts at {start} s, after the {window} s window ends")

    def at(t: int) -> float:
        if t < start:
            return base
        if t >= end:
            return peak
        return base + (peak - base) * (t - start) / (end - start)

    desc = f"{base:g} -> {peak:g} concurrent requests, ramping from {start} s to {end} s"
    return Traffic(tuple(at(t) for t in range(window)), desc, "ramp", service_time, start)


def read_trace(path: str | Path, *, duration: int | None, service_time: float | None, default_service_time: float) -> Traffic:
    """A CSV with a header: ``concurrency`` or ``rps`` (one row per second), optionally with a ``second`` column.

    With ``second``, rows may skip seconds: a value holds until the next row. ``rps`` needs the mean service
    time (``--service-time``) to become concurrency.
    """
    p = Path(path)
    try:
        raw = read_bytes(p, MAX_TRACE_BYTES + 1, "trace")  # never blocks on a FIFO
        if len(raw) > MAX_TRACE_BYTES:
            raise TrafficError(f"{p}: the trace is larger than {MAX_TRACE_BYTES} bytes, the most that is read")
        text = raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise TrafficError(f"{p}: trace file not found") from None
    except SpecialFileError as exc:
        raise TrafficError(str(exc)) from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise TrafficError(f"{p}: cannot read the trace ({exc.__class__.__name__})") from None
    return parse_trace(text, str(p), duration=duration, service_time=service_time, default_service_time=default_service_time)


def parse_trace(
    text: str, source: str, *, duration: int | None, service_time: float | None, default_service_time: float
) -> Traffic:
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise TrafficError(f"{source}: the trace is empty; it needs a header (concurrency or rps) and one row per second")
    header = [h.strip().lower() for h in rows[0]]
    value_columns = [h for h in header if h in ("concurrency", "rps")]
    unknown = [h for h in header if h not in ("concurrency", "rps", "second")]
    if len(value_columns) != 1 or unknown or len(set(header)) != len(header):
        # What the header holds is never repeated: a file named by mistake may hold secrets.
        found = f"line 1 has {len(header)} column(s), {len(value_columns)} of them a value column"
        raise TrafficError(
            f"{source}, line 1: the header must name one value column, `concurrency` (concurrent requests) or `rps` "
            f"(requests per second), and optionally `second`; {found}"
            + (f", {len(unknown)} unknown" if unknown else "") + (", one repeated" if len(set(header)) != len(header) else "")
        )
    column = value_columns[0]
    if column == "rps" and service_time is None:
        raise TrafficError(
            f"{source}: a trace in requests per second needs the mean service time to become concurrency: "
            "give --service-time SECONDS (how long one request takes at full speed)"
        )
    service = service_time if service_time is not None else default_service_time
    vi = header.index(column)
    si = header.index("second") if "second" in header else None
    points: list[tuple[int, float]] = []
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise TrafficError(f"{source}, line {n}: {len(row)} values for {len(header)} columns")
        try:
            value = float(row[vi])
        except ValueError:
            raise TrafficError(f"{source}, line {n}: {column} (column {vi + 1}) is not a number") from None
        if not math.isfinite(value) or value < 0:
            raise TrafficError(f"{source}, line {n}: {column} must be a finite number >= 0")
        if si is None:
            second = len(points)
        else:
            try:
                second = int(row[si])
            except ValueError:
                raise TrafficError(f"{source}, line {n}: second (column {si + 1}) is not a whole number") from None
            if second < 0 or (points and second <= points[-1][0]):
                raise TrafficError(f"{source}, line {n}: seconds must start at 0 or later and increase from row to row")
            if second >= MAX_WINDOW_SECONDS:
                raise TrafficError(f"{source}, line {n}: second is beyond the one-week limit")
        points.append((second, value * service if column == "rps" else value))
    if not points:
        raise TrafficError(f"{source}: the trace has a header but no rows")
    window = _window(duration, points[-1][0] + 1, points[-1][0] + 1)
    demand = [0.0] * window
    for i, (second, value) in enumerate(points):
        until = points[i + 1][0] if i + 1 < len(points) else window
        for t in range(second, min(until, window)):
            demand[t] = value
    unit = "requests per second" if column == "rps" else "concurrent requests"
    desc = f"trace {Path(source).name}: {len(points)} rows of {unit}"
    return Traffic(tuple(demand), desc, "trace", service, None)


def default_spike(max_concurrency: float, *, at: int, hold: int, fraction: float, window: int, service_time: float) -> Traffic:
    """Idle, then a spike to ``fraction`` of what the maximum capacity serves (at least one request)."""
    peak = max(1.0, math.floor(max_concurrency * fraction))
    return spike(f"0:{peak:g}@{at}+{hold}", duration=window, default_window=window, service_time=service_time)
