"""What Terraform's "Drift detected" means for a plan: which drift matters to it, and which is the provider reading
back what it saved in another form.

Terraform reports a resource as drifted whenever its refreshed state differs from the saved one
(``resource_drift`` in the plan's JSON). hashicorp/aws reads back much of what it saved differently on every
refresh: an alarm's unset action lists as ``[]`` instead of ``null``; an IAM role's ``inline_policy`` lists the
policy a separate ``aws_iam_role_policy`` of the same stack attached. Reported as is, such drift follows every
deploy, above "No changes", and drift made by hand goes unseen in it. So each drifted resource is compared value
by value, empty values and JSON formatting aside (:func:`fastscale.infra.base.value_diff.differences`), and a
drifted value **matters** when it feeds the plan: the plan changes it (back to the config's value), or Terraform
lists it among the plan's ``relevant_attributes`` (a value other changes depend on). The rest is provider
normalisation, or a value the config does not set and the plan leaves as it is: nothing to act on.

Pure: reads the saved plan's JSON (``terraform show -json``), no Terraform, no AWS.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fastscale.infra.base.value_diff import JSON_STEP, MISSING, ValueChange, differences, show, value_at

_NO_CHANGE = (("no-op",), ("read",), ())


@dataclass(frozen=True)
class DriftedValue:
    """One value that differs from the saved state, and what the plan does about it."""

    change: ValueChange
    #: The value the plan gives it (MISSING: the plan does not change the resource, or does not set the value).
    planned: Any = MISSING
    #: Terraform lists it among the plan's relevant attributes (other planned changes depend on it).
    relevant: bool = False

    @property
    def set_back(self) -> bool:
        """The plan changes the value again (to the config's)."""
        return self.planned is not MISSING and differences(self.planned, self.change.after, empties_equal=True) != []

    @property
    def matters(self) -> bool:
        return self.set_back or self.relevant

    def describe(self) -> str:
        if self.set_back:
            what = f"the plan sets it to {show(self.planned)}"
        elif self.relevant:
            what = "planned changes depend on it"
        else:
            what = "the plan leaves it as it is"
        return f"{self.change} ({what})"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.change.path, "before": _plain(self.change.before), "after": _plain(self.change.after),
                "planned": _plain(self.planned), "set_back": self.set_back, "relevant": self.relevant}


@dataclass(frozen=True)
class Drift:
    """One resource Terraform reported as drifted."""

    address: str
    values: tuple[DriftedValue, ...]
    #: The plan changes the resource (whatever the drift).
    planned: bool

    @property
    def matters(self) -> bool:
        """A drifted value feeds the plan (see the module docstring)."""
        return any(v.matters for v in self.values)

    @property
    def normalisation(self) -> bool:
        """Only the form differs: the provider reads back what it saved in another form."""
        return not self.values

    def to_dict(self) -> dict[str, Any]:
        return {"address": self.address, "matters": self.matters, "normalisation": self.normalisation,
                "planned": self.planned, "changed": [v.to_dict() for v in self.values]}


def _plain(value: Any) -> Any:
    return None if value is MISSING else value


def _overlaps(keys: tuple[str | int, ...], paths: list[tuple[Any, ...]]) -> bool:
    """One of Terraform's relevant attribute paths is ``keys`` or contains it, or lies inside it."""
    plain = tuple(k for k in keys if k != JSON_STEP)
    return any(p[:len(plain)] == plain[:len(p)] for p in paths)


def read_drift(plan: Mapping[str, Any], reported: Iterable[str] | None = None) -> list[Drift]:
    """The plan's ``resource_drift`` entries (those whose address is in ``reported``, when given), sorted out."""
    wanted = set(reported) if reported is not None else None
    planned: dict[str, Mapping[str, Any]] = {}
    for rc in plan.get("resource_changes") or []:
        change = rc.get("change") or {}
        if tuple(change.get("actions") or ()) not in _NO_CHANGE:
            planned[str(rc.get("address", ""))] = change
    relevant: dict[str, list[tuple[Any, ...]]] = {}
    for item in plan.get("relevant_attributes") or []:
        relevant.setdefault(str(item.get("resource", "")), []).append(tuple(item.get("attribute") or ()))
    out = []
    for entry in plan.get("resource_drift") or []:
        address = str(entry.get("address", ""))
        if wanted is not None and address not in wanted:
            continue
        change = entry.get("change") or {}
        found = differences(change.get("before"), change.get("after"), empties_equal=True)
        plan_change = planned.get(address)
        after = plan_change.get("after") if plan_change is not None else None
        values = tuple(DriftedValue(c, value_at(after, c.keys) if isinstance(after, Mapping) else MISSING,
                                    _overlaps(c.keys, relevant.get(address, [])))
                       for c in found)
        out.append(Drift(address, values, plan_change is not None))
    return out


__all__ = ["Drift", "DriftedValue", "read_drift"]
