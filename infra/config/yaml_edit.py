"""Change values at config paths in a YAML text, keeping everything else (comments, order, quoting, layout).

PyYAML's composer gives every node of the document its position in the text; a scalar value is replaced where
it stands, a key that is missing is added to its mapping (a new line with the mapping's indentation in block
style, ``, key: value`` before the closing brace in flow style), and mappings that are missing are added as one
flow mapping (``autoscaling: {metric: invocations}``). Where that is not possible (the value is a list or
mapping, or is shared through a YAML alias) :func:`edit` returns None and the caller writes the data instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from fastscale.infra.config import parse_path

_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9._/-]*")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "~"}


def render(value: Any) -> str:
    """A scalar as YAML text that reads back as the same value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {render(v)}" for k, v in value.items()) + "}"
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _shared(root: yaml.Node) -> set[int]:
    """Nodes reached more than once (YAML aliases): editing their text would change every place that uses them."""
    seen: set[int] = set()
    shared: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            shared.add(id(node))
            continue
        seen.add(id(node))
        stack.extend(_children(node))
    return shared


def _last_scalar_end(node: yaml.Node) -> int:
    """Where the last scalar of a node ends (a block collection's own end mark runs on to the next key)."""
    while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style and _children(node):
        node = _children(node)[-1]
    return int(node.end_mark.index)


def edit(text: str, settings: dict[str, Any]) -> str | None:
    """``text`` with every ``path -> value`` of ``settings`` applied, or None when one cannot be applied in place."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    shared = _shared(root)
    replacements: list[tuple[int, int, str]] = []
    additions: dict[int, dict[str, Any]] = {}  # id(mapping) -> nested values to add
    mappings: dict[int, yaml.MappingNode] = {}
    for path, value in settings.items():
        node: yaml.Node = root
        parts = parse_path(path)
        for depth, part in enumerate(parts):
            if id(node) in shared:
                return None
            if isinstance(part, int):
                if not isinstance(node, yaml.SequenceNode) or part >= len(node.value):
                    return None
                node = node.value[part]
                continue
            if not isinstance(node, yaml.MappingNode):
                return None
            found = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == part), None)
            if found is None or (isinstance(found, yaml.ScalarNode) and found.tag.endswith(":null") and depth < len(parts) - 1):
                if found is not None or any(isinstance(p, int) for p in parts[depth:]):
                    return None
                nested = additions.setdefault(id(node), {})
                mappings[id(node)] = node
                for key in parts[depth:-1]:
                    nested = nested.setdefault(str(key), {})
                nested[str(parts[-1])] = value
                break
            node = found
        else:
            if not isinstance(node, yaml.ScalarNode) or id(node) in shared:
                return None
            replacements.append((node.start_mark.index, node.end_mark.index, render(value)))
    for key, values in additions.items():
        mapping = mappings[key]
        if mapping.flow_style or not mapping.value:
            if not mapping.flow_style:
                return None  # an empty block mapping has no line to add to
            at = int(mapping.end_mark.index) - 1
            lead = ", " if mapping.value else ""
            replacements.append((at, at, lead + ", ".join(f"{k}: {render(v)}" for k, v in values.items())))
            continue
        indent = mapping.value[0][0].start_mark.column
        end = _last_scalar_end(mapping.value[-1][1])
        line_end = text.find("\n", end)
        lines = "".join(f"\n{' ' * indent}{k}: {render(v)}" for k, v in values.items())
        if line_end == -1:
            replacements.append((len(text), len(text), lines))
        else:
            replacements.append((line_end, line_end, lines))
    out = text
    for start, end, new in sorted(replacements, key=lambda r: (r[0], r[1]), reverse=True):
        out = out[:start] + new + out[end:]
    return out
