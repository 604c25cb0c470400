"""Polling with a deadline, progress reports and throttling tolerance.

botocore's waiters sleep on their own clock, give up on their own attempt count and say little about
what they wait for. GPU endpoints take many minutes to create and delete, so fastscale polls itself:
every wait has a deadline, names what it waits for, reports each observation to a callback (the CLI
shows it), and keeps polling when AWS throttles the describe calls. The clock is injectable so tests of
a 20-minute wait run instantly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import describe_error, is_throttling

#: Seconds between two describe calls while waiting. Endpoint and component transitions take minutes.
DEFAULT_POLL_INTERVAL = 15.0


@dataclass(frozen=True)
class Clock:
    """Where waits read the time and how they sleep; tests pass a fake that advances instantly."""

    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


SYSTEM_CLOCK = Clock()


@dataclass(frozen=True)
class Progress:
    """One observation made while waiting."""

    what: str  # e.g. "endpoint chat-prod-qwen3 to be InService"
    state: str  # what was seen, e.g. "Creating"
    elapsed: float
    timeout: float

    def __str__(self) -> str:
        return f"waiting for {self.what}: {self.state} ({self.elapsed:.0f}s of {self.timeout:.0f}s)"


ProgressCallback = Callable[[Progress], None]

class Poll(NamedTuple):
    """What a probe saw: whether the wait is over, a short state for people, and the raw observation."""

    done: bool
    state: str
    value: Any = None


class WaitTimeout(Exception):
    """The deadline passed before the condition held. Says what was awaited and what was last seen."""

    def __init__(self, what: str, timeout: float, last_state: str, last_value: Any = None):
        self.what = what
        self.timeout = timeout
        self.last_state = last_state
        self.last_value = last_value
        super().__init__(f"timed out after {timeout:.0f}s waiting for {what} (last seen: {last_state})")


class Deadline:
    """A point in time shared by several waits, so one --timeout bounds a whole command."""

    def __init__(self, timeout: float, clock: Clock = SYSTEM_CLOCK):
        self.clock = clock
        self.timeout = timeout
        self.start = clock.now()
        self.end = self.start + timeout

    def remaining(self) -> float:
        return max(0.0, self.end - self.clock.now())

    def elapsed(self) -> float:
        return self.clock.now() - self.start

    @property
    def expired(self) -> bool:
        return self.clock.now() >= self.end


def wait_until(
    what: str,
    probe: Callable[[], Poll],
    *,
    deadline: Deadline,
    interval: float = DEFAULT_POLL_INTERVAL,
    on_progress: ProgressCallback | None = None,
) -> Poll:
    """Call ``probe`` until it reports done; returns its last Poll.

    Raises WaitTimeout when the deadline passes first (the probe always runs at least once, so an
    already expired deadline still gives an up-to-date answer). A throttled probe counts as "no news":
    the wait goes on. Any other exception from the probe ends the wait and propagates.
    """
    clock = deadline.clock
    last = Poll(False, "not observed yet")
    while True:
        try:
            last = probe()
        except ClientError as exc:
            if not is_throttling(exc):
                raise
            last = Poll(False, f"throttled by AWS ({describe_error(exc)}), still polling", last.value)
        if on_progress is not None:
            on_progress(Progress(what, last.state, deadline.elapsed(), deadline.timeout))
        if last.done:
            return last
        remaining = deadline.remaining()
        if remaining <= 0:
            raise WaitTimeout(what, deadline.timeout, last.state, last.value)
        clock.sleep(min(interval, remaining))
