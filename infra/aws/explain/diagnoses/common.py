"""What the finders share: the statuses of a failed scaling activity, how a :class:`Finding` is made for the target
under examination, and how much quoted evidence a finding shows.
"""

from __future__ import annotations

from collections.abc import Iterable

from fastscale.infra.aws.explain.model import Evidence, Finding

#: Scaling activities that failed (an Unfulfilled one asked for capacity that never came).
FAILED_ACTIVITY_STATUSES = frozenset({"Failed", "Unfulfilled"})


def finding(ev: Evidence, code: str, title: str, evidence: Iterable[str], fix: str) -> Finding:
    return Finding(code, ev.spec.label, title, tuple(evidence), fix)


def cap(items: list[str], n: int = 3) -> list[str]:
    """At most n quoted pieces of evidence, then how many more there were."""
    return items[:n] + ([f"... and {len(items) - n} more like these"] if len(items) > n else [])

