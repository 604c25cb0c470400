"""The finders: pure functions ``Evidence -> list[Finding]``, one per cause, each finding with the evidence
that proves it and the fix. AWS only states a cause in free text (``StatusMessage``, ``FailureReason``), so the
finders match the wording AWS uses, quoted in the patterns below; anything failed that matches none is still
reported with AWS's own words.

The finders by subject, one module each: :mod:`.capacity` (capacity that did not come: the maximum, the
region's capacity, the account's quota, copies without an instance, start-up failures, and anything else AWS
reports failed), :mod:`.detection` (demand that was seen late or acted on slowly: the metric, cooldowns, the
scale-from-zero alarm), :mod:`.wiring` (the scaling set-up itself: not registered, suspended, a path missing or
unwired); :mod:`.common` holds what they share. :data:`FINDERS` is the order the report lists findings in.
"""

from __future__ import annotations

from collections.abc import Callable

from fastscale.infra.aws.explain.diagnoses.capacity import (
    find_copies_pending,
    find_insufficient_capacity,
    find_max_reached,
    find_other_failures,
    find_quota_reached,
    find_startup_timeouts,
)
from fastscale.infra.aws.explain.diagnoses.detection import (
    find_alarm_cannot_fire,
    find_cooldown_holding,
    find_cooldown_limited,
    find_metric_problems,
    reinvoke_seconds,
    reinvoked_by,
)
from fastscale.infra.aws.explain.diagnoses.wiring import find_broken_paths, find_not_registered, find_scaling_suspended
from fastscale.infra.aws.explain.model import Evidence, Finding

FINDERS: tuple[Callable[[Evidence], list[Finding]], ...] = (
    find_not_registered,
    find_scaling_suspended,
    find_max_reached,
    find_insufficient_capacity,
    find_quota_reached,
    find_copies_pending,
    find_startup_timeouts,
    find_metric_problems,
    find_cooldown_holding,
    find_cooldown_limited,
    find_broken_paths,
    find_alarm_cannot_fire,
    find_other_failures,
)


def diagnose(ev: Evidence) -> list[Finding]:
    return [f for finder in FINDERS for f in finder(ev)]


__all__ = [
    "FINDERS",
    "diagnose",
    "find_alarm_cannot_fire",
    "find_broken_paths",
    "find_cooldown_holding",
    "find_cooldown_limited",
    "find_copies_pending",
    "find_insufficient_capacity",
    "find_max_reached",
    "find_metric_problems",
    "find_not_registered",
    "find_other_failures",
    "find_quota_reached",
    "find_scaling_suspended",
    "find_startup_timeouts",
    "reinvoke_seconds",
    "reinvoked_by",
]
