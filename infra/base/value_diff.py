"""What changed between two JSON-like values, attribute by attribute: the path of each difference and its two sides.

A string that holds a JSON object or array (a dashboard body, an IAM policy) is compared as the value it encodes,
so a change inside it is one short line at its own path (``dashboard_body<json>.widgets[2].properties.title``)
instead of two long escaped strings, and the same document written with other spacing or key order is no change.
With ``empties_equal``, ``null``, ``""``, ``[]``, ``{}`` and an absent member count as one and the same empty value
(how Terraform providers often read back what was never set).

Used by the Terraform drift report (:mod:`fastscale.infra.terraform.drift`) and by the stack snapshot diff of
``fastscale.stacks.testing``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class _Missing:
    def __repr__(self) -> str:
        return "<absent>"


#: The side of a difference where the member or item does not exist.
MISSING: Any = _Missing()
#: A step of a path into the JSON document a string encodes.
JSON_STEP = "<json>"
#: Longest value shown whole; longer ones are cut in the middle.
SHOWN_CHARS = 100


@dataclass(frozen=True)
class ValueChange:
    """One difference: where (``keys``, and the same as text in ``path``) and its two sides (:data:`MISSING`
    where the member does not exist on that side)."""

    keys: tuple[str | int, ...]
    before: Any
    after: Any

    @property
    def path(self) -> str:
        return path_text(self.keys)

    def __str__(self) -> str:
        return f"{self.path}: {show(self.before)} -> {show(self.after)}"


def path_text(keys: Sequence[str | int]) -> str:
    """``("production_variants", 0, "instance_type")`` -> ``production_variants[0].instance_type``."""
    out = ""
    for key in keys:
        if isinstance(key, int):
            out += f"[{key}]"
        elif key == JSON_STEP:
            out += JSON_STEP
        else:
            out += f".{key}" if out else key
    return out


def show(value: Any) -> str:
    """A side of a difference, as JSON, cut in the middle when long."""
    if value is MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) <= SHOWN_CHARS:
        return text
    half = SHOWN_CHARS // 2
    return f"{text[:half]}…{text[-half:]}"


def decoded(value: Any) -> Any:
    """The object or array a string encodes as JSON, else ``MISSING``."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            found = json.loads(value)
        except ValueError:
            return MISSING
        if isinstance(found, (dict, list)):
            return found
    return MISSING


def is_empty(value: Any) -> bool:
    """``null``, ``""``, ``[]``, ``{}``, absent, or a list or object of nothing but such values."""
    if value is MISSING or value is None or value == "":
        return True
    if isinstance(value, Mapping):
        return all(is_empty(v) for v in value.values())
    if isinstance(value, list):
        return all(is_empty(v) for v in value)
    return False


def differences(before: Any, after: Any, *, empties_equal: bool = False,
                keys: tuple[str | int, ...] = ()) -> list[ValueChange]:
    """Every difference between ``before`` and ``after``, deepest first found, in key order."""
    if empties_equal and is_empty(before) and is_empty(after):
        return []
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        out: list[ValueChange] = []
        for key in sorted(set(before) | set(after), key=str):
            out += differences(before.get(key, MISSING), after.get(key, MISSING), empties_equal=empties_equal,
                               keys=(*keys, key))
        return out
    if isinstance(before, list) and isinstance(after, list):
        out = []
        for i in range(max(len(before), len(after))):
            out += differences(before[i] if i < len(before) else MISSING, after[i] if i < len(after) else MISSING,
                               empties_equal=empties_equal, keys=(*keys, i))
        return out
    inner_before, inner_after = decoded(before), decoded(after)
    if inner_before is not MISSING and inner_after is not MISSING:
        return differences(inner_before, inner_after, empties_equal=empties_equal, keys=(*keys, JSON_STEP))
    if before == after and (type(before) is type(after) or (_number(before) and _number(after))):
        return []
    return [ValueChange(keys, before, after)]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def value_at(document: Any, keys: Sequence[str | int]) -> Any:
    """The value at ``keys`` in ``document`` (decoding JSON at a :data:`JSON_STEP`), or ``MISSING``."""
    value = document
    for key in keys:
        if key == JSON_STEP:
            value = decoded(value)
        elif isinstance(value, list):
            value = value[key] if isinstance(key, int) and 0 <= key < len(value) else MISSING
        elif isinstance(value, Mapping):
            value = value.get(key, MISSING)
        else:
            value = MISSING
        if value is MISSING:
            return MISSING
    return value
