"""Why did (or didn't) an endpoint scale? Read what AWS recorded, put it on one timeline, name the causes.

Three steps, kept apart so the reasoning can be tested without AWS:

1. :func:`collect` reads, for each scalable target fastscale deployed (names from :mod:`infra.model.naming`), the
   Application Auto Scaling activities (not-scaled ones included), its policies and the alarms they own, the
   state history of those alarms and of the stack's own alarms, the scaling metrics at their real resolution
   (GetMetricData), and the endpoint / inference component status. The answers become typed events
   (:class:`Activity`, :class:`AlarmChange`, :class:`MetricSeries`, :class:`ResourceState`) in an
   :class:`Evidence` per target.
2. :func:`timeline` orders the events of one target.
3. :func:`diagnose` runs the finders: pure functions ``Evidence -> list[Finding]``, one per cause, each
   finding with the evidence that proves it and the fix.

AWS only states a cause in free text (``StatusMessage``, ``FailureReason``), so the finders match the
wording AWS uses, quoted in their patterns; anything failed that matches none is still reported with
AWS's own words.

The package, one module per part: :mod:`.model` (window, targets, events, findings), :mod:`.diagnoses` (the
finders, one module per subject), :mod:`.paths` (the scaling paths a target should have), :mod:`.report` (timeline and report),
:mod:`.collect` (the AWS reads). The names below are the ones callers use.
"""

from __future__ import annotations

from fastscale.infra.aws.explain.collect import (
    collect,
    parse_activity,
    parse_alarm,
    parse_history,
    parse_metric,
    parse_policy,
    parse_resource,
)
from fastscale.infra.aws.explain.diagnoses import (
    FINDERS,
    diagnose,
    find_alarm_cannot_fire,
    find_broken_paths,
    find_cooldown_holding,
    find_cooldown_limited,
    find_copies_pending,
    find_insufficient_capacity,
    find_max_reached,
    find_metric_problems,
    find_not_registered,
    find_other_failures,
    find_quota_reached,
    find_scaling_suspended,
    find_startup_timeouts,
    reinvoke_seconds,
    reinvoked_by,
)
from fastscale.infra.aws.explain.model import (
    DEFAULT_SINCE,
    FALLBACK_SUGGESTIONS,
    HIGH_RESOLUTION_RETENTION,
    INVOCATIONS_METRIC,
    MAX_WINDOW,
    Activity,
    AlarmAction,
    AlarmChange,
    AlarmDefinition,
    Evidence,
    Finding,
    MetricSeries,
    NotScaled,
    Policy,
    ResourceState,
    TargetSelectionError,
    TargetSpec,
    VariantStage,
    Window,
    parse_duration,
    targets_of,
)
from fastscale.infra.aws.explain.paths import (
    PATH_FROM_ZERO,
    PATH_INSTANCES,
    PATH_SCALE_IN,
    PATH_SCALE_OUT,
    ScalingPath,
    scaling_paths,
)
from fastscale.infra.aws.explain.report import Explanation, TargetReport, TimelineEntry, explain, timeline
from fastscale.infra.base.aws_facts import NO_CAPACITY_METRIC

__all__ = [
    "Activity",
    "AlarmAction",
    "AlarmChange",
    "AlarmDefinition",
    "DEFAULT_SINCE",
    "Evidence",
    "Explanation",
    "FALLBACK_SUGGESTIONS",
    "FINDERS",
    "Finding",
    "HIGH_RESOLUTION_RETENTION",
    "INVOCATIONS_METRIC",
    "MAX_WINDOW",
    "MetricSeries",
    "NO_CAPACITY_METRIC",
    "NotScaled",
    "PATH_FROM_ZERO",
    "PATH_INSTANCES",
    "PATH_SCALE_IN",
    "PATH_SCALE_OUT",
    "Policy",
    "ResourceState",
    "ScalingPath",
    "TargetReport",
    "TargetSelectionError",
    "TargetSpec",
    "TimelineEntry",
    "VariantStage",
    "Window",
    "collect",
    "diagnose",
    "explain",
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
    "parse_activity",
    "parse_alarm",
    "parse_duration",
    "parse_history",
    "parse_metric",
    "parse_policy",
    "parse_resource",
    "reinvoke_seconds",
    "reinvoked_by",
    "scaling_paths",
    "targets_of",
    "timeline",
]
