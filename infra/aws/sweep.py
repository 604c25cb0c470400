"""Delete what a failed or partial ``destroy`` left behind, in the order AWS allows.

What is deleted is exactly what ``verify_cleanup`` reports as left: both take the same inventory
(:mod:`infra.aws.inventory`), so a resource is deleted only when its tags (or its owner's, or the marker
the stack wrote) prove it this stack's. Found by name but someone else's: listed as not touched.

The order matters and is forced by AWS (each kind's ``order`` in the inventory):

1. alarms fastscale created (deleting a step policy does not delete the alarm that triggers it), and
   the dashboard;
2. scaling policies, then scalable targets;
3. inference components, adapters before their base. Deletion is asynchronous and refused while a
   component is Creating or Updating: retry, then poll until "Could not find inference component";
4. endpoints: refused with "Cannot delete endpoint with inference component associated" until the
   components are really gone, so retry, then poll until the endpoint is gone;
5. endpoint configurations, then models;
6. log groups, only when asked (``delete_logs``): logs are data;
7. the IAM execution role last: SageMaker still uses it while it finishes deleting endpoints.

Before step 5 the sweep asks AWS which endpoint configurations, models and roles the endpoints and
inference components still present in the account use (:mod:`infra.aws.references`), whoever owns them
(ones this sweep could not delete included), and keeps those: deleting what a live endpoint runs on breaks
it the next time it scales out or is updated. When that cannot be told (a describe call is refused), none of
them is deleted.

Every step is idempotent (not found = already gone), so a sweep can be re-run after an interruption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import (
    AwsClients,
    ClientsArg,
    describe_error,
    is_access_error,
    is_not_found,
    is_throttling,
    resolve,
    translate_errors,
)
from fastscale.infra.aws.inventory import KIND, KINDS, Inventory, Kind, Resource, claim_log_groups, take_inventory
from fastscale.infra.aws.references import IN_USE_KINDS, InUse, in_use
from fastscale.infra.aws.waiters import (
    DEFAULT_POLL_INTERVAL,
    SYSTEM_CLOCK,
    Clock,
    Deadline,
    Poll,
    Progress,
    WaitTimeout,
    wait_until,
)
from fastscale.infra.config import FastscaleConfig

#: Default bound on a whole sweep: deleting GPU endpoints and their components takes minutes each.
DEFAULT_SWEEP_TIMEOUT = 3600.0

DELETED = "deleted"
ALREADY_GONE = "already-gone"
WOULD_DELETE = "would-delete"
FAILED = "failed"
SKIPPED = "skipped"


@dataclass(frozen=True)
class SweepAction:
    kind: str  # same vocabulary as cleanup.Leftover.kind
    name: str
    status: str  # deleted | already-gone | would-delete | failed | skipped
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.status}: {self.kind} {self.name}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Found:
    """Something the sweep found but leaves alone, and why."""

    kind: str
    name: str
    reason: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: {self.reason}"


@dataclass
class SweepReport:
    dry_run: bool
    actions: list[SweepAction] = field(default_factory=list)
    not_touched: list[Found] = field(default_factory=list)  # not this stack's: never deleted
    kept: list[Found] = field(default_factory=list)  # this stack's logs, without delete_logs

    @property
    def ok(self) -> bool:
        return not any(a.status == FAILED for a in self.actions)

    def by_status(self, status: str) -> list[SweepAction]:
        return [a for a in self.actions if a.status == status]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "actions": [asdict(a) for a in self.actions],
            "not_touched": [asdict(f) for f in self.not_touched],
            "kept": [asdict(f) for f in self.kept],
        }


#: Receives a Progress while waiting and a SweepAction when a resource is dealt with.
SweepProgressCallback = Callable[[Progress | SweepAction], None]


@translate_errors
def sweep(
    config: FastscaleConfig,
    clients: ClientsArg = None,
    dry_run: bool = False,
    on_progress: SweepProgressCallback | None = None,
    timeout: float = DEFAULT_SWEEP_TIMEOUT,
    *,
    delete_logs: bool = False,
    clock: Clock = SYSTEM_CLOCK,
    interval: float = DEFAULT_POLL_INTERVAL,
) -> SweepReport:
    """Delete every leftover of ``config`` in the safe order (``dry_run``: only list them).

    Leftovers are what :func:`infra.aws.cleanup.verify_cleanup` reports: the resources the inventory
    proves this stack's. Log groups are deleted only with ``delete_logs``. A resource that cannot be
    deleted is reported as failed and the sweep goes on with the others, except that an endpoint is kept
    while a component on it remains, the execution role while an endpoint or component it serves does, and
    an endpoint configuration, model or role while any endpoint or component in the account uses it.
    """
    aws = resolve(clients, config)
    inventory = take_inventory(config, aws)
    sweeper = _Sweeper(aws, inventory, dry_run, on_progress, Deadline(timeout, clock), interval)
    sweeper.report.not_touched = [Found(r.kind, r.name, r.ownership.reason) for r in inventory.not_touched]
    if not delete_logs:
        if not dry_run:
            claim_log_groups(inventory, config, aws)  # still provable once their endpoint is gone
        sweeper.report.kept = [Found(r.kind, r.name, f"{r.detail}: logs are data, kept (--delete-logs deletes them)") for r in inventory.kept]
    for kind in sorted(KINDS, key=lambda k: k.order):
        if kind.data and not delete_logs:
            continue
        sweeper.sweep_kind(kind, [r for r in inventory.resources if r.kind == kind.name and r.ownership.ours])
    return sweeper.report


@dataclass
class _Pending:
    """An asynchronously deleted resource: delete (retried while refused), then poll until gone."""

    resource: Resource
    kind: Kind
    requested: bool = False
    note: str = "delete not requested yet"


class _Sweeper:
    def __init__(
        self,
        aws: AwsClients,
        inventory: Inventory,
        dry_run: bool,
        on_progress: SweepProgressCallback | None,
        deadline: Deadline,
        interval: float,
    ):
        self.aws = aws
        self.inventory = inventory
        self.dry_run = dry_run
        self.on_progress = on_progress
        self.deadline = deadline
        self.interval = interval
        self.report = SweepReport(dry_run=dry_run)
        self.failed: set[tuple[str, str]] = set()  # keys of resources still there after their turn
        self.gone: set[tuple[str, str]] = set()  # keys deleted, already gone, or (dry run) to be deleted
        self._in_use: InUse | None = None

    def record(self, r: Resource, status: str, detail: str = "") -> SweepAction:
        action = SweepAction(r.kind, r.name, status, detail)
        self.report.actions.append(action)
        if status in (FAILED, SKIPPED):
            self.failed.add(r.key)
        else:
            self.gone.add(r.key)
        if self.on_progress is not None:
            self.on_progress(action)
        return action

    def sweep_kind(self, kind: Kind, resources: list[Resource]) -> None:
        for batch in kind.batches(resources):
            ready = []
            for r in batch:
                why = kind.blocked(r, self.inventory, self.failed) or self.used_by(r)
                if why:
                    self.record(r, SKIPPED, why)
                elif self.dry_run:
                    self.record(r, WOULD_DELETE, r.detail)
                else:
                    ready.append(r)
            if kind.asynchronous and ready:
                self._delete_and_wait(kind, ready)
            else:
                for r in ready:
                    self._once(kind, r)

    def used_by(self, r: Resource) -> str:
        """Why ``r`` must stay because an endpoint or component still present uses it ("" when none does)."""
        if r.kind not in IN_USE_KINDS:
            return ""
        if self._in_use is None:
            roles = any(x.kind == "iam-role" and x.ownership.ours for x in self.inventory.resources)
            gone = self.gone
            self._in_use = in_use(self.aws, skip=lambda kind, name, arn: (kind, arn or name.lower()) in gone, roles=roles)
        if self._in_use.unknown:
            return f"kept: cannot tell whether a live endpoint or component uses it ({self._in_use.unknown})"
        users = self._in_use.of(r.kind, r.name)
        if not users:
            return ""
        return "in use by " + "; ".join(self._holder(kind, name) for kind, name in users)

    def _holder(self, kind: str, name: str) -> str:
        label = KIND[kind].label
        found = next((x for x in self.inventory.of(kind) if x.name.lower() == name.lower()), None)
        if found is None:
            return f"{label} {name} (not this stack's)"
        if not found.ownership.ours:
            return f"{label} {name} (not this stack's: {found.ownership.reason})"
        return f"{label} {name}, which is still there"

    def _once(self, kind: Kind, r: Resource) -> None:
        """A synchronous delete."""
        try:
            result = kind.delete(self.aws, r)
        except ClientError as exc:
            if is_not_found(exc):
                self.record(r, ALREADY_GONE)
            else:
                self.record(r, FAILED, describe_error(exc))
            return
        self.record(r, DELETED, result if isinstance(result, str) else r.detail)

    def _delete_and_wait(self, kind: Kind, resources: list[Resource]) -> None:
        assert kind.status is not None, f"asynchronous kind {kind.name} needs a status call"
        status_of = kind.status
        pending = [_Pending(r, kind, requested=r.status == "Deleting") for r in resources]
        plural = "adapter inference components" if kind.name == "inference-component" and any(r.data.get("base") for r in resources) else f"{kind.label}s"
        what = f"{plural} {', '.join(r.name for r in resources)} to be deleted"

        def probe() -> Poll:
            for it in list(pending):
                r = it.resource
                if not it.requested:
                    try:
                        kind.delete(self.aws, r)
                    except ClientError as exc:
                        if is_not_found(exc):
                            pending.remove(it)
                            self.record(r, ALREADY_GONE)
                        elif is_access_error(exc):
                            pending.remove(it)
                            self.record(r, FAILED, describe_error(exc))
                        else:
                            # Transient state, components still attached, throttling: try again next round.
                            it.note = f"delete refused, retrying: {describe_error(exc)}"
                        continue
                    it.requested = True
                try:
                    status = status_of(self.aws, r)
                except ClientError as exc:
                    if is_not_found(exc):
                        pending.remove(it)
                        self.record(r, DELETED)
                    elif is_throttling(exc):
                        it.note = "throttled, still polling"
                    else:
                        it.note = describe_error(exc)
                    continue
                if status == "Failed":
                    # A failed resource is deleted by asking again.
                    it.requested = False
                it.note = status
            if not pending:
                return Poll(True, "all deleted")
            return Poll(False, "; ".join(f"{it.resource.name}: {it.note}" for it in pending))

        try:
            wait_until(what, probe, deadline=self.deadline, interval=self.interval, on_progress=self.on_progress)
        except WaitTimeout as exc:
            for it in pending:
                self.record(it.resource, FAILED, f"timed out after {exc.timeout:.0f}s; last seen: {it.note}")
