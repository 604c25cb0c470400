"""What an inventory is made of: ownership verdicts, the resources found, the inventory of one stack, and
the declaration of a resource kind (:class:`Kind`). No AWS calls here."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from fastscale.infra.aws.clients import (
    AwsClients,
)
from fastscale.infra.model.naming import (
    MANAGED_BY_VALUE,
    TAG_MANAGED_BY,
    TAG_REGION,
    TAG_STACK,
)

if TYPE_CHECKING:
    from fastscale.infra.aws.inventory.scan import Scan  # Kind.discover's argument; scan imports this module

# --------------------------------------------------------------------------------------------- ownership

OURS = "ours"
OTHER_STACK = "other-stack"
NOT_OURS = "not-ours"
#: Tagged for this stack by a fastscale that did not write the region tag yet, on a global resource: it
#: may be the stack of the same name in another region. Never deleted; not a name clash for plan/deploy
#: (the next deploy of the owning stack adds the tag).
NO_REGION = "no-region"
#: A dashboard laid out as fastscale lays out this stack's, but written before the stack wrote its marker.
#: Never deleted (nothing proves stack and region); not a name clash (the next deploy adds the marker).
NO_MARKER = "no-marker"


@dataclass(frozen=True)
class Ownership:
    verdict: str  # ours | other-stack | not-ours | no-region
    reason: str
    #: The stack its `fastscale:stack` tag (or its owner's) names, when it has one.
    stack: str | None = None

    @property
    def ours(self) -> bool:
        return self.verdict == OURS


def tag_ownership(tags: Mapping[str, str] | None, stack: str, region: str, *, global_resource: bool = False) -> Ownership:
    """Who owns a resource, by its tags."""
    tags = tags or {}
    owner = tags.get(TAG_STACK)
    if owner is None:
        return Ownership(NOT_OURS, f"not created by this stack (no {TAG_STACK} tag), not touched")
    where = tags.get(TAG_REGION)
    if owner != stack or (where is not None and where != region):
        return Ownership(OTHER_STACK, f"belongs to stack {owner}" + (f" ({where})" if where and where != region else "") + ", not touched",
                         owner)
    if tags.get(TAG_MANAGED_BY) != MANAGED_BY_VALUE:
        return Ownership(
            NOT_OURS, f"tagged {TAG_STACK}={owner} but not {TAG_MANAGED_BY}={MANAGED_BY_VALUE}: not created by this stack, not touched",
            owner,
        )
    if where is None and global_resource:
        return Ownership(
            NO_REGION,
            f"tagged {TAG_STACK}={owner} without {TAG_REGION}: global, so it may belong to a stack of the same name in "
            "another region; not touched (the next deploy of its stack adds the tag)",
            owner,
        )
    return Ownership(OURS, f"tagged {TAG_STACK}={stack}", owner)


def through(owner: Resource, what: str) -> Ownership:
    """The ownership of a resource proven through the resource it belongs to."""
    if owner.ownership.ours:
        return Ownership(OURS, f"through {what} {owner.name} ({owner.ownership.reason})", owner.ownership.stack)
    return Ownership(owner.ownership.verdict, f"{what} {owner.name} {owner.ownership.reason}", owner.ownership.stack)


UNPROVEN = Ownership(NOT_OURS, "not created by this stack, not touched")


# --------------------------------------------------------------------------------------------- resources


@dataclass
class Resource:
    """One resource found in the account, with how it was found and who owns it."""

    kind: str
    name: str
    arn: str = ""
    status: str = ""
    detail: str = ""  # why it matters, for a leftover
    found_by: str = ""  # name | prefix | tag | owner | former-name (a name earlier releases used)
    ownership: Ownership = UNPROVEN
    data: dict[str, Any] = field(default_factory=dict)  # what deletion needs (ids, dimension, endpoint, base)

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.arn or self.name.lower())

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ownership"] = self.ownership.verdict
        out["reason"] = self.ownership.reason
        del out["data"]
        return out


@dataclass
class Inventory:
    stack: str
    region: str
    resources: list[Resource] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # what was looked for, for people reading the report
    owners_checked: list[str] = field(default_factory=list)  # the cache owners the config names
    #: The kinds the resources are of (infra.aws.inventory.kinds.KIND): which hold data, what to call them.
    kinds: Mapping[str, Kind] = field(default_factory=dict, repr=False, compare=False)

    def _is_data(self, r: Resource) -> bool:
        kind = self.kinds.get(r.kind)
        return kind is not None and kind.data

    def _label(self, r: Resource) -> str:
        kind = self.kinds.get(r.kind)
        return kind.label if kind else r.kind

    def of(self, kind: str) -> list[Resource]:
        return [r for r in self.resources if r.kind == kind]

    @property
    def leftovers(self) -> list[Resource]:
        """What this stack still owns (logs excepted: they are data, kept unless asked)."""
        return [r for r in self.resources if r.ownership.ours and not self._is_data(r)]

    @property
    def kept(self) -> list[Resource]:
        """Data of this stack (log groups) that stays unless deletion is asked for explicitly."""
        return [r for r in self.resources if r.ownership.ours and self._is_data(r)]

    @property
    def not_touched(self) -> list[Resource]:
        """Found by name, prefix or tag, but not this stack's: shown, never deleted, never a leftover."""
        return [r for r in self.resources if not r.ownership.ours]

    def name_clashes(self) -> list[Resource]:
        """Names the stack creates that exist and are not this stack's (case-insensitively for SageMaker).
        What the config adopts is not a clash: the stack imports it (and tags it) instead of creating it."""
        return [
            r
            for r in self.resources
            if r.found_by == "name" and not self._is_data(r) and r.ownership.verdict in (OTHER_STACK, NOT_OURS)
            and not r.data.get("adopted")
        ]

    def caches(self) -> str:
        """What can honestly be said about the container image and data caches, owner by owner.

        Caches have no API; each belongs to one endpoint and goes with it. So the statement is about the
        endpoints and components present under the names the stack uses (or tagged for it), whoever owns
        them: a present one, this stack's or not, may still hold caches; only when none is present are the
        caches gone."""
        present = [r for r in self.resources if r.kind in ("endpoint", "inference-component")]
        if not present:
            return (
                "Container image and model data caches are gone: their owners ("
                + ", ".join(self.owners_checked)
                + ") no longer exist, and AWS purges an endpoint's caches with the endpoint (there is no cache API)."
            )
        lines = []
        for r in present:
            if r.ownership.ours:
                lines.append(f"{self._label(r)} {r.name} still exists ({r.status or 'present'}): its caches may remain")
            else:
                lines.append(f"{self._label(r)} {r.name} still exists (not this stack's: {r.ownership.reason}): its caches may remain")
        text = "Container image and model data caches may still exist: " + "; ".join(lines) + "."
        names = {f"{self._label(r)} {r.name}".lower() for r in present}
        gone = [o for o in self.owners_checked if o.lower() not in names]
        if gone:
            text += " Gone, and their caches with them: " + ", ".join(gone) + "."
        return text + " AWS purges an endpoint's caches only when it finishes deleting the endpoint (there is no cache API)."




