"""What a verification reports: one :class:`Check` per property of a live resource compared with the config, the
whole :class:`VerificationReport`, and the :class:`Checker` through which every check records its result (and
waits, when the verification waits for resources to settle).

The check modules (:mod:`.endpoint`, :mod:`.components`, :mod:`.scaling`) are functions over a :class:`Checker`;
:mod:`.live` makes one per verification.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from fastscale.infra.aws.clients import AwsClients
from fastscale.infra.aws.waiters import Deadline, Poll, ProgressCallback, WaitTimeout, wait_until
from fastscale.infra.model.resolved import ResolvedStack


@dataclass(frozen=True)


class Check:
    """One property of one live resource compared with the config."""

    resource: str  # kind/name, e.g. "inference-component/assist-qwen3-8b"
    check: str  # what was compared, e.g. "target-tracking metric"
    ok: bool
    expected: str | None = None
    actual: str | None = None
    detail: str = ""

    def __str__(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        text = f"{mark} {self.resource}: {self.check}"
        if not self.ok and (self.expected is not None or self.actual is not None):
            text += f": expected {self.expected}, got {self.actual}"
        elif self.ok and self.actual is not None:
            text += f": {self.actual}"
        if self.detail:
            text += f" ({self.detail})"
        return text


@dataclass


class VerificationReport:
    checks: list[Check] = field(default_factory=list)
    waited: bool = True  # False for a one-look status report

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "waited": self.waited,
            "failures": len(self.failures),
            "checks": [asdict(c) for c in self.checks],
        }


def text_of(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    equal: bool = expected == actual
    return equal


class Checker:
    """One verification under way: the clients, the time left for its waits, whether to wait at all, the resolved stack,
    and the checks recorded so far. Every check writes through :meth:`compare` and :meth:`record`."""

    def __init__(
        self,
        aws: AwsClients,
        deadline: Deadline,
        wait: bool,
        interval: float,
        on_progress: ProgressCallback | None,
    ):
        self.aws = aws
        self.deadline = deadline
        self.wait = wait
        self.interval = interval
        self.on_progress = on_progress
        self.checks: list[Check] = []
        self.stack: ResolvedStack | None = None

    def compare(self, resource: str, check: str, expected: Any, actual: Any, detail: str = "") -> bool:
        ok = same(expected, actual)
        self.checks.append(Check(resource, check, ok, text_of(expected), text_of(actual), detail))
        return ok

    def record(self, resource: str, check: str, ok: bool, expected: Any = None, actual: Any = None, detail: str = "") -> bool:
        self.checks.append(Check(resource, check, ok, text_of(expected), text_of(actual), detail))
        return ok

    def observe(self, what: str, probe: Any, wait: bool) -> tuple[Poll, str]:
        """One look, or a wait until settled; returns the last observation and a timeout message if any."""
        if not wait:
            return probe(), ""
        try:
            return wait_until(what, probe, deadline=self.deadline, interval=self.interval, on_progress=self.on_progress), ""
        except WaitTimeout as exc:
            return Poll(False, exc.last_state, exc.last_value), str(exc)

