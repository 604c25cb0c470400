"""What Terraform's "Drift detected" means for a plan: which resources really changed outside Terraform, and which
the provider only reads back in another form than it saved.

Terraform reports a resource as drifted whenever its refreshed state differs from the saved one
(``resource_drift`` in the plan's JSON). hashicorp/aws reads back much of what it saved differently on every
refresh: an alarm's unset action lists as ``[]`` instead of ``null``, an IAM policy with other spacing or key
order. Such drift changes nothing and would otherwise be reported after every deploy, above "No changes", where
drift made by hand then goes unseen. So each drifted resource is compared value by value, empty values and
JSON formatting aside (:func:`fastscale.infra.base.value_diff.differences`):

- **changed**: a value really differs. Each one says what the plan does about it: sets it to the config's
  value, or leaves it as it is (the config does not set it, or tells Terraform to ignore it);
- **normalisation**: nothing differs but the form: provider normalisation, shown as one line.

Pure: reads the saved plan's JSON (``terraform show -json``), no Terraform, no AWS.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from fastscale.infra.base.value_diff import MISSING, ValueChange, differences, show, value_at

_NO_CHANGE = (("no-op",), ("read",), ())


@dataclass(frozen=True)
class DriftedValue:
    """One value changed outside Terraform, and what the plan does about it."""

    change: ValueChange
    #: The value the plan gives it (MISSING: the plan does not change the resource, or does not set the value).
    planned: Any = MISSING

    @property
    def set_back(self) -> bool:
        """The plan changes the value again (to the config's)."""
        return self.planned is not MISSING and differences(self.planned, self.change.after, empties_equal=True) != []

    def describe(self) -> str:
        what = f"the plan sets it to {show(self.planned)}" if self.set_back else "the plan leaves it as it is"
        return f"{self.change} ({what})"

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.change.path, "before": _plain(self.change.before), "after": _plain(self.change.after),
                "planned": _plain(self.planned), "set_back": self.set_back}


@dataclass(frozen=True)
class Drift:
    """One resource Terraform reported as drifted."""

    address: str
    values: tuple[DriftedValue, ...]
    #: The plan changes the resource (whatever the drift).
    planned: bool

    @property
    def normalisation(self) -> bool:
        """Only the form differs: the provider reads back what it saved in another form; nothing to act on."""
        return not self.values

    def to_dict(self) -> dict[str, Any]:
        return {"address": self.address, "normalisation": self.normalisation, "planned": self.planned,
                "changed": [v.to_dict() for v in self.values]}


def _plain(value: Any) -> Any:
    return None if value is MISSING else value


def read_drift(plan: Mapping[str, Any], reported: Iterable[str] | None = None) -> list[Drift]:
    """The plan's ``resource_drift`` entries (those whose address is in ``reported``, when given), sorted out."""
    wanted = set(reported) if reported is not None else None
    planned: dict[str, Mapping[str, Any]] = {}
    for rc in plan.get("resource_changes") or []:
        change = rc.get("change") or {}
        if tuple(change.get("actions") or ()) not in _NO_CHANGE:
            planned[str(rc.get("address", ""))] = change
    out = []
    for entry in plan.get("resource_drift") or []:
        address = str(entry.get("address", ""))
        if wanted is not None and address not in wanted:
            continue
        change = entry.get("change") or {}
        found = differences(change.get("before"), change.get("after"), empties_equal=True)
        plan_change = planned.get(address)
        after = plan_change.get("after") if plan_change is not None else None
        values = tuple(DriftedValue(c, value_at(after, c.keys) if isinstance(after, Mapping) else MISSING)
                       for c in found)
        out.append(Drift(address, values, plan_change is not None))
    return out


__all__ = ["Drift", "DriftedValue", "read_drift"]
