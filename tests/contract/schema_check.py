"""Check synthesized Terraform JSON against the recorded provider schemas.

The stacks write resources through a thin typed layer instead of a prebuilt
provider binding, so nothing but this check stands between a misspelled
argument and a failed ``terraform plan`` on a real account. The schemas are
extracted from the prebuilt bindings by ``scripts/extract_provider_schemas.py``
into ``provider_schemas.json`` beside this file.

What is checked, recursively through nested blocks and nested attributes:

* unknown arguments (with a did-you-mean),
* missing required arguments,
* the JSON shape of nested items: a list must be a JSON array and a single
  item a JSON object. Terraform's JSON syntax would also read a lone object
  as a one-item block list and a one-item array as a single block, but the
  provider bindings never write either form, and accepting them would hide
  the mistake of writing one variant where a list of them was meant; for
  nested *attributes* (awscc) the loose forms are plain type errors anyway,
* primitive values Terraform could not convert (a number may be written as a
  numeric string, as Terraform converts it; ``"abc"`` for a number is not),
* attribute paths named in ``lifecycle.ignore_changes``.

A string containing ``${`` is a Terraform expression and satisfies any
attribute type. It cannot stand in for a *block*: Terraform needs a block
written out as a JSON object.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import re
from pathlib import Path
from typing import Any

SCHEMAS_PATH = Path(__file__).with_name("provider_schemas.json")
SUPPORTED_FORMAT = 1

# Terraform's own resource arguments, and cdktf's "//" metadata; no provider
# schema lists them.
META_ARGUMENTS = frozenset(
    {"lifecycle", "depends_on", "count", "for_each", "provider", "provisioner", "connection", "//"}
)
LIFECYCLE_ARGUMENTS = frozenset(
    {"create_before_destroy", "prevent_destroy", "ignore_changes", "replace_triggered_by",
     "precondition", "postcondition"}
)


@functools.cache
def load_schemas(path: Path = SCHEMAS_PATH) -> dict[str, Any]:
    """Return the recorded schema document (cached)."""
    document = json.loads(path.read_text())
    if document.get("format") != SUPPORTED_FORMAT:
        raise ValueError(
            f"{path}: schema format {document.get('format')!r}, this checker reads "
            f"{SUPPORTED_FORMAT}; re-run scripts/extract_provider_schemas.py or update the checker"
        )
    return document


#: Terraform's built-in resources (provider terraform.io/builtin/terraform, part of the binary): their
#: schema is Terraform's own, so it is written here instead of extracted.
BUILTIN_RESOURCES: dict[str, Any] = {
    "terraform_data": {"attributes": {"input": {"required": False, "type": "any"},
                                      "triggers_replace": {"required": False, "type": "any"}}},
}


def _resources() -> dict[str, Any]:
    return {**load_schemas()["resources"], **BUILTIN_RESOURCES}


def resource_schema(resource_type: str) -> dict[str, Any] | None:
    """The recorded schema of one resource type, or None if it was not recorded."""
    return _resources().get(resource_type)


def check_resource(resource_type: str, attrs: dict) -> list[str]:
    """Problems in one resource body as written under ``resource.<type>.<id>``.

    Each problem starts with the path of the offending argument, e.g.
    ``production_variants[0].instance_typ: unknown attribute (did you mean
    'instance_type'?)``. An empty list means the body fits the schema.
    """
    resources = _resources()
    schema = resources.get(resource_type)
    if schema is None:
        return [f"unknown resource type {resource_type!r}{_did_you_mean(resource_type, resources)}; "
                "record it in scripts/extract_provider_schemas.py if it is meant"]
    if not isinstance(attrs, dict):
        return [f"resource body must be a JSON object, got {_json_kind(attrs)}"]

    problems: list[str] = []
    body = {k: v for k, v in attrs.items() if k not in META_ARGUMENTS}
    _check_object(schema["attributes"], body, "", problems)
    if "lifecycle" in attrs:
        _check_lifecycle(schema["attributes"], attrs["lifecycle"], problems)
    return problems


def check_stack(tf_json: dict) -> dict[str, list[str]]:
    """Problems of every resource in a synthesized ``cdk.tf.json``.

    Keys are ``<type>.<logical id>``; only resources with problems appear, so
    a clean stack gives ``{}``. Resource types that have no recorded schema
    are reported under their own key.
    """
    if not isinstance(tf_json, dict):
        return {"<document>": [f"expected a JSON object, got {_json_kind(tf_json)}"]}
    resources = tf_json.get("resource", {})
    if not isinstance(resources, dict):
        return {"resource": [f"expected a JSON object, got {_json_kind(resources)}"]}

    report: dict[str, list[str]] = {}
    for resource_type, instances in resources.items():
        if not isinstance(instances, dict):
            report[resource_type] = [f"expected an object of logical ids, got {_json_kind(instances)}"]
            continue
        for logical_id, body in instances.items():
            problems = check_resource(resource_type, body)
            triggers = (body.get("lifecycle") or {}).get("replace_triggered_by") if isinstance(body, dict) else None
            for index, address in enumerate(triggers or []):
                kind, _, name = str(address).partition(".")
                if name not in (resources.get(kind) or {}):
                    problems.append(f"lifecycle.replace_triggered_by[{index}]: {address} is not a resource of the stack")
            if problems:
                report[f"{resource_type}.{logical_id}"] = problems
    return report


# --------------------------------------------------------------------------- internals


def _check_object(attributes: dict, value: dict, path: str, problems: list[str]) -> None:
    for name, item in value.items():
        where = _join(path, name)
        spec = attributes.get(name)
        if spec is None:
            problems.append(f"{where}: unknown attribute{_did_you_mean(name, attributes)}")
        elif item is not None:  # JSON null leaves an argument unset
            _check_value(spec, item, where, problems, block=spec.get("block", False))
    for name, spec in attributes.items():
        if spec["required"] and value.get(name) is None:
            problems.append(f"{_join(path, name)}: missing required attribute")


def _check_value(spec: dict, value: Any, path: str, problems: list[str], *, block: bool) -> None:
    kind = spec["type"]
    if _is_token(value):
        if block:
            problems.append(f"{path}: is a block and must be written as a JSON object, not an expression")
        return
    if kind == "any":
        return
    if kind == "object":
        noun = "block" if block else "object"
        if isinstance(value, list):
            problems.append(
                f"{path}: takes a single {noun} (at most one), write it as a JSON object; "
                f"got an array of {len(value)}"
            )
        elif not isinstance(value, dict):
            problems.append(f"{path}: expected an {noun}, got {_json_kind(value)}")
        else:
            _check_object(spec["attributes"], value, path, problems)
        return
    if kind == "list":
        element = spec["element"]
        if not isinstance(value, list):
            what = "list of blocks" if block else "list"
            hint = "; wrap it in a JSON array" if isinstance(value, dict) and "attributes" in element else ""
            problems.append(f"{path}: expected a {what}, got {_json_kind(value)}{hint}")
            return
        for index, item in enumerate(value):
            _check_value(element, item, f"{path}[{index}]", problems, block=block)
        return
    if kind == "map":
        if not isinstance(value, dict):
            problems.append(f"{path}: expected a map, got {_json_kind(value)}")
            return
        for key, item in value.items():
            _check_value(spec["element"], item, f"{path}[{json.dumps(key)}]", problems, block=False)
        return
    if not _converts_to(kind, value):
        problems.append(f"{path}: expected a {kind}, got {_json_kind(value)} {json.dumps(value)[:60]}")


def _converts_to(kind: str, value: Any) -> bool:
    """Whether Terraform can convert a JSON value to a primitive type."""
    if kind == "string":
        return isinstance(value, (str, int, float))  # bool is an int too; Terraform converts it
    if kind == "number":
        if isinstance(value, bool):
            return False
        if isinstance(value, (int, float)):
            return True
        if isinstance(value, str):
            try:
                return math.isfinite(float(value))
            except ValueError:
                return False
        return False
    if kind == "bool":
        return isinstance(value, bool) or value in ("true", "false")
    raise ValueError(f"schema has unknown type {kind!r}")


def _check_lifecycle(attributes: dict, lifecycle: Any, problems: list[str]) -> None:
    if not isinstance(lifecycle, dict):
        problems.append(f"lifecycle: expected an object, got {_json_kind(lifecycle)}")
        return
    for name in lifecycle:
        if name not in LIFECYCLE_ARGUMENTS:
            problems.append(f"lifecycle.{name}: unknown lifecycle argument"
                            f"{_did_you_mean(name, LIFECYCLE_ARGUMENTS)}")
    ignored = lifecycle.get("ignore_changes")
    if ignored is None or ignored == "all" or _is_token(ignored):
        return
    if not isinstance(ignored, list):
        problems.append(f"lifecycle.ignore_changes: expected a list or \"all\", got {_json_kind(ignored)}")
        return
    for index, entry in enumerate(ignored):
        where = f"lifecycle.ignore_changes[{index}]"
        if not isinstance(entry, str):
            problems.append(f"{where}: expected an attribute path string, got {_json_kind(entry)}")
            continue
        problem = _resolve_path(attributes, entry)
        if problem:
            problems.append(f"{where}: {problem}")


def _resolve_path(attributes: dict, reference: str) -> str | None:
    """Walk ``a.b[0].c`` through the schema; return a problem or None.

    Only attribute names are checked: index keys and anything below a map or
    an ``any`` attribute are beyond what the schema records.
    """
    names = [n for n in re.split(r"\.|\[[^\]]*\]", reference) if n]
    if not names:
        return f"empty attribute path {reference!r}"
    current: dict | None = attributes
    for depth, name in enumerate(names):
        if current is None:
            return None
        spec = current.get(name)
        if spec is None:
            shown = ".".join(names[: depth + 1])
            return f"{shown!r} is not an attribute{_did_you_mean(name, current)}"
        if spec["type"] == "list":
            spec = spec["element"]
        current = spec.get("attributes")
    return None


def _did_you_mean(name: str, candidates) -> str:
    choices = sorted(candidates)
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
    if snake != name and snake in choices:
        return f" (did you mean {snake!r}?)"
    close = difflib.get_close_matches(snake, choices, n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    if len(choices) <= 40:
        return f" (known: {', '.join(choices)})"
    return ""


def _is_token(value: Any) -> bool:
    return isinstance(value, str) and "${" in value


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
