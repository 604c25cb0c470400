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
import os
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from fastscale.infra.analysis.simulate.traffic import MAX_WINDOW_SECONDS
from fastscale.infra.base.limits import MAX_REQUEST_TOKENS
from fastscale.infra.base.safe_files import SpecialFileError, open_regular_for_reading

#: Header of the public Azure LLM inference traces, and of a trace with times in seconds (case-insensitive).
AZURE_COLUMNS = ("timestamp", "contexttokens", "generatedtokens")
SECONDS_COLUMNS = ("timestamp", "input_tokens", "output_tokens")

#: Most requests read from one trace (a week at ~30 requests per second).
MAX_REQUESTS = 20_000_000
#: Largest trace file read: a week of MAX_REQUESTS requests in the Azure layout (about 45 bytes a line) fits.
#: The file streams through (memory follows the requests, not the bytes), so this only bounds the time spent.
MAX_REQUEST_TRACE_BYTES = 1 << 30
#: Longest line read (a line of the two layouts is under 100 characters).
MAX_LINE_CHARACTERS = 4096
#: Array type of the token columns: unsigned, 4 bytes, holds MAX_REQUEST_TOKENS.
TOKEN_TYPECODE = "I"


class RequestInputError(ValueError):
    """A request trace or a profile that cannot be read, or rates that cannot be known: a user mistake."""


@dataclass(frozen=True)
class RequestTrace:
    """Requests in arrival order: seconds from the trace's start, prompt and output tokens.

    Columnar: one array per column (``array('d')`` for the times, ``array('I')`` for the token counts when read
    from a file), 16 bytes a request instead of a Python object per request; any sequences will do."""

    arrivals: Sequence[float]
    input_tokens: Sequence[int]
    output_tokens: Sequence[int]
    source: str
    format: str  # azure | seconds

    def __len__(self) -> int:
        return len(self.arrivals)

    @property
    def seconds(self) -> int:
        """The window that holds every arrival (whole seconds)."""
        return int(self.arrivals[-1]) + 1 if self.arrivals else 1

    @functools.cached_property
    def input_total(self) -> int:
        """Prompt tokens of every request (summed once: a week holds millions)."""
        return sum(self.input_tokens)

    @functools.cached_property
    def output_total(self) -> int:
        """Output tokens of every request."""
        return sum(self.output_tokens)

    @functools.cached_property
    def mean_request_tokens(self) -> float:
        """Mean prompt and output tokens of a request: what a copy's KV cache is sized for."""
        return (self.input_total + self.output_total) / max(1, len(self))

    @functools.cached_property
    def mean_context_tokens(self) -> float:
        """Mean tokens a decoding sequence holds: its prompt and half its output."""
        return (self.input_total + self.output_total / 2) / max(1, len(self))

    @property
    def description(self) -> str:
        return f"{len(self)} requests over {self.seconds} s from {Path(self.source).name} ({self.format} format)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "format": self.format,
            "requests": len(self),
            "seconds": self.seconds,
            "mean_input_tokens": round(self.input_total / max(1, len(self)), 1),
            "mean_output_tokens": round(self.output_total / max(1, len(self)), 1),
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
    """A trace held in memory as text: see :func:`read_rows`."""
    return read_rows(io.StringIO(text), source)


