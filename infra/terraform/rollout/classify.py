"""Every change of a plan classified by its effect on traffic (:class:`ChangeKind`): created, deleted, updated
in place, rolled out (rolling or blue/green, with its strategy and expected duration), replaced, or replaced
with downtime; and the whole plan's classification, which ``plan`` shows and ``deploy`` refuses on downtime.

Built on its siblings: :mod:`.plan` reads the changes, :mod:`.strategy` and :mod:`.duration` describe a
rollout, :mod:`.serving` says what a replacement means.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from fastscale.infra.base.aws_facts import RESERVED_TAG_PREFIX
from fastscale.infra.base.value_diff import path_text
from fastscale.infra.model.naming import OWNERSHIP_TAGS, TAG_STACK
from fastscale.infra.terraform.rollout.duration import RolloutDuration, RolloutInputs, rollout_duration
from fastscale.infra.terraform.rollout.kinds import (
    ENDPOINT_TYPE,
    NAME_ATTRIBUTE,
    ROLLOUT_ATTRIBUTES,
    SCALING_TARGET_TYPE,
    SERVING_TYPES,
    ChangeKind,
)
from fastscale.infra.terraform.rollout.plan import ResourceChange, changed_attributes, parse_plan, tags_of
from fastscale.infra.terraform.rollout.serving import (
    avoid_hint,
    cutover_counts,
    cutover_note,
    replacement_reason,
    role_rename_notice,
    same_name_replacement,
    variant_endpoint,
)
from fastscale.infra.terraform.rollout.strategy import Strategy, read_strategy


@dataclass(frozen=True)
class TagChange:
    """One tag of a live resource that a change adds, removes or sets to another value (``None``: absent)."""

    tag: str
    before: str | None
    after: str | None

    def describe(self) -> str:
        return f"{self.tag} {self.before or '(none)'} -> {self.after or '(none)'}"

    def to_dict(self) -> dict[str, str | None]:
        return {"tag": self.tag, "from": self.before, "to": self.after}


#: A change of an ownership tag (``naming.OWNERSHIP_TAGS``): teardown proves whose a resource is by these tags,
#: so this is a change of owner.
OwnershipChange = TagChange


def tag_changes(change: ResourceChange) -> tuple[TagChange, ...]:
    """Every tag a change of a resource that exists (an update, an import, a replacement) adds, removes or sets
    to another value, by key. Tags known only after apply are left out: nothing can be said of them before.
    AWS's reserved ``aws:`` keys are left out too: no one can add or remove them, so no plan changes them."""
    if change.before is None or change.after is None:
        return ()
    before = tags_of(change.before, keys=("tags_all", "tags")) or {}
    after = tags_of(change.after, change.after_unknown)
    if after is None:
        return ()
    keys = sorted(k for k in {*before, *after} if not k.lower().startswith(RESERVED_TAG_PREFIX))
    return tuple(TagChange(k, before.get(k), after.get(k)) for k in keys if before.get(k) != after.get(k))


def ownership_changes(change: ResourceChange) -> tuple[OwnershipChange, ...]:
    """The ownership tags a change of a resource that exists sets to other values (a change of owner), in the
    order of ``naming.OWNERSHIP_TAGS``."""
    return _ownership(tag_changes(change))


def _ownership(changed: tuple[TagChange, ...]) -> tuple[OwnershipChange, ...]:
    found = {t.tag: t for t in changed}
    return tuple(found[k] for k in OWNERSHIP_TAGS if k in found)


