"""Prove after ``destroy`` that nothing fastscale created is left — and so no GPU bill and no cache.

Terraform forgets a resource as soon as its delete call returns, but SageMaker deletes endpoints and
inference components asynchronously, and a lost or partial state file leaves resources Terraform no
longer knows about. ``verify_cleanup`` therefore asks AWS directly, through the inventory
(:mod:`infra.aws.inventory`), which finds candidates by name, prefix and tag and counts as a leftover only
what it proves this stack's. What matches a name but belongs to someone else is listed as not touched,
and never makes the proof fail.

Container image caches and inference-component data caches have no API AWS documents. fastscale counts
each as part of the endpoint that made it (its choice): proving the owners (endpoints and their components)
gone is the proof it gives that the caches are gone.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from fastscale.infra.aws.clients import ClientsArg
from fastscale.infra.aws.inventory import Inventory, Resource, take_inventory
from fastscale.infra.model.resolved import ResolvedStack


@dataclass(frozen=True)
class Leftover:
    kind: str  # a kind of infra.aws.inventory.KINDS, or tagged-resource
    name: str
    detail: str = ""
    arn: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.name}" + (f": {self.detail}" if self.detail else "")

    @classmethod
    def of(cls, r: Resource, detail: str | None = None) -> Leftover:
        return cls(r.kind, r.name, r.detail if detail is None else detail, r.arn)


@dataclass
class CleanupReport:
    leftovers: list[Leftover] = field(default_factory=list)  # this stack's, still there: the proof fails
    not_touched: list[Leftover] = field(default_factory=list)  # found by name/prefix/tag, not this stack's
    kept: list[Leftover] = field(default_factory=list)  # this stack's logs: data, deleted only on request
    checked: list[str] = field(default_factory=list)  # what was looked for, for people reading the report
    caches: str = ""  # the statement about image / data caches

    @property
    def ok(self) -> bool:
        return not self.leftovers

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "leftovers": [asdict(x) for x in self.leftovers],
            "not_touched": [asdict(x) for x in self.not_touched],
            "kept": [asdict(x) for x in self.kept],
            "checked": list(self.checked),
            "caches": self.caches,
        }

    @classmethod
    def of(cls, inventory: Inventory) -> CleanupReport:
        return cls(
            leftovers=[Leftover.of(r) for r in inventory.leftovers],
            not_touched=[Leftover.of(r, r.ownership.reason) for r in inventory.not_touched],
            kept=[Leftover.of(r, f"{r.detail}: logs are data, kept; `sweep --delete-logs` deletes them") for r in inventory.kept],
            checked=list(inventory.checked),
            caches=inventory.caches(),
        )


def verify_cleanup(stack: ResolvedStack, clients: ClientsArg = None) -> CleanupReport:
    """List everything of ``stack`` still present in AWS; ``report.ok`` is True only when nothing is."""
    return CleanupReport.of(take_inventory(stack, clients))
