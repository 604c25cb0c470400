"""What a measurement reports: a :class:`Measurement` (outcome, time to serving, the observed phases, what was
restored), :class:`MeasureError` when it never started, and for whatever it changed and could not put back a
:class:`LeftBehind` with the AWS CLI command that undoes it (for the same region and endpoint URL: :class:`Where`).

Data and words only: :mod:`.run` fills a :class:`Measurement`; :mod:`.guard` raises :class:`MeasureError`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from fastscale.infra.base.aws_facts import COMPONENT_COPIES, SERVICE_NAMESPACE, VARIANT_INSTANCES
from fastscale.infra.model.naming import VARIANT_NAME

#: The scalable target's SuspendedState keys, as the measurement finds them and puts them back.
SUSPEND_KEYS = ("DynamicScalingInSuspended", "DynamicScalingOutSuspended", "ScheduledScalingSuspended")


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
        own = isinstance(url, str) and re.search(r"\.amazonaws\.com(\.cn)?/?\Z", url) is not None
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
    wanted = {k: bool(state.get(k, False)) for k in SUSPEND_KEYS}
    return shlex.join(["aws", "application-autoscaling", "register-scalable-target", "--service-namespace",
                       SERVICE_NAMESPACE, "--resource-id", resource_id, "--scalable-dimension", dimension,
                       "--suspended-state", ",".join(f"{k}={str(v).lower()}" for k, v in wanted.items())]
                      + where.args())


def suspended_left(resource_id: str, dimension: str, before: dict[str, bool], error: str | None,
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
            out.append(suspended_left(self.scalable_target, self.dimension, self.suspended_before or {},
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