def read_rows(lines: Iterable[str], source: str) -> RequestTrace:
    """A CSV with the header ``TIMESTAMP,ContextTokens,GeneratedTokens`` (Azure LLM inference traces: a
    date-time per request) or ``timestamp,input_tokens,output_tokens`` (seconds); any column order, names
    case-insensitive. Rows are sorted by time (stably: requests at the same time keep the file's order); times
    start at the first request.

    Read in one pass, line by line, into three arrays: memory grows with the requests (16 bytes each), never with
    the file's size; a trace already in time order (the usual case) is never copied."""
    reader = csv.reader(lines)
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
    width = len(names)
    shown = _shown(columns)
    arrivals, prompts, outputs = array("d"), array(TOKEN_TYPECODE), array(TOKEN_TYPECODE)
    add_arrival, add_prompt, add_output = arrivals.append, prompts.append, outputs.append
    first: datetime | None = None
    in_order = True
    latest = -math.inf
    isfinite = math.isfinite
    count = 0
    try:
        for row in reader:
            if len(row) != width:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                raise RequestInputError(f"{source}, line {reader.line_num}: {len(row)} values for {width} columns")
            stamp = row[ti]
            if fmt == "azure":
                try:
                    when = _azure_time(stamp)
                except ValueError:
                    raise RequestInputError(
                        f"{source}, line {reader.line_num}: TIMESTAMP (column {ti + 1}) is not a date and time such "
                        "as 2023-11-16 18:15:46.6805900"
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
                        f"{source}, line {reader.line_num}: timestamp (column {ti + 1}) is not a number of seconds"
                    ) from None
                if not isfinite(at) or at < 0:
                    raise RequestInputError(f"{source}, line {reader.line_num}: timestamp must be a finite number >= 0")
            try:  # the common case at full speed; what is wrong is worked out only when something is
                prompt, output = int(row[ii]), int(row[oi])
            except ValueError:
                prompt = output = -1
            if not (0 <= prompt <= MAX_REQUEST_TOKENS and 0 <= output <= MAX_REQUEST_TOKENS):
                raise _token_error(row, ((ii, shown[1]), (oi, shown[2])), f"{source}, line {reader.line_num}")
            if at < latest:
                in_order = False
            else:
                latest = at
            add_arrival(at)
            add_prompt(prompt)
            add_output(output)
            count += 1
            if count > MAX_REQUESTS:
                raise RequestInputError(f"{source}: more than {MAX_REQUESTS} requests; simulate a shorter window")
    except csv.Error as exc:
        raise RequestInputError(f"{source}, line {reader.line_num}: not CSV ({exc})") from None
    if not count:
        raise RequestInputError(f"{source}: the trace has a header but no requests")
    if not in_order:
        arrivals, prompts, outputs = _in_time_order(arrivals, prompts, outputs)
    start = arrivals[0] if fmt == "azure" else 0.0
    if arrivals[-1] - start >= MAX_WINDOW_SECONDS:
        raise RequestInputError(f"{source}: the trace spans more than the one-week limit")
    if start:  # times from the earliest request (an Azure trace whose first line is not its earliest request)
        arrivals = array("d", [a - start for a in arrivals])
    return RequestTrace(arrivals=arrivals, input_tokens=prompts, output_tokens=outputs, source=source, format=fmt)


def _in_time_order(arrivals: array[float], *columns: array[int]) -> tuple[array[float], array[int], array[int]]:
    """The columns sorted by arrival, stably. Only for a trace whose lines are out of time order: this one step
    holds a Python object per request."""
    order = sorted(range(len(arrivals)), key=arrivals.__getitem__)
    prompts, outputs = (array(TOKEN_TYPECODE, [column[i] for i in order]) for column in columns)
    return array("d", [arrivals[i] for i in order]), prompts, outputs


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
    """A trace file, read as it streams (see :func:`read_rows`): at most :data:`MAX_REQUEST_TRACE_BYTES` bytes, no
    line longer than :data:`MAX_LINE_CHARACTERS`."""
    p = Path(path)
    try:
        fd = open_regular_for_reading(p, "trace")  # never blocks on a FIFO, never reads /proc
        with open(fd, encoding="utf-8-sig", newline="") as handle:
            if _size_on_disk(handle) > MAX_REQUEST_TRACE_BYTES:
                raise RequestInputError(
                    f"{p}: the trace is larger than {MAX_REQUEST_TRACE_BYTES} bytes, the most that is read")
            return read_rows(_bounded_lines(handle, str(p)), str(p))
    except FileNotFoundError:
        raise RequestInputError(f"{p}: trace file not found") from None
    except SpecialFileError as exc:
        raise RequestInputError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestInputError(f"{p}: cannot read the trace ({exc.__class__.__name__})") from None


def _size_on_disk(handle: TextIO) -> int:
    return os.fstat(handle.fileno()).st_size


def _bounded_lines(handle: TextIO, source: str) -> Iterator[str]:
    """The lines of ``handle``, none longer than :data:`MAX_LINE_CHARACTERS` (a file with no line break is never
    read whole) and no more characters in all than :data:`MAX_REQUEST_TRACE_BYTES` (a file that grows as it is
    read)."""
    readline = handle.readline
    total = 0
    number = 0
    while line := readline(MAX_LINE_CHARACTERS + 1):
        number += 1
        if len(line) > MAX_LINE_CHARACTERS:
            raise RequestInputError(f"{source}, line {number}: longer than {MAX_LINE_CHARACTERS} characters")
        total += len(line)
        if total > MAX_REQUEST_TRACE_BYTES:
            raise RequestInputError(
                f"{source}: the trace is larger than {MAX_REQUEST_TRACE_BYTES} bytes, the most that is read")
        yield line
