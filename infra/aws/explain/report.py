"""One target's events on one timeline, and the report of every target: findings, timeline, scaling paths."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from fastscale.infra.aws.explain.diagnoses import diagnose, reinvoked_by
from fastscale.infra.aws.explain.model import Evidence, Finding, Window, clock_time, iso_time
from fastscale.infra.aws.explain.paths import ScalingPath, scaling_paths
from fastscale.infra.base.aws_facts import (
    NO_CAPACITY_METRIC,
)


@dataclass(frozen=True)
class TimelineEntry:
    at: datetime
    source: str  # "scaling", "alarm", "metric", "sagemaker"
    event: str

    def to_dict(self) -> dict[str, Any]:
        return {"at": iso_time(self.at), "source": self.source, "event": self.event}


def timeline(ev: Evidence) -> list[TimelineEntry]:
    out: list[TimelineEntry] = []
    for a in ev.activities:
        if a.not_scaled:
            reasons = ", ".join(
                r.code + "".join(f" {k} {v}" for k, v in (("current", r.current), ("max", r.maximum), ("min", r.minimum))
                                 if v is not None) for r in a.not_scaled)
            out.append(TimelineEntry(a.at, "scaling", f"not scaled ({reasons}); cause: {a.cause}"))
        else:
            text = f"{a.description} {a.status}"
            if a.message:
                text += f": {a.message}"
            again = reinvoked_by(ev, a)
            note = ""
            if again is not None:
                since = f"since {clock_time(again[1])}" if again[1] is not None else "from before the window"
                note = (f"; re-invoked: {again[0]} in ALARM {since} (Auto Scaling actions repeat while the alarm "
                        "stays in ALARM)")
            out.append(TimelineEntry(a.at, "scaling", f"{text} (cause: {a.cause}{note})"))
    for c in ev.alarm_changes:
        out.append(TimelineEntry(c.at, "alarm", f"{c.role} alarm {c.alarm}: {c.old} -> {c.new}"
                                 + (f" ({c.reason})" if c.reason else "")))
    for act in ev.alarm_actions:
        out.append(TimelineEntry(act.at, "alarm", f"{act.role} alarm {act.alarm}: {act.summary}"))
    series = ev.scaling_metric
    if series and series.points:
        above = next(((t, v) for t, v in series.points if v > ev.spec.target_value), None)
        if above:
            out.append(TimelineEntry(above[0], "metric", f"{series.name} {above[1]:g} above the target "
                                     f"{ev.spec.target_value:g} (first datapoint above)"))
        top = max(series.points, key=lambda p: p[1])
        out.append(TimelineEntry(top[0], "metric", f"{series.name} peak {top[1]:g}"))
    if ev.no_capacity:
        first = next(((t, v) for t, v in ev.no_capacity.points if v > 0), None)
        if first:
            out.append(TimelineEntry(first[0], "metric", f"{NO_CAPACITY_METRIC} {first[1]:g} (first failed request "
                                     "for lack of capacity)"))
    r = ev.resource
    if r is not None:
        for s in r.stages:
            if s.at is not None:
                out.append(TimelineEntry(s.at, "sagemaker", f"variant {s.status}" + (f": {s.message}" if s.message else "")))
        now = f"endpoint {r.endpoint_status}"
        if r.instances_current is not None:
            now += f", {r.instances_current} instance(s)"
        if r.component_status:
            now += f"; component {r.component_status}, {r.copies_current} of {r.copies_desired} copies"
        for where, text in r.messages():
            if not where.startswith("variant"):
                now += f"; {where}: {text}"
        out.append(TimelineEntry(ev.window.end, "sagemaker", f"now: {now}"))
    order = {"metric": 0, "alarm": 1, "scaling": 2, "sagemaker": 3}  # cause before effect at the same second
    return sorted(out, key=lambda e: (e.at, order.get(e.source, 4)))


# --------------------------------------------------------------------------------------------- report


@dataclass
class TargetReport:
    evidence: Evidence
    findings: list[Finding]
    timeline: list[TimelineEntry]

    @property
    def paths(self) -> list[ScalingPath]:
        return scaling_paths(self.evidence)

    def to_dict(self) -> dict[str, Any]:
        ev, spec = self.evidence, self.evidence.spec
        metrics = [m.to_dict() for m in (ev.scaling_metric, ev.no_capacity, ev.invocations) if m is not None]
        return {
            "target": spec.label,
            "kind": spec.kind,
            "resource_id": spec.resource_id,
            "scalable_dimension": spec.dimension,
            "registered": ev.registered,
            "capacity": {"min": ev.capacity_min, "max": ev.capacity_max},
            "suspended": ev.suspended,
            "scaling_paths": [p.to_dict() for p in self.paths],
            "timeline": [e.to_dict() for e in self.timeline],
            "metrics": metrics,
            "findings": [f.to_dict() for f in self.findings],
        }


@dataclass
class Explanation:
    window: Window
    targets: list[TargetReport]

    @property
    def findings(self) -> list[Finding]:
        return [f for t in self.targets for f in t.findings]

    @property
    def ok(self) -> bool:
        """Nothing found, and every scaling path the config expects exists and is wired."""
        return not self.findings and all(p.ok for t in self.targets for p in t.paths)

    def to_dict(self) -> dict[str, Any]:
        return {"window": self.window.to_dict(), "ok": self.ok, "findings": len(self.findings),
                "targets": [t.to_dict() for t in self.targets]}


def explain(evidence: list[Evidence]) -> Explanation:
    """Findings and timeline of every target (pure: no AWS)."""
    window = evidence[0].window if evidence else Window(datetime.now(UTC), datetime.now(UTC))
    return Explanation(window, [TargetReport(ev, diagnose(ev), timeline(ev)) for ev in evidence])


