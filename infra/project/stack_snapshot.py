"""A synthesized stack as a snapshot: only what the config decides, in the file format syrupy writes.

Synthesizing the same config gives the same bytes, except for what depends on the machine rather than the
config: the version stamp of the engine that synthesized it (``//.metadata.version``: CDK for Terraform and
CDK Terrain stamp their own, and it moves with every engine upgrade) and absolute paths. Those are replaced
by placeholders, so a snapshot fails only when the stack changes. Provider version constraints
(``terraform.required_providers``) are kept: they change what ``terraform init`` installs.
"""

from __future__ import annotations

import json
from typing import Any

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
