"""The window a trace is read over, and the durations the command line gives it (``--since 3h``).

CloudWatch keeps 10-second datapoints for 3 hours and 1-minute ones for 15 days (GetMetricData, Amazon
CloudWatch API reference); the request-level simulation replays at most one week
(:data:`~fastscale.infra.analysis.simulate.traffic.MAX_WINDOW_SECONDS`), so a trace reaches back at most a week.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fastscale.infra.analysis.simulate.traffic import MAX_WINDOW_SECONDS

#: Sub-minute (10-second) datapoints stay in CloudWatch for 3 hours; older ones only at 60 s or more.
HIGH_RESOLUTION_RETENTION = timedelta(hours=3)
#: 1-minute datapoints stay for 15 days.
MINUTE_RETENTION = timedelta(days=15)
#: The longest window a trace is built over: the longest the request-level simulation replays.
LONGEST_SINCE = timedelta(seconds=MAX_WINDOW_SECONDS)
DEFAULT_SINCE = "3h"

_DURATION_PART = re.compile(r"(\d+)([smhd])")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, *, longest: timedelta, why_longest: str, why_shortest: str) -> timedelta:
    """'90m', '3h', '1h30m', '2d' -> timedelta, from one minute to ``longest``. Raises ValueError with the
    accepted forms, or with ``why_shortest`` / ``why_longest`` when out of range."""
    raw = text.strip().lower()
    parts = _DURATION_PART.findall(raw)
    if not raw or "".join(n + u for n, u in parts) != raw:
        raise ValueError(f"{text!r} is not a duration: use a number with s, m, h or d, e.g. 30m, 3h, 1h30m, 2d")
    value = timedelta(seconds=sum(int(n) * _UNITS[u] for n, u in parts))
    if value < timedelta(minutes=1):
        raise ValueError(f"{text!r} is shorter than one minute: {why_shortest}")
    if value > longest:
        raise ValueError(f"{text!r} {why_longest}")
    return value


def parse_since(text: str) -> timedelta:
    """``--since`` of a trace read from a live endpoint: one minute to one week."""
    return parse_duration(
        text, longest=LONGEST_SINCE, why_shortest="a trace needs at least one minute of traffic",
        why_longest="is longer than one week, the longest window the request-level simulation replays "
        "(give at most 7d)")


@dataclass(frozen=True)
class Window:
    """Whole minutes, UTC: [start, end)."""

    start: datetime
    end: datetime

    @classmethod
    def ending(cls, now: datetime, since: timedelta) -> Window:
        """The whole minutes up to ``now`` (the minute under way left out: CloudWatch has not summed it yet)."""
        end = now.astimezone(UTC).replace(second=0, microsecond=0)
        start = (end - since).replace(second=0, microsecond=0)
        return cls(start, end)

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()

    def within_high_resolution(self, now: datetime) -> bool:
        """CloudWatch still holds 10-second datapoints for the window: it spans at most 3 hours and ends within a
        minute of ``now`` (its first seconds may be just past the retention: their minute is spread evenly)."""
        return (self.end - self.start <= HIGH_RESOLUTION_RETENTION
                and now.astimezone(UTC) - self.end < timedelta(minutes=1))

    def hours(self) -> list[datetime]:
        """The start of every clock hour the window touches (data capture files are filed by hour)."""
        first = self.start.replace(minute=0)
        out = []
        at = first
        while at < self.end:
            out.append(at)
            at += timedelta(hours=1)
        return out

    def offset(self, when: datetime) -> float:
        """Seconds from the window's start."""
        return (when - self.start).total_seconds()

    def to_dict(self) -> dict[str, Any]:
        return {"start": iso(self.start), "end": iso(self.end), "seconds": int(self.seconds)}


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
