"""Keeping Application Auto Scaling out of a measurement: refuse to start while a scaling activity of the target is
Pending or InProgress, suspend dynamic scaling (scheduled scaling keeps its state), find how much capacity auto
scaling asked for meanwhile (the restore never undercuts it, nor the target's minimum), then put the suspended
state back.

:mod:`.run` holds a :class:`ScalingGuard` around the measurement; :func:`requested_count` also serves ``explain``,
which reads the same activity descriptions.
"""

from __future__ import annotations

import re
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import describe_error
from fastscale.infra.aws.measure.report import SUSPEND_KEYS, MeasureError
from fastscale.infra.base.aws_facts import SERVICE_NAMESPACE

#: Scaling activities that are still running: a measurement must not start on top of them.
ACTIVE_ACTIVITY_STATUSES = frozenset({"Pending", "InProgress"})
#: Activities whose desired count auto scaling asked for (and so a restore must not undercut).
_ASKED_STATUSES = frozenset({"Pending", "InProgress", "Successful"})


def requested_count(text: str) -> int | None:
    """The capacity an activity set or tried to set: "Setting desired copy count to 2." -> 2."""
    found = _REQUESTED.search(text or "")
    return int(found.group(1)) if found else None


_REQUESTED = re.compile(r"desired (?:copy |instance )?count to (\d+)", re.IGNORECASE)


class ScalingGuard:
    """Keeps Application Auto Scaling out of the measurement: refuse while busy, suspend, then put back."""

    def __init__(self, autoscaling: Any, resource_id: str, dimension: str):
        self.aas, self.resource_id, self.dimension = autoscaling, resource_id, dimension
        self.before: dict[str, bool] = {}
        self.seen: set[str] = set()
        self.suspended = False
        self.interrupted = False  # Ctrl-C hit the resume

    @property
    def _ids(self) -> dict[str, str]:
        return {"ServiceNamespace": SERVICE_NAMESPACE, "ResourceId": self.resource_id, "ScalableDimension": self.dimension}

    def _target(self) -> dict[str, Any] | None:
        found = self.aas.describe_scalable_targets(
            ServiceNamespace=SERVICE_NAMESPACE, ResourceIds=[self.resource_id], ScalableDimension=self.dimension
        ).get("ScalableTargets", [])
        return found[0] if found else None

    def suspend(self) -> None:
        try:
            target = self._target()
            if target is None:
                return  # not registered: no auto scaling to race
            activities = self.aas.describe_scaling_activities(**self._ids).get("ScalingActivities", [])
        except ClientError as exc:
            raise MeasureError(f"cannot read the scaling state of {self.resource_id}: {describe_error(exc)}") from None
        active = [a for a in activities if a.get("StatusCode") in ACTIVE_ACTIVITY_STATUSES]
        if active:
            a = active[0]
            raise MeasureError(
                f"a scaling activity of {self.resource_id} is {a['StatusCode']} ({a.get('Description', '')} "
                f"cause: {a.get('Cause', '')}); measure once it has ended"
            )
        self.seen = {a.get("ActivityId", "") for a in activities}
        state = target.get("SuspendedState") or {}
        self.before = {k: bool(state.get(k, False)) for k in SUSPEND_KEYS}
        try:
            self.aas.register_scalable_target(**self._ids, SuspendedState={
                "DynamicScalingInSuspended": True,
                "DynamicScalingOutSuspended": True,
                "ScheduledScalingSuspended": self.before["ScheduledScalingSuspended"],
            })
        except ClientError as exc:
            raise MeasureError(f"cannot suspend dynamic scaling of {self.resource_id}: {describe_error(exc)}") from None
        except KeyboardInterrupt:
            self.suspended = True  # the request may have been applied: resume to be sure
            raise
        self.suspended = True

    def floor(self, before: int) -> tuple[int, str]:
        """The capacity to restore: ``before``, or more when auto scaling asked for more meanwhile (an activity
        that started before the suspension took effect, a scheduled action) or the minimum was raised."""
        if not self.suspended:
            return before, ""
        try:
            activities = self.aas.describe_scaling_activities(**self._ids).get("ScalingActivities", [])
            target = self._target()
        except ClientError:
            return before, ""
        asked = [
            (n, a) for a in activities
            if a.get("ActivityId") not in self.seen and a.get("StatusCode") in _ASKED_STATUSES
            for n in [requested_count(a.get("Description", "")) or requested_count(a.get("StatusMessage", ""))]
            if n is not None
        ]
        best, reason = before, ""
        if asked:
            n, a = max(asked, key=lambda x: x[0])
            if n > best:
                best, reason = n, f"auto scaling asked for {n} meanwhile ({a.get('Cause', '')})"
        minimum = int(target.get("MinCapacity", 0)) if target else 0
        if minimum > best:
            best, reason = minimum, f"the scalable target's minimum is now {minimum}"
        return best, reason

    def resume(self) -> tuple[bool, str | None]:
        """Put the SuspendedState found before the measurement back."""
        try:
            self.aas.register_scalable_target(**self._ids, SuspendedState=dict(self.before))
        except ClientError as exc:
            return False, describe_error(exc)
        except KeyboardInterrupt:
            self.interrupted = True
            return False, "interrupted (Ctrl-C) before it was resumed"
        self.suspended = False
        return True, None
