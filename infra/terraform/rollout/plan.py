"""Reading Terraform's saved plan: ``terraform show -json PLANFILE`` as :class:`ResourceChange` entries, and
what changed in one of them (attributes, replace paths).

Only what Terraform wrote, with no judgement on it: :mod:`.classify` decides what each change means, and
:mod:`.strategy` reads the planned ``deployment_config`` through :func:`nested_block`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ResourceChange:
    """One entry of the plan's ``resource_changes``, as Terraform wrote it."""

    address: str
    type: str
    actions: tuple[str, ...]
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    after_unknown: Mapping[str, Any]
    replace_paths: tuple[tuple[str | int, ...], ...] = ()
    action_reason: str | None = None


class PlanFormatError(ValueError):
    """The document is not Terraform's JSON plan output."""


def parse_plan(plan: Mapping[str, Any]) -> list[ResourceChange]:
    """The managed resources' changes of a ``terraform show -json`` plan (data sources are reads, left out)."""
    if not isinstance(plan, Mapping) or "format_version" not in plan:
        raise PlanFormatError("not a Terraform JSON plan (no format_version): pass the output of `terraform show -json PLANFILE`")
    out = []
    for rc in plan.get("resource_changes") or []:
        if rc.get("mode", "managed") != "managed":
            continue
        change = rc.get("change") or {}
        unknown = change.get("after_unknown")
        out.append(
            ResourceChange(
                address=str(rc.get("address", "")),
                type=str(rc.get("type", "")),
                actions=tuple(str(a) for a in change.get("actions") or ()),
                before=change.get("before") if isinstance(change.get("before"), Mapping) else None,
                after=change.get("after") if isinstance(change.get("after"), Mapping) else None,
                after_unknown=unknown if isinstance(unknown, Mapping) else {},
                replace_paths=tuple(tuple(p) for p in change.get("replace_paths") or () if isinstance(p, list)),
                action_reason=rc.get("action_reason"),
            )
        )
    return out


def nested_block(value: Any) -> Mapping[str, Any] | None:
    """A nested block as an object: the aws provider writes a single block as a one-element list, awscc
    writes a nested attribute as an object."""
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, Mapping) else None


def _unknown(flags: Any) -> bool:
    """Whether an ``after_unknown`` entry marks the value, or anything inside it, as known only after apply."""
    if flags is True:
        return True
    if isinstance(flags, Mapping):
        return any(_unknown(v) for v in flags.values())
    if isinstance(flags, list):
        return any(_unknown(v) for v in flags)
    return False


def changed_attributes(change: ResourceChange) -> tuple[str, ...]:
    """Top-level attributes whose planned value differs from the current one, or is known only after apply."""
    before, after = change.before or {}, change.after or {}
    keys = sorted(set(before) | set(after) | set(change.after_unknown))
    return tuple(
        k for k in keys
        if _unknown(change.after_unknown.get(k)) or (k in after and before.get(k) != after.get(k))
    )


def tags_of(values: Mapping[str, Any] | None, unknown: Mapping[str, Any] | None = None, *,
            keys: Sequence[str] = ("tags", "tags_all")) -> dict[str, str] | None:
    """A resource's tags in a plan, from the first of ``keys`` that is set and known: hashicorp/aws writes a
    map (``tags``, and ``tags_all`` with the provider's default tags), awscc a list of ``{key, value}``. None
    when none is known (only after apply)."""
    for key in keys:
        if _unknown((unknown or {}).get(key)):
            continue
        value = (values or {}).get(key)
        if isinstance(value, Mapping):
            return {str(k): str(v) for k, v in value.items() if v is not None}
        if isinstance(value, list):
            return {str(t["key"]): str(t.get("value")) for t in value if isinstance(t, Mapping) and "key" in t}
    return None
