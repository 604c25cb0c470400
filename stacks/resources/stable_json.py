"""The JSON text the engine writes: `stable_json`, json-stable-stringify's layout (keys sorted, one item a line,
two spaces) and JavaScript's number and string forms, so `fastscale synth` writes the engine's bytes
(tests/stacks/test_engine_parity.py).
"""

from __future__ import annotations

import json
import re
from typing import Any


def _js_number(value: float) -> str:
    """A number as JavaScript's `JSON.stringify` writes it (shortest digits; exponent below 1e-6 and from 1e21)."""
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    match = re.fullmatch(r"-?(\d+)(?:\.(\d+))?(?:e([+-]\d+))?", repr(value))
    assert match is not None
    whole, frac, exp = match.group(1), match.group(2) or "", int(match.group(3) or 0)
    digits, point = whole + frac, len(whole) + exp
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _js_string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")  # JavaScript sorts keys by UTF-16 code units


def stable_json(value: Any, level: int = 0, *, collapse_empty: bool = False) -> str:
    """`value` as the engine writes its files, with two spaces: keys sorted, one item per line. An empty list
    or object is `[]` / `{}` with `collapse_empty` (CDK Terrain's safe-stable-stringify), else still on two
    lines (CDK for Terraform's json-stable-stringify)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    indent = "\n" + "  " * level
    item_indent = indent + "  "
    if isinstance(value, (list, tuple)):
        if collapse_empty and not value:
            return "[]"
        return "[" + ",".join(item_indent + stable_json(v, level + 1, collapse_empty=collapse_empty)
                              for v in value) + indent + "]"
    if isinstance(value, dict):
        if collapse_empty and not value:
            return "{}"
        items = (item_indent + _js_string(k) + ": " + stable_json(value[k], level + 1, collapse_empty=collapse_empty)
                 for k in sorted(value, key=_utf16_order))
        return "{" + ",".join(items) + indent + "}"
    raise TypeError(f"{type(value).__name__} is not a JSON value")