def clean_arn(value: str) -> str:
    """An ARN as the tagging API gives it (some emulators wrap it in a repr)."""
    if value.startswith("arn:"):
        return value
    match = re.search(r"arn:[^'\"\s,()]+", value)
    return match.group(0) if match else value


def arn_parts(arn: str) -> tuple[str, str, str]:
    """(service, resource type, resource name) of an ARN."""
    parts = arn.split(":", 5)
    if len(parts) != 6:
        return "", "", arn
    service, resource = parts[2], parts[5]
    cut = min((i for i in (resource.find("/"), resource.find(":")) if i >= 0), default=-1)
    if cut < 0:
        return service, "", resource
    return service, resource[:cut], resource[cut + 1 :]




def _none_blocked(r: Resource, inventory: Inventory, failed: set[tuple[str, str]]) -> str:
    return ""


@dataclass(frozen=True)
class Kind:
    """One kind of resource a stack owns, declared in one place."""

    name: str  # the kind in every report
    label: str  # in sentences
    terraform_types: tuple[str, ...]  # what the stacks synthesize for it (none: made by AWS itself)
    arn_types: tuple[tuple[str, str], ...]  # (service, ARN resource type) the tagging index lists it as
    found_by: str  # how candidates are found (for the docs and --help)
    owner: str  # how ownership is proven
    order: int  # deletion order: lower first
    asynchronous: bool  # AWS deletes it in the background: poll until gone
    discover: Callable[[Scan], None]
    delete: Callable[[AwsClients, Resource], Any]
    status: Callable[[AwsClients, Resource], str] | None = None  # asynchronous kinds: current status
    batches: Callable[[list[Resource]], list[list[Resource]]] = lambda rs: [rs] if rs else []
    blocked: Callable[[Resource, Inventory, set[tuple[str, str]]], str] = _none_blocked
    data: bool = False  # holds data (logs): reported, deleted only when asked explicitly


