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

Ctrl-C is caught at every point (suspending, the first reads, the request, the wait, the restore and its
wait, the resume): the run then still tries to put things back, and whatever it could not put back is in
``Measurement.left_behind()`` (or ``MeasureError.left_behind`` when the measurement never started), each
with the exact AWS CLI command that undoes it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import describe_error, is_throttling, translate_errors
from fastscale.infra.aws.waiters import (
    SYSTEM_CLOCK,
    Clock,
    Deadline,
    Poll,
    Progress,
    ProgressCallback,
    WaitTimeout,
    wait_until,
)
from fastscale.infra.base.aws_facts import COMPONENT_COPIES, SERVICE_NAMESPACE, VARIANT_INSTANCES
from fastscale.infra.model.naming import VARIANT_NAME, component_resource_id, variant_resource_id

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


@dataclass(frozen=True)
class LeftBehind:
    """Something a measurement changed and could not put back, and the command that does."""

    what: str
    undo: str  # one AWS CLI command line

    def to_dict(self) -> dict[str, str]:
        return {"what": self.what, "undo": self.undo}


@dataclass(frozen=True)
class Where:
    """Region and endpoint URL the clients use, so an undo command reaches the same place."""

    region: str | None = None
    endpoint_url: str | None = None  # only when it is not AWS's own (an emulator)

    @classmethod
    def of(cls, client: Any) -> Where:
        meta = getattr(client, "meta", None)
        region = getattr(meta, "region_name", None)
        url = getattr(meta, "endpoint_url", None)
        own = isinstance(url, str) and re.search(r"\.amazonaws\.com(\.cn)?/?$", url) is not None
        return cls(region, None if own or not isinstance(url, str) else url)

    def args(self) -> list[str]:
        out = ["--region", self.region] if self.region else []
        return out + (["--endpoint-url", self.endpoint_url] if self.endpoint_url else [])


def capacity_command(kind: str, endpoint: str, component: str | None, variant: str, n: int, where: Where) -> str:
    """The AWS CLI command that sets the desired capacity to ``n``."""
    if kind == "copy" and component is not None:
        args = ["aws", "sagemaker", "update-inference-component-runtime-config", "--inference-component-name",
                component, "--desired-runtime-config", f"CopyCount={n}"]
    else:
        args = ["aws", "sagemaker", "update-endpoint-weights-and-capacities", "--endpoint-name", endpoint,
                "--desired-weights-and-capacities", f"VariantName={variant},DesiredInstanceCount={n}"]
    return shlex.join(args + where.args())


def resume_command(resource_id: str, dimension: str, state: dict[str, bool], where: Where) -> str:
    """The AWS CLI command that puts a scalable target's suspended state back."""
    wanted = {k: bool(state.get(k, False)) for k in _SUSPEND_KEYS}
    return shlex.join(["aws", "application-autoscaling", "register-scalable-target", "--service-namespace",
                       SERVICE_NAMESPACE, "--resource-id", resource_id, "--scalable-dimension", dimension,
                       "--suspended-state", ",".join(f"{k}={str(v).lower()}" for k, v in wanted.items())]
                      + where.args())


def _suspended_left(resource_id: str, dimension: str, before: dict[str, bool], error: str | None,
                    where: Where) -> LeftBehind:
    return LeftBehind(
        f"dynamic scaling of {resource_id} is still suspended ({error or 'not resumed'}): auto scaling neither "
        "adds nor removes capacity until it is resumed",
        resume_command(resource_id, dimension, before, where),
    )


