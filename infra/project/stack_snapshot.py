"""A synthesized stack as a snapshot: only what the config decides, in the file format syrupy writes.

Synthesizing the same config gives the same bytes, except for what depends on the machine rather than the
config: the version stamp of the engine that synthesized it (``//.metadata.version``: CDK for Terraform and
CDK Terrain stamp their own, and it moves with every engine upgrade) and absolute paths. Those are replaced
by placeholders, so a snapshot fails only when the stack changes. Provider version constraints
(``terraform.required_providers``) are kept: they change what ``terraform init`` installs.

When a snapshot and the stack differ, :func:`stack_changes` says where, one line per changed attribute by
resource address and path (a JSON document held in a string, such as a dashboard body, compared as the value it
encodes), which ``fastscale.stacks.testing``'s snapshot extension shows instead of a line diff of the whole file.
"""

from __future__ import annotations

import json
from typing import Any

from fastscale.infra.base.value_diff import MISSING, differences, path_text, show

#: Stands in for the engine's version stamp.
ENGINE_VERSION = "<engine version>"

#: Where a project's `fastscale init` snapshot test keeps its snapshot (syrupy's JSONSnapshotExtension
#: layout: __snapshots__/<test module>/<test name>.json).
PROJECT_SNAPSHOT = "tests/__snapshots__/test_stack/test_stack_matches_snapshot.json"


def _replace(value: Any, paths: dict[str, str]) -> Any:
    if isinstance(value, str):
        for path, placeholder in paths.items():
            value = value.replace(path, placeholder)
        return value
    if isinstance(value, list):
        return [_replace(v, paths) for v in value]
    if isinstance(value, dict):
        return {_replace(k, paths): _replace(v, paths) for k, v in value.items()}
    return value


def normalize(document: dict[str, Any], paths: dict[str, str] | None = None) -> dict[str, Any]:
    """``document`` with the engine's version stamp replaced by ``<engine version>`` and every occurrence
    of each absolute path in ``paths`` (path -> placeholder) replaced, longest path first. Returns a new
    dict; the input is not changed."""
    ordered = dict(sorted((paths or {}).items(), key=lambda item: -len(item[0])))
    out: dict[str, Any] = _replace(document, ordered)
    metadata = out.get("//", {}).get("metadata")
    if isinstance(metadata, dict) and "version" in metadata:
        metadata["version"] = ENGINE_VERSION
    return out


def snapshot_json(document: dict[str, Any], paths: dict[str, str] | None = None) -> str:
    """The normalized document as syrupy's JSONSnapshotExtension writes it: keys sorted at every level,
    two-space indent, non-ASCII kept, one final newline (tests/test_stack_snapshot.py checks it against
    syrupy itself)."""
    return json.dumps(normalize(document, paths), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


#: Sections of a Terraform JSON document whose entries are named blocks by type (``resource.<type>.<name>``).
_BY_TYPE = ("resource", "data")


def stack_changes(snapshot: dict[str, Any], stack: dict[str, Any]) -> list[str]:
    """What differs from ``snapshot`` in ``stack`` (both documents as :func:`normalize` leaves them), one line each:
    ``<type>.<name> <path>: <snapshot's value> -> <stack's value>`` for a resource or data source attribute,
    ``+ <address>`` / ``- <address>`` for one that is new / gone, ``<section>.<path>: ...`` for the rest."""
    lines: list[str] = []
    for section in sorted(set(snapshot) | set(stack)):
        before, after = snapshot.get(section, MISSING), stack.get(section, MISSING)
        if section in _BY_TYPE and isinstance(before, dict) and isinstance(after, dict):
            lines += _block_changes(section, before, after)
        else:
            lines += [str(c) for c in differences(before, after, keys=(section,))]
    return lines


def _block_changes(section: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    prefix = "data." if section == "data" else ""
    lines: list[str] = []
    for kind in sorted(set(before) | set(after)):
        old, new = before.get(kind) or {}, after.get(kind) or {}
        for name in sorted(set(old) | set(new)):
            address = f"{prefix}{kind}.{name}"
            if name not in old:
                lines.append(f"+ {address} (not in the snapshot)")
            elif name not in new:
                lines.append(f"- {address} (in the snapshot, no longer in the stack)")
            else:
                lines += [f"{address} {path_text(c.keys) or '(whole)'}: {show(c.before)} -> {show(c.after)}"
                          for c in differences(old[name], new[name])]
    return lines
