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

The package, one module per part: :mod:`.report` (what a measurement reports, and the command that undoes
whatever it left changed), :mod:`.guard` (keeping Application Auto Scaling out of it), :mod:`.run` (the
measurement itself: the request, the wait, the restore). The names below are the ones callers use.
"""

from __future__ import annotations

from fastscale.infra.aws.measure.guard import ACTIVE_ACTIVITY_STATUSES, requested_count
from fastscale.infra.aws.measure.report import (
    Event,
    LeftBehind,
    MeasureError,
    Measurement,
    Where,
    capacity_command,
    count,
    resume_command,
)
from fastscale.infra.aws.measure.run import DEFAULT_POLL_INTERVAL, DEFAULT_TIMEOUT, measure_scaleout

__all__ = [
    "ACTIVE_ACTIVITY_STATUSES",
    "DEFAULT_POLL_INTERVAL",
    "DEFAULT_TIMEOUT",
    "Event",
    "LeftBehind",
    "MeasureError",
    "Measurement",
    "Where",
    "capacity_command",
    "count",
    "measure_scaleout",
    "requested_count",
    "resume_command",
]
