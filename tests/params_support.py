"""Walking a sourced parameter file (estimate and simulation parameters): every leaf with a value, unit and source."""

from __future__ import annotations

from typing import Any


def parameter_leaves(raw: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(dotted path, leaf) for every mapping that carries `value`, `unit` and `source`."""
    leaves: list[tuple[str, dict[str, Any]]] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict) and {"value", "unit", "source"} <= set(node):
            leaves.append((path, node))
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{path}.{k}")

    walk(raw, "")
    return leaves
