"""The measurement itself: read the resource, ask SageMaker for one more copy or instance, record every change the
API shows until it serves (or fails, times out, or Ctrl-C stops it), then ask for the previous capacity again,
waiting while SageMaker is busy, in a ``finally``.

:func:`measure_scaleout` is the entry point; it holds a :class:`.guard.ScalingGuard` around the run and returns a
:class:`.report.Measurement`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import describe_error, is_throttling, translate_errors
from fastscale.infra.aws.measure.guard import ScalingGuard
from fastscale.infra.aws.measure.report import (
    Event,
    MeasureError,
    Measurement,
    Where,
    count,
    suspended_left,
)
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
from fastscale.infra.base.aws_facts import COMPONENT_COPIES, VARIANT_INSTANCES
from fastscale.infra.model.naming import VARIANT_NAME, component_resource_id, variant_resource_id

#: Statuses during which SageMaker refuses another capacity change: a restore waits them out.
_ENDPOINT_BUSY = frozenset({"Creating", "Updating", "SystemUpdating", "RollingBack"})
_COMPONENT_BUSY = frozenset({"Creating", "Updating"})
_ENDPOINT_FAILED = frozenset({"Failed", "UpdateRollbackFailed", "RollingBack"})

DEFAULT_TIMEOUT = 1800.0
DEFAULT_POLL_INTERVAL = 10.0


class _Failed(Exception):
    """SageMaker reported that the new capacity will not come."""


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
            guard = ScalingGuard(autoscaling, component_resource_id(component), COMPONENT_COPIES)
        else:
            guard = ScalingGuard(autoscaling, variant_resource_id(endpoint, variant), VARIANT_INSTANCES)
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
                        suspended_left(guard.resource_id, guard.dimension, guard.before, error, where))
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
    guard: ScalingGuard | None,
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
