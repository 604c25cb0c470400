#!/usr/bin/env python3
"""Write docs/config-reference.md from the config model's JSON Schema, so the reference cannot drift.

Usage: python scripts/gen_config_reference.py [--check]
  --check  exit 1 if the committed file differs from what would be generated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastscale.infra.config import json_schema  # noqa: E402

TARGET = ROOT / "docs" / "config-reference.md"


def _type(prop: dict[str, Any]) -> str:
    if "$ref" in prop:
        return f"[{prop['$ref'].split('/')[-1]}](#{prop['$ref'].split('/')[-1].lower()})"
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " or ".join(_type(p) for p in prop[key] if p.get("type") != "null")
    kind = prop.get("type", "any")
    if kind == "array":
        return f"list of {_type(prop.get('items', {}))}"
    if kind == "object" and "additionalProperties" in prop:
        return f"map of {_type(prop['additionalProperties'])}"
    return kind


def _default(prop: dict[str, Any], required: bool) -> str:
    if required:
        return "**required**"
    if "default" in prop:
        value = prop["default"]
        if isinstance(value, (dict, list)) and value:
            return "see section"
        if value is None:
            return "—"
        return f"`{str(value).lower() if isinstance(value, bool) else value}`"
    return "—"


def _section(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"## {name}", ""]
    if schema.get("description"):
        lines += [" ".join(schema["description"].split()), ""]
    if "properties" not in schema:
        return lines + [f"One of: {_type(schema)}", ""]
    lines += ["| key | type | default | description |", "|---|---|---|---|"]
    required = set(schema.get("required", []))
    for key, prop in schema["properties"].items():
        desc = " ".join(prop.get("description", "").split()).replace("|", "\\|")
        lines.append(f"| `{key}` | {_type(prop)} | {_default(prop, key in required)} | {desc} |")
    return lines + [""]


def render() -> str:
    schema = json_schema()
    out = [
        "# Configuration reference",
        "",
        "Generated from the config model by `scripts/gen_config_reference.py`; do not edit by hand.",
        "The same schema is in [`fastscale.schema.json`](fastscale.schema.json) (`fastscale schema`) for editors.",
        "Unknown keys are errors, so a typo never silently does nothing.",
        "",
    ]
    out += _section("FastscaleConfig (the file)", schema)
    for name in sorted(schema.get("$defs", {})):
        out += _section(name, schema["$defs"][name])
    return "\n".join(out).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the committed reference is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text:
            print(f"{TARGET.relative_to(ROOT)} is stale: run python scripts/gen_config_reference.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
