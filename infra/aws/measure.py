"""Measure a real scale-out: add one copy (or one instance), time it until it serves, then put things back.

Inference components grow by one copy (``UpdateInferenceComponentRuntimeConfig``), single-model endpoints by
one instance (``UpdateEndpointWeightsAndCapacities``). Polling records every change the API shows (status,
copy and instance counts, variant deployment stages) with the time it was first seen, so the report has
phases, not only a total. The previous desired capacity is requested again in a ``finally``: after success,
failure, timeout or Ctrl-C alike, because an extra GPU instance left running costs money every hour.

The timing starts when SageMaker accepts the new desired count, so it compares with an estimate's time
after the scaling decision (``Scenario.after_decision_seconds``), not with detection included.

Given the Application Auto Scaling client, the measurement cannot be raced by auto scaling: it refuses to
start while a scaling activity of the target is Pending or InProgress, suspends dynamic scale-in and
scale-out on the target (``RegisterScalableTarget`` ``SuspendedState``; scheduled scaling keeps its state)
before it reads the capacity, and in the ``finally`` restores the capacity, never below what auto scaling
asked for meanwhile nor below the target's minimum, then the suspended state the target had before.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import describe_error, is_throttling, translate_errors
from fastscale.infra.aws.waiters import SYSTEM_CLOCK, Clock, Deadline, Poll, ProgressCallback, WaitTimeout, wait_until
from fastscale.infra.aws_facts import COMPONENT_COPIES, SERVICE_NAMESPACE, VARIANT_INSTANCES
from fastscale.infra.naming import VARIANT_NAME, component_resource_id, variant_resource_id

#: Scaling activities that are still running: a measurement must not start on top of them.
ACTIVE_ACTIVITY_STATUSES = frozenset({"Pending", "InProgress"})
#: Activities whose desired count auto scaling asked for (and so a restore must not undercut).
_ASKED_STATUSES = frozenset({"Pending", "InProgress", "Successful"})
_SUSPEND_KEYS = ("DynamicScalingInSuspended", "DynamicScalingOutSuspended", "ScheduledScalingSuspended")

#: Statuses during which SageMaker refuses another capacity change: a restore waits them out.
_ENDPOINT_BUSY = frozenset({"Creating", "Updating", "SystemUpdating", "RollingBack"})
_COMPONENT_BUSY = frozenset({"Creating", "Updating"})
_ENDPOINT_FAILED = frozenset({"Failed", "UpdateRollbackFailed", "RollingBack"})

DEFAULT_TIMEOUT = 1800.0
DEFAULT_POLL_INTERVAL = 10.0


def count(n: int, kind: str) -> str:
    """'1 copy', '2 copies', '3 instances'."""
    plural = {"copy": "copies", "instance": "instances"}[kind]
    return f"{n} {kind if n == 1 else plural}"


class MeasureError(Exception):
    """The measurement could not start (nothing was changed): the resource is missing or busy."""


class _Failed(Exception):
    """SageMaker reported that the new capacity will not come."""


@dataclass(frozen=True)
class Event:
    seconds: float  # since SageMaker accepted the new desired count
    what: str


@dataclass
class Measurement:
    kind: str  # "copy" or "instance"
    endpoint: str
    component: str | None
    before: int  # desired capacity before the measurement
    target: int
    outcome: str = "not started"  # in service | failed | timeout | interrupted | not started
    seconds: float | None = None  # time to serving, when it got there
    events: list[Event] = field(default_factory=list)
    instances_before: int | None = None
    instances_after: int | None = None
    restored: bool = False
    restore_error: str | None = None
    error: str | None = None
    restored_to: int | None = None  # the capacity requested at the end (>= before)
    restore_reason: str = ""  # why it is above `before`, when it is
    scalable_target: str | None = None  # resource id whose dynamic scaling was suspended
    suspended_before: dict[str, bool] | None = None  # SuspendedState found before the measurement
    scaling_resumed: bool = True  # the previous SuspendedState is back (trivially true when nothing was suspended)
    resume_error: str | None = None

    @property
    def in_service(self) -> bool:
        return self.outcome == "in service"

    @property
    def ok(self) -> bool:
        return self.in_service and self.restored and self.scaling_resumed

    @property
    def new_instance(self) -> bool:
        """Whether a new instance came up for it (always for an instance; for a copy when it had no room)."""
        if self.kind == "instance":
            return True
        return (
            self.instances_before is not None
            and self.instances_after is not None
            and self.instances_after > self.instances_before
        )

    def phases(self) -> list[dict[str, Any]]:
        """Each observed state and how long it lasted; the last event (serving, or how it ended) closes the list."""
        out = []
        for this, nxt in zip(self.events, self.events[1:]):
            out.append({"name": this.what, "seconds": round(nxt.seconds - this.seconds, 1)})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "endpoint": self.endpoint,
            "component": self.component,
            "before": self.before,
            "target": self.target,
            "outcome": self.outcome,
            "seconds": None if self.seconds is None else round(self.seconds, 1),
            "new_instance": self.new_instance,
            "instances_before": self.instances_before,
            "instances_after": self.instances_after,
            "phases": self.phases(),
            "events": [{"seconds": round(e.seconds, 1), "what": e.what} for e in self.events],
            "restored": self.restored,
            "restored_to": self.restored_to,
            "restore_reason": self.restore_reason,
            "restore_error": self.restore_error,
            "scalable_target": self.scalable_target,
            "suspended_before": self.suspended_before,
            "scaling_resumed": self.scaling_resumed,
            "resume_error": self.resume_error,
            "error": self.error,
        }


def _variant(desc: dict[str, Any], variant: str) -> dict[str, Any]:
    for v in desc.get("ProductionVariants", []):
        if v.get("VariantName") == variant:
            found: dict[str, Any] = v
            return found
    raise MeasureError(f"endpoint {desc.get('EndpointName')} has no variant {variant}")


def _instances(desc: dict[str, Any], variant: str) -> int:
    return int(_variant(desc, variant).get("CurrentInstanceCount") or 0)


def _variant_stages(desc: dict[str, Any], variant: str) -> str:
    stages = [s["Status"] for s in _variant(desc, variant).get("VariantStatus", [])]
    return f" ({', '.join(stages)})" if stages else ""


class _Recorder:
    """Keeps the first time each distinct observation was seen."""

    def __init__(self, m: Measurement, deadline: Deadline, on_event: Callable[[Event], None] | None):
        self.m, self.deadline, self.on_event = m, deadline, on_event
        self.last: str | None = None

    def see(self, what: str) -> None:
        if what == self.last:
            return
        self.last = what
        event = Event(self.deadline.elapsed(), what)
        self.m.events.append(event)
        if self.on_event:
            self.on_event(event)


@translate_errors
def measure_scaleout(
    sagemaker: Any,
    *,
    endpoint: str,
    component: str | None = None,
    variant: str = VARIANT_NAME,
    autoscaling: Any = None,
    timeout: float = DEFAULT_TIMEOUT,
    poll_interval: float = DEFAULT_POLL_INTERVAL,
    restore_timeout: float | None = None,
    clock: Clock = SYSTEM_CLOCK,
    on_event: Callable[[Event], None] | None = None,
    on_progress: ProgressCallback | None = None,
) -> Measurement:
    """Add one copy of ``component`` (or one instance to ``endpoint``), time it, and restore the capacity.

    With ``autoscaling`` (an Application Auto Scaling client), dynamic scaling of the target is suspended for
    the measurement and its previous state restored afterwards (see the module docstring).

    Raises MeasureError, before changing anything, when the resource is missing or not InService, or when a
    scaling activity of the target is in progress. Every other problem is reported in the returned
    Measurement, after the restore was attempted.
    """
    guard = None
    if autoscaling is not None:
        if component is not None:
            guard = _ScalingGuard(autoscaling, component_resource_id(component), COMPONENT_COPIES)
        else:
            guard = _ScalingGuard(autoscaling, variant_resource_id(endpoint, variant), VARIANT_INSTANCES)
        guard.suspend()  # raises MeasureError with nothing changed
    m: Measurement | None = None
    try:
        m = _measure(sagemaker, endpoint=endpoint, component=component, variant=variant, timeout=timeout,
                     poll_interval=poll_interval, restore_timeout=restore_timeout, clock=clock, on_event=on_event,
                     on_progress=on_progress, guard=guard)
    finally:
        # Also when the measurement could not start (MeasureError) or the restore itself was interrupted.
        if guard is not None and guard.suspended:
            resumed, error = guard.resume()
            if m is not None:
                m.scalable_target, m.suspended_before = guard.resource_id, dict(guard.before)
                m.scaling_resumed, m.resume_error = resumed, error
    return m


def _measure(
    sagemaker: Any,
    *,
    endpoint: str,
    component: str | None,
    variant: str,
    timeout: float,
    poll_interval: float,
    restore_timeout: float | None,
    clock: Clock,
    on_event: Callable[[Event], None] | None,
    on_progress: ProgressCallback | None,
    guard: _ScalingGuard | None,
) -> Measurement:
    sm = sagemaker
    try:
        endpoint_desc = sm.describe_endpoint(EndpointName=endpoint)
    except ClientError as exc:
        raise MeasureError(f"cannot read endpoint {endpoint}: {describe_error(exc)}") from None
    if endpoint_desc["EndpointStatus"] != "InService":
        raise MeasureError(f"endpoint {endpoint} is {endpoint_desc['EndpointStatus']}; measure when it is InService")
    instances_before = _instances(endpoint_desc, variant)

    if component is not None:
        try:
            ic = sm.describe_inference_component(InferenceComponentName=component)
        except ClientError as exc:
            raise MeasureError(f"cannot read inference component {component}: {describe_error(exc)}") from None
        status = ic.get("InferenceComponentStatus")
        if status != "InService":
            raise MeasureError(f"inference component {component} is {status}; measure when it is InService")
        runtime = ic.get("RuntimeConfig", {})
        before = int(runtime.get("DesiredCopyCount", runtime.get("CurrentCopyCount", 0)))
        m = Measurement("copy", endpoint, component, before, before + 1, instances_before=instances_before)

        def set_capacity(n: int) -> None:
            sm.update_inference_component_runtime_config(
                InferenceComponentName=component, DesiredRuntimeConfig={"CopyCount": n}
            )

        def busy() -> bool:
            return sm.describe_inference_component(InferenceComponentName=component).get(
                "InferenceComponentStatus"
            ) in _COMPONENT_BUSY
    else:
        v = _variant(endpoint_desc, variant)
        before = int(v.get("DesiredInstanceCount", v.get("CurrentInstanceCount", 0)))
        m = Measurement("instance", endpoint, None, before, before + 1, instances_before=instances_before)

        def set_capacity(n: int) -> None:
            sm.update_endpoint_weights_and_capacities(
                EndpointName=endpoint, DesiredWeightsAndCapacities=[{"VariantName": variant, "DesiredInstanceCount": n}]
            )

        def busy() -> bool:
            return sm.describe_endpoint(EndpointName=endpoint)["EndpointStatus"] in _ENDPOINT_BUSY

    try:
        set_capacity(m.target)
    except ClientError as exc:
        # Refused: nothing changed, so there is nothing to restore.
        m.outcome, m.error, m.restored = "failed", f"SageMaker refused the change: {describe_error(exc)}", True
        m.restored_to = m.before
        return m

    deadline = Deadline(timeout, clock)
    rec = _Recorder(m, deadline, on_event)
    rec.see(f"requested {count(m.target, m.kind)}")
    seen_updating = False

    def probe() -> Poll:
        nonlocal seen_updating
        ep = sm.describe_endpoint(EndpointName=endpoint)
        instances = _instances(ep, variant)
        m.instances_after = instances
        if component is not None:
            ic = sm.describe_inference_component(InferenceComponentName=component)
            status = ic.get("InferenceComponentStatus", "unknown")
            copies = int(ic.get("RuntimeConfig", {}).get("CurrentCopyCount", 0))
            state = f"component {status}, {copies} of {m.target} copies, {instances} instance(s)"
            rec.see(state)
            if status == "Failed":
                raise _Failed(ic.get("FailureReason") or f"inference component {component} failed")
            return Poll(status == "InService" and copies >= m.target, state)
        status = ep["EndpointStatus"]
        state = f"endpoint {status}{_variant_stages(ep, variant)}, {instances} of {m.target} instances"
        rec.see(state)
        if status in _ENDPOINT_FAILED:
            raise _Failed(ep.get("FailureReason") or f"endpoint {endpoint} is {status}")
        seen_updating = seen_updating or status in _ENDPOINT_BUSY
        if status == "InService" and instances < m.target and seen_updating:
            raise _Failed(f"endpoint is back InService with {instances} instance(s): the update was rolled back")
        return Poll(status == "InService" and instances >= m.target, state)

    try:
        wait_until(
            f"{m.kind} {m.target} of {component or endpoint} in service",
            probe,
            deadline=deadline,
            interval=poll_interval,
            on_progress=on_progress,
        )
        m.outcome, m.seconds = "in service", deadline.elapsed()
    except WaitTimeout as exc:
        m.outcome, m.error = "timeout", str(exc)
    except _Failed as exc:
        m.outcome, m.error = "failed", str(exc)
    except ClientError as exc:
        m.outcome, m.error = "failed", f"lost track of the scale-out: {describe_error(exc)}"
    except KeyboardInterrupt:
        m.outcome, m.error = "interrupted", "interrupted (Ctrl-C)"
    finally:
        if m.outcome != "in service":
            # Close the last observed state with the moment the measurement ended. On success the final
            # observation (in service) already is the end of the timeline.
            rec.see(m.outcome)
        m.restored_to, m.restore_reason = guard.floor(m.before) if guard is not None else (m.before, "")
        _restore(m, set_capacity, busy, restore_timeout or max(timeout, DEFAULT_TIMEOUT), poll_interval, clock)
    return m


def _restore(
    m: Measurement,
    set_capacity: Callable[[int], None],
    busy: Callable[[], bool],
    timeout: float,
    poll_interval: float,
    clock: Clock,
) -> None:
    """Ask for the previous capacity again, waiting while SageMaker refuses changes to a busy resource."""
    deadline = Deadline(timeout, clock)
    while True:
        try:
            set_capacity(m.before if m.restored_to is None else m.restored_to)
            m.restored = True
            return
        except ClientError as exc:
            error = describe_error(exc)
            try:
                retry = is_throttling(exc) or busy()
            except ClientError as again:
                retry, error = is_throttling(again), f"{error}; then {describe_error(again)}"
        if not retry or deadline.expired:
            m.restore_error = error
            return
        clock.sleep(min(poll_interval, deadline.remaining()))


def requested_count(text: str) -> int | None:
    """The capacity an activity set or tried to set: "Setting desired copy count to 2." -> 2."""
    found = _REQUESTED.search(text or "")
    return int(found.group(1)) if found else None


_REQUESTED = re.compile(r"desired (?:copy |instance )?count to (\d+)", re.IGNORECASE)


class _ScalingGuard:
    """Keeps Application Auto Scaling out of the measurement: refuse while busy, suspend, then put back."""

    def __init__(self, autoscaling: Any, resource_id: str, dimension: str):
        self.aas, self.resource_id, self.dimension = autoscaling, resource_id, dimension
        self.before: dict[str, bool] = {}
        self.seen: set[str] = set()
        self.suspended = False

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
        self.before = {k: bool(state.get(k, False)) for k in _SUSPEND_KEYS}
        try:
            self.aas.register_scalable_target(**self._ids, SuspendedState={
                "DynamicScalingInSuspended": True,
                "DynamicScalingOutSuspended": True,
                "ScheduledScalingSuspended": self.before["ScheduledScalingSuspended"],
            })
        except ClientError as exc:
            raise MeasureError(f"cannot suspend dynamic scaling of {self.resource_id}: {describe_error(exc)}") from None
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
        self.suspended = False
        return True, None