class MeasureError(Exception):
    """The measurement did not start: no capacity was changed. ``left_behind`` names what is still changed all
    the same (dynamic scaling left suspended when resuming failed); ``interrupted`` when Ctrl-C stopped it."""

    def __init__(self, message: str, *, interrupted: bool = False):
        super().__init__(message)
        self.interrupted = interrupted
        self.left_behind: list[LeftBehind] = []


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
    interrupted: bool = False  # Ctrl-C at any point (the measurement, the restore or the resume)
    variant: str = VARIANT_NAME
    where: Where = field(default_factory=Where)

    @property
    def dimension(self) -> str:
        return COMPONENT_COPIES if self.kind == "copy" else VARIANT_INSTANCES

    def left_behind(self) -> list[LeftBehind]:
        """What the run changed and did not put back, each with the command that undoes it (empty when clean)."""
        out = []
        if not self.restored:
            n = self.before if self.restored_to is None else self.restored_to
            thing = (f"inference component {self.component}" if self.kind == "copy" and self.component
                     else f"endpoint {self.endpoint}")
            extra = "copy (and any instance it brought up)" if self.kind == "copy" else "instance"
            out.append(LeftBehind(
                f"{thing} may still have {count(self.target, self.kind)} instead of {count(n, self.kind)}"
                f" ({self.restore_error or 'not restored'}): the extra {extra} is billed while it runs",
                capacity_command(self.kind, self.endpoint, self.component, self.variant, n, self.where),
            ))
        if not self.scaling_resumed and self.scalable_target:
            out.append(_suspended_left(self.scalable_target, self.dimension, self.suspended_before or {},
                                       self.resume_error, self.where))
        return out

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
            "interrupted": self.interrupted,
            "left_behind": [x.to_dict() for x in self.left_behind()],
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
    on_restore_wait: ProgressCallback | None = None,
) -> Measurement:
    """Add one copy of ``component`` (or one instance to ``endpoint``), time it, and restore the capacity.

    With ``autoscaling`` (an Application Auto Scaling client), dynamic scaling of the target is suspended for
    the measurement and its previous state restored afterwards (see the module docstring).

    Raises MeasureError, before changing any capacity, when the resource is missing or not InService, when a
    scaling activity of the target is in progress, or on Ctrl-C before the request; its ``left_behind`` says
    whether scaling stayed suspended. Every other problem, Ctrl-C included, is reported in the returned
    Measurement after the restore was attempted (``on_restore_wait`` hears each wait for a busy resource).
    """
    where = Where.of(sagemaker)
    guard = None
    if autoscaling is not None:
        if component is not None:
            guard = _ScalingGuard(autoscaling, component_resource_id(component), COMPONENT_COPIES)
        else:
            guard = _ScalingGuard(autoscaling, variant_resource_id(endpoint, variant), VARIANT_INSTANCES)
    m: Measurement | None = None
    stopped: MeasureError | None = None
    try:
        try:
            if guard is not None:
                guard.suspend()  # raises MeasureError with nothing changed
            m = _measure(sagemaker, endpoint=endpoint, component=component, variant=variant, timeout=timeout,
                         poll_interval=poll_interval, restore_timeout=restore_timeout, clock=clock,
                         on_event=on_event, on_progress=on_progress, on_restore_wait=on_restore_wait, guard=guard)
        except MeasureError as exc:
            stopped = exc
        except KeyboardInterrupt:
            stopped = MeasureError("interrupted (Ctrl-C) before the measurement changed any capacity",
                                   interrupted=True)
    finally:
        # Also when the measurement could not start, was interrupted, or something unexpected stopped it.
        if guard is not None and guard.suspended:
            resumed, error = guard.resume()
            if m is not None:
                m.scalable_target, m.suspended_before = guard.resource_id, dict(guard.before)
                m.scaling_resumed, m.resume_error = resumed, error
                m.interrupted = m.interrupted or guard.interrupted
            elif stopped is not None:
                stopped.interrupted = stopped.interrupted or guard.interrupted
                if not resumed:
                    stopped.left_behind.append(
                        _suspended_left(guard.resource_id, guard.dimension, guard.before, error, where))
    if stopped is not None:
        raise stopped
    assert m is not None
    m.where = where
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
    on_restore_wait: ProgressCallback | None,
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
        m = Measurement("copy", endpoint, component, before, before + 1, instances_before=instances_before,
                        variant=variant, where=Where.of(sm))

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
        m = Measurement("instance", endpoint, None, before, before + 1, instances_before=instances_before,
                        variant=variant, where=Where.of(sm))

        def set_capacity(n: int) -> None:
            sm.update_endpoint_weights_and_capacities(
                EndpointName=endpoint, DesiredWeightsAndCapacities=[{"VariantName": variant, "DesiredInstanceCount": n}]
            )

        def busy() -> bool:
            return sm.describe_endpoint(EndpointName=endpoint)["EndpointStatus"] in _ENDPOINT_BUSY

    asked_interrupted = False
    try:
        set_capacity(m.target)
    except ClientError as exc:
        # Refused: nothing changed, so there is nothing to restore.
        m.outcome, m.error, m.restored = "failed", f"SageMaker refused the change: {describe_error(exc)}", True
        m.restored_to = m.before
        return m
    except KeyboardInterrupt:
        asked_interrupted = True  # the request may have been accepted: restore as after any interruption

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
        if asked_interrupted:
            raise KeyboardInterrupt
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
        m.outcome, m.error, m.interrupted = "interrupted", "interrupted (Ctrl-C)", True
    finally:
        if m.outcome != "in service":
            # Close the last observed state with the moment the measurement ended. On success the final
            # observation (in service) already is the end of the timeline.
            rec.see(m.outcome)
        try:
            m.restored_to, m.restore_reason = guard.floor(m.before) if guard is not None else (m.before, "")
        except KeyboardInterrupt:
            m.interrupted, m.restored_to, m.restore_reason = True, m.before, ""
        _restore(m, set_capacity, busy, restore_timeout or max(timeout, DEFAULT_TIMEOUT), poll_interval, clock,
                 on_restore_wait)
    return m


def _restore(
    m: Measurement,
    set_capacity: Callable[[int], None],
    busy: Callable[[], bool],
    timeout: float,
    poll_interval: float,
    clock: Clock,
    on_wait: ProgressCallback | None = None,
) -> None:
    """Ask for the previous capacity again, waiting while SageMaker refuses changes to a busy resource.

    Ctrl-C stops the wait (or the request): the capacity is then left as it is and the measurement says so.
    """
    deadline = Deadline(timeout, clock)
    n = m.before if m.restored_to is None else m.restored_to
    thing = f"inference component {m.component}" if m.component else f"endpoint {m.endpoint}"
    try:
        while True:
            try:
                set_capacity(n)
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
            if on_wait is not None:
                on_wait(Progress(f"{thing} to accept the restore to {count(n, m.kind)}",
                                 f"busy, asking again in {min(poll_interval, deadline.remaining()):.0f} s ({error})",
                                 deadline.elapsed(), deadline.timeout))
            clock.sleep(min(poll_interval, deadline.remaining()))
    except KeyboardInterrupt:
        m.interrupted = True
        m.restore_error = f"interrupted (Ctrl-C) while restoring {thing} to {count(n, m.kind)}"


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
        self.before = {k: bool(state.get(k, False)) for k in _SUSPEND_KEYS}
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