@dataclass(frozen=True)
class ClassifiedChange:
    address: str
    type: str
    actions: tuple[str, ...]
    kind: ChangeKind
    reason: str
    name: str | None = None  # the SageMaker name, for endpoints and components
    changed: tuple[str, ...] = ()
    replace_paths: tuple[str, ...] = ()
    strategy: Strategy | None = None
    duration: RolloutDuration | None = None
    duration_note: str = ""
    avoid: str = ""  # downtime: how to make the change without it
    notice: str = ""  # what else the change sets off, for people (a renamed execution role)
    #: what else goes with this change (the cut-over count, auto scaling paused around it)
    notes: tuple[str, ...] = ()
    #: the name a create-before-destroy replacement would create while the old resource still holds it
    collides_as: str | None = None
    #: ownership tags the change sets to other values on a resource that exists (a change of owner)
    ownership: tuple[OwnershipChange, ...] = ()
    #: every tag the change adds, removes or sets to another value on a resource that exists (ownership included)
    tags: tuple[TagChange, ...] = ()

    @property
    def is_rollout(self) -> bool:
        return self.kind in (ChangeKind.ROLLING, ChangeKind.BLUE_GREEN)

    def to_dict(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "type": self.type,
            "actions": list(self.actions),
            "class": self.kind.value,
            "label": self.kind.label,
            "name": self.name,
            "reason": self.reason,
            "changed": list(self.changed),
            "replace_paths": list(self.replace_paths),
            "strategy": self.strategy.to_dict() if self.strategy else None,
            "expected_duration": self.duration.to_dict() if self.duration else None,
            "duration_note": self.duration_note or None,
            "avoid": self.avoid or None,
            "notice": self.notice or None,
            "notes": list(self.notes),
            "name_collision": self.collides_as,
            "ownership": [o.to_dict() for o in self.ownership],
            "tags": [t.to_dict() for t in self.tags],
        }


@dataclass(frozen=True)
class PlanClassification:
    changes: tuple[ClassifiedChange, ...] = field(default_factory=tuple)

    @property
    def downtime(self) -> list[ClassifiedChange]:
        return [c for c in self.changes if c.kind is ChangeKind.DOWNTIME]

    @property
    def name_collisions(self) -> list[ClassifiedChange]:
        """Replacements AWS refuses: the new resource is created under the name the old one still holds."""
        return [c for c in self.changes if c.collides_as]

    @property
    def rollouts(self) -> list[ClassifiedChange]:
        return [c for c in self.changes if c.is_rollout]

    @property
    def ownership_changes(self) -> list[tuple[ClassifiedChange, OwnershipChange]]:
        """Every ownership tag the plan changes on a resource that exists, with its change."""
        return [(c, o) for c in self.changes for o in c.ownership]

    @property
    def tag_changes(self) -> list[ClassifiedChange]:
        """The changes that add, remove or change a tag of a resource that exists, in plan order."""
        return [c for c in self.changes if c.tags]

    def taken_from(self, stack: str) -> list[tuple[ClassifiedChange, OwnershipChange]]:
        """The changes that re-tag a resource another stack's `fastscale:stack` names for ``stack``."""
        return [(c, o) for c, o in self.ownership_changes
                if o.tag == TAG_STACK and o.before is not None and o.before != stack]

    def counts(self) -> dict[str, int]:
        return {k.value: sum(1 for c in self.changes if c.kind is k) for k in ChangeKind}

    def longest_rollout_seconds(self) -> float | None:
        """Terraform applies independent resources side by side, so the rollouts overlap: the longest one
        is the best single figure for the whole apply (their sum is an upper bound)."""
        found = [c.duration.seconds for c in self.rollouts if c.duration is not None]
        return max(found) if found else None

    def summary(self) -> dict[str, Any]:
        longest = self.longest_rollout_seconds()
        return {
            "counts": self.counts(),
            "downtime": [c.address for c in self.downtime],
            "rollouts": [c.address for c in self.rollouts],
            "ownership": [{"address": c.address, **o.to_dict()} for c, o in self.ownership_changes],
            "tags": [{"address": c.address, **t.to_dict()} for c in self.changes for t in c.tags],
            "longest_rollout_seconds": round(longest, 1) if longest is not None else None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), "resources": [c.to_dict() for c in self.changes]}


def _classified(change: ResourceChange, kind: ChangeKind, reason: str, **extra: Any) -> ClassifiedChange:
    return ClassifiedChange(change.address, change.type, change.actions, kind, reason, **extra)


