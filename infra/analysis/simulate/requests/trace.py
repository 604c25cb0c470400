"""A request trace, read and checked: when each request arrived, its prompt and its output tokens.

Two CSV layouts: the public Azure LLM inference traces (a date and time per request) and one with times in
seconds. Every mistake in a trace or in what the request-level model reads beside it (a profile, token rates:
:mod:`~fastscale.infra.analysis.simulate.requests.rates`) is a :class:`RequestInputError` that says where (the file
and line, or the workload) and why, never what the file holds: a file named by mistake (or by a link a pull request
committed, say to a file of credentials) must not end up in a CI log through an error message. What the trace drives
is in :mod:`~fastscale.infra.analysis.simulate.requests.replay`.
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
from fastscale.infra.base.limits import MAX_REQUEST_TOKENS
from fastscale.infra.base.safe_files import SpecialFileError, read_bytes

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
            f"trace) or timestamp,input_tokens,output_tokens (seconds); {_header_mismatch(names)}"
        )
    ti, ii, oi = (names.index(c) for c in columns)
    shown = _shown(columns)
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
                        f"{source}, line {line}: TIMESTAMP (column {ti + 1}) is not a date and time such as "
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
                    raise RequestInputError(
                        f"{source}, line {line}: timestamp (column {ti + 1}) is not a number of seconds") from None
                if not math.isfinite(at) or at < 0:
                    raise RequestInputError(f"{source}, line {line}: timestamp must be a finite number >= 0")
            try:  # the common case at full speed; what is wrong is worked out only when something is
                prompt, output = int(row[ii]), int(row[oi])
            except ValueError:
                prompt = output = -1
            if not (0 <= prompt <= MAX_REQUEST_TOKENS and 0 <= output <= MAX_REQUEST_TOKENS):
                raise _token_error(row, ((ii, shown[1]), (oi, shown[2])), f"{source}, line {line}")
            rows.append((at, prompt, output))
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


def _shown(columns: tuple[str, ...]) -> list[str]:
    """The header names of a layout as its files spell them."""
    return ["TIMESTAMP", "ContextTokens", "GeneratedTokens"] if columns is AZURE_COLUMNS else list(columns)


def _header_mismatch(names: list[str]) -> str:
    """What the header lacks, in the expected names only: the file's own text is never repeated."""
    closest = max((AZURE_COLUMNS, SECONDS_COLUMNS), key=lambda cols: len(set(cols) & set(names)))
    missing = [shown for name, shown in zip(closest, _shown(closest), strict=True) if name not in names]
    found = f"line 1 has {len(names)} column(s)"
    return f"{found}, without {', '.join(missing)}" if missing else f"{found}, some of them unknown or repeated"


def _token_error(row: list[str], cells: tuple[tuple[int, str], ...], where: str) -> RequestInputError:
    """Why a request's prompt or output tokens are not a whole number from 0 to :data:`MAX_REQUEST_TOKENS`:
    which column, never what it holds."""
    for index, name in cells:
        text = row[index].strip()
        what = f"{where}: {name} (column {index + 1})"
        digits = text.lstrip("+")
        if digits.isdigit() and (len(digits.lstrip("0")) > len(str(MAX_REQUEST_TOKENS))
                                 or int(digits) > MAX_REQUEST_TOKENS):
            return RequestInputError(f"{what} is more than {MAX_REQUEST_TOKENS:,} tokens, fastscale's limit for one "
                                     "request")
        try:
            value = int(text)
        except ValueError:
            return RequestInputError(f"{what} is not a whole number of tokens")
        if value < 0:
            return RequestInputError(f"{what} must be 0 or more")
    return RequestInputError(f"{where}: a token count is out of range")  # not reached: one cell is wrong


def read_request_trace(path: str | Path) -> RequestTrace:
    p = Path(path)
    try:
        raw = read_bytes(p, MAX_TRACE_BYTES + 1, "trace")  # never blocks on a FIFO, never reads /proc
        if len(raw) > MAX_TRACE_BYTES:
            raise RequestInputError(f"{p}: the trace is larger than {MAX_TRACE_BYTES} bytes, the most that is read")
        text = raw.decode("utf-8-sig")
    except FileNotFoundError:
        raise RequestInputError(f"{p}: trace file not found") from None
    except SpecialFileError as exc:
        raise RequestInputError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestInputError(f"{p}: cannot read the trace ({exc.__class__.__name__})") from None
    return parse_request_trace(text, str(p))
