"""A candidate's settings put into a config: into its data to be simulated, into its text to be written.

Settings are config paths (``endpoints[0].instances.min``) and values. :func:`candidate_config` applies them to
the file's data and loads the result as any config is loaded, which is what
:mod:`~fastscale.infra.analysis.recommend.evaluation` simulates; :func:`apply_to_text` applies the chosen one to
the file itself, keeping its comments where it can, so what the search found is what the written file does.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from fastscale.infra.config import FastscaleConfig, parse_config, parse_path, safe_yaml
from fastscale.infra.config.yaml_edit import edit


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set ``path`` (``endpoints[0].instances.min``) in YAML data, creating mappings that are missing."""
    parts = parse_path(path)
    node: Any = data
    for part, following in zip(parts, parts[1:], strict=False):
        if isinstance(part, int):
            node = node[part]
            continue
        if node.get(part) is None:
            node[part] = [] if isinstance(following, int) else {}
        node = node[part]
    node[parts[-1]] = value


def candidate_config(data: dict[str, Any], settings: dict[str, Any]) -> FastscaleConfig:
    changed = copy.deepcopy(data)
    for path, value in settings.items():
        set_path(changed, path, value)
    return parse_config(changed, "<candidate>")


def get_path(data: Any, path: str) -> Any:
    node = data
    for part in parse_path(path):
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                return None
            node = node[part]
        else:
            if not isinstance(node, dict):
                return None
            node = node.get(part)
    return node


@dataclass(frozen=True)
class Written:
    text: str
    comments_kept: bool  # False: the data was written anew, the file's comments and layout are gone


def apply_to_text(text: str, settings: dict[str, Any], source: str) -> Written:
    """The config text with the settings applied: edited in place (comments kept) when every path can be, and
    read back to the same values; otherwise the file's data with the settings, written anew."""
    import yaml

    edited = edit(text, settings)
    if edited is not None:
        try:
            data = safe_yaml.load(edited).data
        except safe_yaml.UnsafeYamlError:
            data = None
        if data is not None and all(get_path(data, p) == v for p, v in settings.items()):
            return Written(edited, True)
    data = copy.deepcopy(safe_yaml.load(text).data)
    for path, value in settings.items():
        set_path(data, path, value)
    header = f"# Written by fastscale recommend from {source}; its comments could not be kept.\n"
    return Written(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), False)