def classify_change(change: ResourceChange, inputs: Mapping[str, RolloutInputs] | None = None) -> ClassifiedChange | None:
    """One resource's change, or None when the plan leaves it as it is (no-op, read)."""
    classified = _classify(change, inputs)
    changed_tags = tag_changes(change)
    if classified is None or not changed_tags:
        return classified
    return replace(classified, tags=changed_tags, ownership=_ownership(changed_tags))


def _classify(change: ResourceChange, inputs: Mapping[str, RolloutInputs] | None) -> ClassifiedChange | None:
    actions = change.actions
    serving = change.type in SERVING_TYPES
    values = change.after or change.before or {}
    name = str(values.get(NAME_ATTRIBUTE[change.type])) if serving and values.get(NAME_ATTRIBUTE[change.type]) else None
    if actions in (("no-op",), ("read",), ()):
        return None
    if actions == ("create",):
        return _classified(change, ChangeKind.CREATE, "new", name=name)
    if actions == ("delete",):
        return _classified(change, ChangeKind.DELETE, "no longer in the config", name=name)
    if actions == ("forget",):
        return _classified(change, ChangeKind.FORGET, "removed from Terraform's state, kept in AWS", name=name)
    if set(actions) == {"create", "delete"}:
        paths = tuple(path_text(p) for p in change.replace_paths)
        reason = replacement_reason(change, paths)
        if serving:
            order = "deleted, then created" if actions[0] == "delete" else "created beside the old one, then the old one deleted"
            return _classified(change, ChangeKind.DOWNTIME,
                               f"{reason}: {order}",
                               name=name, replace_paths=paths, changed=changed_attributes(change),
                               avoid=avoid_hint(change.type, paths, change.action_reason))
        return _classified(change, ChangeKind.REPLACE, f"{reason}; serves no traffic itself",
                           replace_paths=paths, changed=changed_attributes(change), notice=role_rename_notice(change),
                           collides_as=same_name_replacement(change))
    changed = changed_attributes(change)
    rolls = [a for a in ROLLOUT_ATTRIBUTES.get(change.type, ()) if a in changed]
    if not rolls:
        return _classified(change, ChangeKind.IN_PLACE, f"{', '.join(changed) or 'nothing visible'} updated in place",
                           name=name, changed=changed)
    strategy = read_strategy(change.type, change.after)
    duration, note = None, ""
    found = (inputs or {}).get(name or "")
    if found is None:
        note = "no estimate: not in the config"
    elif found.startup_seconds is None:
        note = found.note or "no estimate"
    else:
        duration = rollout_duration(strategy, found.units, found.startup_seconds)
    what = "a new endpoint configuration" if change.type == ENDPOINT_TYPE else "a new specification"
    return _classified(change, strategy.kind, f"{what} ({', '.join(rolls)}): {strategy.describe()}",
                       name=name, changed=changed, strategy=strategy, duration=duration, duration_note=note)


def classify_plan(plan: Mapping[str, Any] | Iterable[ResourceChange],
                  inputs: Mapping[str, RolloutInputs] | None = None) -> PlanClassification:
    """Every change of a plan (``terraform show -json`` output, or changes already parsed), classified."""
    changes = parse_plan(plan) if isinstance(plan, Mapping) else list(plan)
    found = [c for c in (classify_change(c, inputs) for c in changes) if c is not None]
    counts = cutover_counts(changes)
    reregistered = {variant_endpoint(c) for c in changes
                    if c.type == SCALING_TARGET_TYPE and c.action_reason == "replace_by_triggers"}
    out = []
    for c in found:
        if c.type == ENDPOINT_TYPE and c.is_rollout and c.name:
            notes = list(c.notes)
            given = (inputs or {}).get(c.name)
            prefix = given.config_prefix if given is not None and given.config_prefix else f"{c.name}-"
            if prefix in counts:
                notes.append(cutover_note(counts[prefix], given))
            if c.name in reregistered:
                notes.append("auto scaling paused: the variant's scalable target and policy are deregistered before "
                             "the update and registered again after it (AWS fails an instance-type change otherwise)")
            c = replace(c, notes=tuple(notes))
        out.append(c)
    return PlanClassification(tuple(out))
