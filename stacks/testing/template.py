"""`Template`: a synthesized stack (its cdk.tf.json as a dict) with lookups and assertions."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from fastscale.infra.config import FastscaleConfig, load_config, parse_config
from fastscale.infra.model.resolved import resolve
from fastscale.infra.project.stack_snapshot import normalize
from fastscale.infra.rules import Severity, run_rules, with_lines
from fastscale.stacks.testing.match import Mismatch, as_matcher, pattern_view

#: How much of the closest resource a failure message shows.
_SHOWN_LINES = 60


class ConfigInvalid(ValueError):
    """The config has validation errors (the same as `fastscale validate` reports): nothing was synthesized."""


def _load(config: Any) -> Any:
    """A validated FastscaleConfig from a path, a dict or a FastscaleConfig."""
    text = None
    if isinstance(config, FastscaleConfig):
        loaded, source = config, "config"
    elif isinstance(config, dict):
        loaded, source = parse_config(config), "config"
    elif isinstance(config, (str, Path)):
        loaded, source = load_config(config), str(config)
        text = Path(config).read_text(encoding="utf-8")
    else:
        raise TypeError(f"synth takes a config file path, a dict or a FastscaleConfig, not {type(config).__name__}")
    findings = run_rules(loaded)
    errors = [f for f in (with_lines(findings, text) if text else findings) if f.severity is Severity.ERROR]
    if errors:
        listed = "\n".join(
            f"  {f.code} {'line ' + str(f.line) + ', ' if f.line else ''}{f.path}: {f.message} (fix: {f.hint})"
            for f in errors)
        raise ConfigInvalid(f"{source} has {len(errors)} validation error(s), nothing was synthesized:\n{listed}")
    return loaded


def synth(config: Any) -> Template:
    """Synthesize a config in this process (no subprocess, no `cdktf` CLI) and return its Template.

    ``config`` is the path of a fastscale.yaml, a dict of the same shape, or a loaded FastscaleConfig. It is
    validated with every rule first (:class:`ConfigInvalid` on errors, as `fastscale validate` would exit 2)
    and synthesized into a temporary directory as `fastscale synth --out cdktf.out` would from the project
    directory, so the JSON is the same bytes the project deploys.
    """
    from fastscale.stacks.app import synthesize_document  # lazy: the stacks, loaded only when this runs

    loaded = _load(config)
    project = Path(config).resolve().parent if isinstance(config, (str, Path)) else None
    return Template(synthesize_document(resolve(loaded)), project_dir=project)


def _format_body(body: Any) -> str:
    lines = json.dumps(body, indent=2, sort_keys=True).splitlines()
    if len(lines) > _SHOWN_LINES:
        lines = [*lines[:_SHOWN_LINES], f"... ({len(lines) - _SHOWN_LINES} more lines)"]
    return "\n".join("    " + line for line in lines)


class Template:
    """The Terraform JSON of one synthesized stack.

    Resources are addressed by Terraform type and by their name in the JSON (``llm_endpoint_F49A8EDF``).
    Assertion methods raise AssertionError with what was expected, the closest resource and every path at
    which it differs; pytest shows that message as the failure.
    """

    def __init__(self, document: dict[str, Any], *, project_dir: Path | None = None):
        self.document = document
        self.project_dir = project_dir

    @classmethod
    def from_config(cls, config: Any) -> Template:
        """The same as :func:`synth`."""
        return synth(config)

    @classmethod
    def from_file(cls, path: str | Path) -> Template:
        """An already synthesized stack file (``cdktf.out/stacks/<stack>/cdk.tf.json``)."""
        return cls(json.loads(Path(path).read_text(encoding="utf-8")))

    # ------------------------------------------------------------------------------------------- lookups

    def resource_types(self) -> list[str]:
        return sorted(self.document.get("resource", {}))

    def resources(self, resource_type: str) -> dict[str, dict[str, Any]]:
        """Name -> body of every resource of this Terraform type (empty when there is none)."""
        return dict(self.document.get("resource", {}).get(resource_type, {}))

    def data_sources(self, data_type: str) -> dict[str, dict[str, Any]]:
        return dict(self.document.get("data", {}).get(data_type, {}))

    def outputs(self) -> dict[str, dict[str, Any]]:
        return dict(self.document.get("output", {}))

    def find(self, resource_type: str, pattern: Any = None) -> dict[str, dict[str, Any]]:
        """The resources of this type that match ``pattern`` (all of them without one)."""
        if pattern is None:
            return self.resources(resource_type)
        matcher = as_matcher(pattern)
        return {name: body for name, body in self.resources(resource_type).items() if not matcher.test(body)}

    def one(self, resource_type: str, pattern: Any = None) -> dict[str, Any]:
        """The body of the one resource of this type that matches ``pattern``; AssertionError when there is
        none (with the closest one and its differences) or more than one (with their names)."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        found = self.find(resource_type, pattern)
        if len(found) == 1:
            return next(iter(found.values()))
        if not found:
            raise AssertionError(self._no_match_message(resource_type, pattern))
        raise AssertionError(f"expected one {resource_type}{' matching the pattern' if pattern is not None else ''}, "
                             f"found {len(found)}: {', '.join(sorted(found))}")

    # ---------------------------------------------------------------------------------------- assertions

    def has_resource_properties(self, resource_type: str, pattern: Any) -> None:
        """At least one resource of this type matches ``pattern`` (plain dicts match partially)."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        if not self.find(resource_type, pattern):
            raise AssertionError(self._no_match_message(resource_type, pattern))

    def all_resources_properties(self, resource_type: str, pattern: Any) -> None:
        """Every resource of this type matches ``pattern``, and there is at least one."""
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        resources = self.resources(resource_type)
        if not resources:
            raise AssertionError(self._none_of_type(resource_type))
        matcher = as_matcher(pattern)
        failed = {name: diffs for name, body in resources.items() if (diffs := matcher.test(body))}
        if failed:
            parts = [f"{len(failed)} of {len(resources)} {resource_type} resource(s) do not match the pattern:"]
            for name, diffs in sorted(failed.items()):
                parts.append(f"  {name}:")
                parts += [f"    {d}" for d in diffs]
            raise AssertionError("\n".join(parts))

    def resource_count_is(self, resource_type: str, count: int) -> None:
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        found = self.resources(resource_type)
        if len(found) != count:
            names = f": {', '.join(sorted(found))}" if found else ""
            raise AssertionError(f"expected {count} {resource_type} resource(s), found {len(found)}{names}")

    def resource_properties_count_is(self, resource_type: str, pattern: Any, count: int) -> None:
        __tracebackhide__ = True  # pytest shows the caller's line, not this one
        found = self.find(resource_type, pattern)
        if len(found) != count:
            names = f": {', '.join(sorted(found))}" if found else ""
            raise AssertionError(f"expected {count} {resource_type} resource(s) matching the pattern, found "
                                 f"{len(found)}{names}")

    # ---------------------------------------------------------------------------------------- snapshots

    def normalized(self) -> dict[str, Any]:
        """A deep copy for snapshot tests: the engine's version stamp and absolute paths of the project
        replaced by placeholders (see :func:`fastscale.infra.project.stack_snapshot.normalize`)."""
        paths = {str(self.project_dir): "<project>"} if self.project_dir else {}
        return normalize(copy.deepcopy(self.document), paths)

    # ------------------------------------------------------------------------------------------ messages

    def _none_of_type(self, resource_type: str) -> str:
        return (f"the template has no {resource_type} resource; its resource types are: "
                f"{', '.join(self.resource_types()) or 'none'}")

    def _no_match_message(self, resource_type: str, pattern: Any) -> str:
        resources = self.resources(resource_type)
        if not resources:
            return self._none_of_type(resource_type)
        matcher = as_matcher(pattern)
        tried: list[tuple[list[Mismatch], str]] = sorted(
            ((matcher.test(body), name) for name, body in resources.items()), key=lambda t: (len(t[0]), t[1]))
        diffs, closest = tried[0]
        listed = "\n".join(f"  {d}" for d in diffs)
        return (
            f"no {resource_type} matches the pattern ({len(resources)} resource(s) of this type).\n"
            f"The closest is {closest}, {len(diffs)} difference(s):\n{listed}\n"
            f"Pattern:\n{_format_body(pattern_view(pattern))}\n"
            f"{closest}:\n{_format_body(resources[closest])}"
        )
