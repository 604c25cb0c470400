"""The stack's whole Terraform JSON document, built from its `StackContent` without the engine.

`render_document` puts together what the engine would: `terraform` (required providers, backend), the
providers' settings, the content's rendered elements, the engine's `//` metadata, and the stack-level
overrides merged last (`deep_merge`, the engine's merge). `stacks.resources.stable_json` writes it as text.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from fastscale.stacks.resources.elements import StackContent


def _set_keys(target: dict[str, Any], keys: Sequence[str], value: Any) -> None:
    """What the engine's `add_override("a.b.c", value)` does to its overrides: a deep set along the keys,
    making objects where there are none."""
    for key in keys[:-1]:
        inner = target.get(key)
        if not isinstance(inner, dict):
            inner = target[key] = {}
        target = inner
    target[keys[-1]] = value


def deep_merge(target: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """`source` merged into `target` the way the engine merges a stack's fragments and overrides: objects
    recursively, anything else (lists included) replaced."""
    for key, value in source.items():
        if isinstance(value, dict):
            inner = target.get(key)
            if not isinstance(inner, dict):
                inner = target[key] = {}
            deep_merge(inner, value)
        else:
            target[key] = value
    return target


def render_document(content: StackContent, engine_version: str) -> dict[str, Any]:
    """The stack's whole Terraform JSON, as the engine (at `engine_version`) builds it from a
    `ResourceStack` of `content` with nothing else in it."""
    metadata: dict[str, Any] = {"version": engine_version, "stackName": content.name, "backend": "local"}
    overrides: dict[str, Any] = {}
    for path, value in content.stack_overrides:
        _set_keys(overrides, path.split("."), value)
    if overrides:
        metadata["overrides"] = {"stack": list(overrides)}
    doc: dict[str, Any] = {}
    terraform: dict[str, Any] = {}
    for provider in content.providers:
        terraform.setdefault("required_providers", {})[provider.name] = {"source": provider.source,
                                                                        "version": provider.version}
        doc.setdefault("provider", {})[provider.name] = [provider.settings]
    # Without a backend the engine adds a local one, its state file in the working directory.
    kind, settings = content.backend or ("local", {"path": os.path.join(os.getcwd(), f"terraform.{content.name}.tfstate")})
    metadata["backend"] = kind
    terraform["backend"] = {kind: {k: v for k, v in settings.items() if v is not None}}
    doc["terraform"] = terraform
    deep_merge(doc, content.rendered_elements())
    doc["//"]["metadata"] = {**doc["//"].get("metadata", {}), **metadata}
    return deep_merge(doc, overrides)
