"""New prices for ``accelerators.json``: the document rewritten with the on-demand rates read from the AWS Price List
(``scripts/update_prices.py`` reads them, :mod:`fastscale.infra.aws.pricing`) and the date they were read.

Pure: it takes the catalog's text and the rates, and returns the new text in the committed layout (one line per
instance type, so a price change is a one-line diff), checked by the same validation the catalog loads with.

A type with a published rate gets it, and loses any estimate it had. A type the Price List has no rate for keeps
its figure: an estimate stays one; a rate published before becomes an estimate that says it was carried over
from the earlier list, so nothing reads as read on a date it was not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastscale.infra.base.catalog import check_accelerators

#: The source entry the refresh rewrites: where the published rates come from.
PRICING_SOURCE = "sagemaker-pricing"


@dataclass(frozen=True)
class PriceChange:
    instance_type: str
    old: float
    new: float | None  # None: no published rate now (the old figure is kept)
    was_estimate: bool

    def describe(self) -> str:
        if self.new is None:
            kept = "an estimate, kept" if self.was_estimate else "carried over as an estimate"
            return f"{self.instance_type}: no published rate; {self.old:g} {kept}"
        was = " (was an estimate)" if self.was_estimate else ""
        return f"{self.instance_type}: {self.old:g} -> {self.new:g}{was}"


def render(document: Mapping[str, Any]) -> str:
    """``accelerators.json`` as committed: the header indented, each instance type on one line."""
    head = {k: v for k, v in document.items() if k != "instances"}
    text = json.dumps(head, indent=2, ensure_ascii=False)
    lines = ",\n".join("    " + json.dumps(i, ensure_ascii=False) for i in document["instances"])
    return text[: -len("\n}")] + ',\n  "instances": [\n' + lines + "\n  ]\n}\n"


def refreshed(text: str, rates: Mapping[str, float | None], as_of: str, read_from: str) -> tuple[str, list[PriceChange]]:
    """The catalog ``text`` with the rates of ``rates`` (instance type -> USD per instance-hour, None where the
    Price List has none) and the date ``as_of``; and every price that changed or is now carried over.

    ``read_from`` says where the rates were read (it becomes the pricing source's ``used_for``). Raises
    ``CatalogError`` when the result would not load."""
    document: dict[str, Any] = json.loads(text)
    previous = document["as_of"]
    estimates: dict[str, str] = dict(document["price_estimates"])
    changes: list[PriceChange] = []
    for instance in document["instances"]:
        name = instance["instance_type"]
        if name not in rates:
            continue
        old, was_estimate, new = instance["price_per_hour_usd"], instance["price_is_estimate"], rates[name]
        if new is None:
            if not was_estimate:
                estimates[name] = (f"no published rate in the AWS Price List on {as_of}; the rate of the {previous} "
                                   "catalog, carried over")
                instance["price_is_estimate"] = True
                changes.append(PriceChange(name, old, None, was_estimate))
            continue
        instance["price_per_hour_usd"] = new
        instance["price_is_estimate"] = False
        estimates.pop(name, None)
        if new != old or was_estimate:
            changes.append(PriceChange(name, old, new, was_estimate))
    document["as_of"] = as_of
    document["price_estimates"] = dict(sorted(estimates.items()))
    for source in document["sources"]:
        if source.get("id") == PRICING_SOURCE:
            source["used_for"] = read_from
    out = render(document)
    check_accelerators(out)  # the invariants the catalog loads with (an estimate has its method, ...)
    return out, changes
