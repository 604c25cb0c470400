"""A request trace, read and checked: when each request arrived, its prompt and its output tokens.

Two CSV layouts: the public Azure LLM inference traces (a date and time per request) and one with times in
seconds. Every mistake in a trace or in what the request-level model reads beside it (a profile, token rates:
:mod:`~fastscale.infra.analysis.simulate.requests.rates`) is a :class:`RequestInputError` that says where (the file
and line, or the workload) and why. What the trace drives is in :mod:`~fastscale.infra.analysis.simulate.requests.replay`.
"""

from __future__ import annotations

import csv
import functools
import io
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastscale.infra.analysis.simulate.traffic import MAX_TRACE_BYTES, MAX_WINDOW_SECONDS

#: Header of the public Azure LLM inference traces, and of a trace with times in seconds (case-insensitive).
AZURE_COLUMNS = ("timestamp", "contexttokens", "generatedtokens")
SECONDS_COLUMNS = ("timestamp", "input_tokens", "output_tokens")

#: Most requests read from one trace (a week at ~30 requests per second).
MAX_REQUESTS = 20_000_000


class RequestInputError(ValueError):
    """A request trace or a profile that cannot be read, or rates that cannot be known: a user mistake."""


@dataclass(frozen=True)
class RequestTrace:
    """Requests in arrival order: seconds from the trace's start, prompt and output tokens."""

    arrivals: tuple[float, ...]
    input_tokens: tuple[int, ...]
    output_tokens: tuple[int, ...]
    source: str
    format: str  # azure | seconds

    def __len__(self) -> int:
        return len(self.arrivals)

    @property
    def seconds(self) -> int:
        """The window that holds every arrival (whole seconds)."""
        return int(self.arrivals[-1]) + 1 if self.arrivals else 1

    @functools.cached_property
    def mean_request_tokens(self) -> float:
        """Mean prompt and output tokens of a request: what a copy's KV cache is sized for."""
        return (sum(self.input_tokens) + sum(self.output_tokens)) / max(1, len(self))

    @functools.cached_property
    def mean_context_tokens(self) -> float:
        """Mean tokens a decoding sequence holds: its prompt and half its output."""
        return (sum(self.input_tokens) + sum(self.output_tokens) / 2) / max(1, len(self))

    @property
    def description(self) -> str:
        return f"{len(self)} requests over {self.seconds} s from {Path(self.source).name} ({self.format} format)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "requests": len(self),
            "seconds": self.seconds,
            "mean_input_tokens": round(sum(self.input_tokens) / max(1, len(self)), 1),
            "mean_output_tokens": round(sum(self.output_tokens) / max(1, len(self)), 1),
        }


def _azure_time(text: str) -> datetime:
    """``2023-11-16 18:15:46.6805900``: the fraction may have more digits than ``datetime`` keeps (7 here)."""
    head, dot, frac = text.strip().partition(".")
    if not dot:
        return datetime.fromisoformat(head)
    if not frac.isdigit():
        raise ValueError(text)
    return datetime.fromisoformat(f"{head}.{(frac + '00000')[:6]}")


def parse_request_trace(text: str, source: str) -> RequestTrace:
    """A CSV with the header ``TIMESTAMP,ContextTokens,GeneratedTokens`` (Azure LLM inference traces: a
    date-time per request) or ``timestamp,input_tokens,output_tokens`` (seconds); any column order, names
    case-insensitive. Rows are sorted by time; times start at the first request."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise RequestInputError(f"{source}: the trace is empty; it needs a header line") from None
    except csv.Error as exc:
        raise RequestInputError(f"{source}, line 1: not CSV ({exc})") from None
    names = [h.strip().lower().lstrip("\ufeff") for h in header]
    if sorted(names) == sorted(AZURE_COLUMNS):
        fmt, columns = "azure", AZURE_COLUMNS
    elif sorted(names) == sorted(SECONDS_COLUMNS):
        fmt, columns = "seconds", SECONDS_COLUMNS
    else:
        raise RequestInputError(
            f"{source}, line 1: expected the header TIMESTAMP,ContextTokens,GeneratedTokens (Azure LLM inference "
            f"trace) or timestamp,input_tokens,output_tokens (seconds); found {','.join(header) or 'nothing'}"
        )
    ti, ii, oi = (names.index(c) for c in columns)
    rows: list[tuple[float, int, int]] = []
    first: datetime | None = None
    try:
        for row in reader:
            line = reader.line_num
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != len(names):
                raise RequestInputError(f"{source}, line {line}: {len(row)} values for {len(names)} columns")
            stamp = row[ti].strip()
            if fmt == "azure":
                try:
                    when = _azure_time(stamp)
                except ValueError:
                    raise RequestInputError(
                        f"{source}, line {line}: TIMESTAMP {stamp!r} is not a date and time such as "
                        "2023-11-16 18:15:46.6805900"
                    ) from None
                if when.tzinfo is not None:
                    when = when.astimezone(UTC).replace(tzinfo=None)
                first = first or when
                at = (when - first).total_seconds()
            else:
                try:
                    at = float(stamp)
                except ValueError:
                    raise RequestInputError(f"{source}, line {line}: timestamp {stamp!r} is not a number of seconds") from None
                if not math.isfinite(at) or at < 0:
                    raise RequestInputError(f"{source}, line {line}: timestamp must be a finite number >= 0, not {stamp}")
            tokens = []
            for index, name in ((ii, header[ii].strip()), (oi, header[oi].strip())):
                cell = row[index].strip()
                try:
                    value = int(cell)
                except ValueError:
                    raise RequestInputError(f"{source}, line {line}: {name} {cell!r} is not a whole number of tokens") from None
                if value < 0:
                    raise RequestInputError(f"{source}, line {line}: {name} must be 0 or more, not {value}")
                tokens.append(value)
            rows.append((at, tokens[0], tokens[1]))
            if len(rows) > MAX_REQUESTS:
                raise RequestInputError(f"{source}: more than {MAX_REQUESTS} requests; simulate a shorter window")
    except csv.Error as exc:
        raise RequestInputError(f"{source}, line {reader.line_num}: not CSV ({exc})") from None
    if not rows:
        raise RequestInputError(f"{source}: the trace has a header but no requests")
    rows.sort(key=lambda r: r[0])
    start = rows[0][0] if fmt == "azure" else 0.0
    if rows[-1][0] - start >= MAX_WINDOW_SECONDS:
        raise RequestInputError(f"{source}: the trace spans more than the one-week limit")
    return RequestTrace(
        arrivals=tuple(r[0] - start for r in rows),
        input_tokens=tuple(r[1] for r in rows),
        output_tokens=tuple(r[2] for r in rows),
        source=source,
        format=fmt,
    )


def read_request_trace(path: str | Path) -> RequestTrace:
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_TRACE_BYTES:
            raise RequestInputError(f"{p}: the trace is {size} bytes; at most {MAX_TRACE_BYTES} are read")
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise RequestInputError(f"{p}: trace file not found") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as exc:
        raise RequestInputError(f"{p}: cannot read the trace ({exc.__class__.__name__})") from None
    return parse_request_trace(text, str(p))
