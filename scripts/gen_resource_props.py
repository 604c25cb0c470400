#!/usr/bin/env python3
"""Write stacks/resources/generated/<provider>.py: the typed props of the resource types fastscale uses.

The stacks write Terraform JSON through a thin layer of frozen dataclasses whose field names are the
provider's attribute names (stacks/resources/base.py). Those dataclasses are facts of the provider schemas,
so they are generated from the schemas the contract tests already hold (tests/contract/provider_schemas.json,
written by scripts/extract_provider_schemas.py), like `cdktf get` would, and never written by hand: every
argument a type offers is a field, not only the ones fastscale sets today. tests/stacks/test_generated_props.py
fails while a committed module differs from what this script writes.

The mapping, per attribute of the schema:

- string -> `str` (a `Ref` or `Interpolated` is a `str` too); number -> `int | float | Ref`; bool ->
  `bool | Ref` (a reference, e.g. to a variable, is a Terraform expression any attribute may take);
  any -> `Any`; list / set of x -> `Sequence[x]`; map of x -> `Mapping[str, x]`;
- a nested object (a block, or a nested attribute of the plugin framework) -> a generated dataclass: a block
  the provider limits to one item (recorded as `"type": "object"`) is a single dataclass, rendered as a JSON
  object; any other block is a `Sequence` of dataclasses, rendered as a JSON array;
- required attributes and blocks with at least one item are required fields; every other one is optional,
  `None` by default ("not set": `None` is left out of the JSON). Fields are keyword-only: required ones first,
  each group in the schema's (alphabetical) order;
- each class is a dataclass on `stacks.resources.props.Props` (frozen, compared and shown field by field)
  whose keyword-only `__init__` is written here rather than built by `@dataclass` at import, which would cost
  every synthesis tens of milliseconds for a hundred classes (that module's docstring has the numbers);
- computed-only attributes (`arn`, ...) are no props: the extract records only what a configuration may set,
  so they never reach this script.

Nested classes with the same attributes (the same names, types and required flags, recursively) are one class
within a provider's module, used at every path that has that shape (the model data source under
`container` and `primary_container`, awscc's tags). A class is named `NAMES[(type, path)]` when one of its
paths is in that map (the names the stacks use), else after the first of its paths in the schema's order: the
resource type without its provider prefix, then the path's last attribute, in CamelCase
(`SagemakerModelImageConfig`), with as many attributes before the last as it takes to tell it from every
other class of the module (`AppautoscalingPolicyMetricsMetricStatMetric`). A name thus depends only on its
own resource's schema and the map. A resource's own class is `<Type>Props` (`SagemakerModelProps`).

Usage: python scripts/gen_resource_props.py [--check]
  --check  exit 1 if a committed module differs from what would be generated.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastscale.infra.base.resource_types import PROVIDER_RESOURCE_TYPES  # noqa: E402
from scripts.generated_file import write_or_check  # noqa: E402

SOURCE = ROOT / "tests" / "contract" / "provider_schemas.json"
OUT_DIR = ROOT / "stacks" / "resources" / "generated"
COMMAND = "python scripts/gen_resource_props.py"

#: The resource types fastscale's stacks create, by provider (the local name, the prefix of its types): one
#: module of props each, `stacks/resources/generated/<provider>.py`. The list itself lives in
#: `infra/base/resource_types.py`.
RESOURCE_TYPES: dict[str, tuple[str, ...]] = PROVIDER_RESOURCE_TYPES

#: Class names of nested objects, by (resource type, dotted attribute path): the names the stacks use. A
#: class with a path here takes this name at all its paths; any other is named after its first path.
NAMES: dict[tuple[str, str], str] = {
    # aws_sagemaker_model
    ("aws_sagemaker_model", "primary_container"): "ModelContainer",
    ("aws_sagemaker_model", "primary_container.model_data_source"): "ModelDataSource",
    ("aws_sagemaker_model", "primary_container.model_data_source.s3_data_source"): "S3DataSource",
    ("aws_sagemaker_model", "primary_container.model_data_source.s3_data_source.model_access_config"):
        "ModelAccessConfig",
    ("aws_sagemaker_model", "vpc_config"): "VpcConfig",
    # aws_sagemaker_endpoint_configuration
    ("aws_sagemaker_endpoint_configuration", "production_variants"): "ProductionVariant",
    ("aws_sagemaker_endpoint_configuration", "production_variants.managed_instance_scaling"): "ManagedInstanceScaling",
    ("aws_sagemaker_endpoint_configuration", "production_variants.routing_config"): "RoutingConfig",
    # aws_sagemaker_endpoint
    ("aws_sagemaker_endpoint", "deployment_config"): "DeploymentConfig",
    ("aws_sagemaker_endpoint", "deployment_config.auto_rollback_configuration"): "AutoRollbackConfiguration",
    ("aws_sagemaker_endpoint", "deployment_config.auto_rollback_configuration.alarms"): "Alarm",
    ("aws_sagemaker_endpoint", "deployment_config.blue_green_update_policy"): "BlueGreenUpdatePolicy",
    ("aws_sagemaker_endpoint", "deployment_config.blue_green_update_policy.traffic_routing_configuration"):
        "TrafficRoutingConfiguration",
    ("aws_sagemaker_endpoint", "deployment_config.rolling_update_policy"): "RollingUpdatePolicy",
    ("aws_sagemaker_endpoint", "deployment_config.rolling_update_policy.maximum_batch_size"): "CapacitySize",
    # aws_appautoscaling_policy
    ("aws_appautoscaling_policy", "step_scaling_policy_configuration"): "StepScalingPolicyConfiguration",
    ("aws_appautoscaling_policy", "step_scaling_policy_configuration.step_adjustment"): "StepAdjustment",
    ("aws_appautoscaling_policy", "target_tracking_scaling_policy_configuration"):
        "TargetTrackingScalingPolicyConfiguration",
    ("aws_appautoscaling_policy", "target_tracking_scaling_policy_configuration.predefined_metric_specification"):
        "PredefinedMetricSpecification",
    # aws_cloudwatch_metric_alarm
    ("aws_cloudwatch_metric_alarm", "metric_query"): "MetricQuery",
    ("aws_cloudwatch_metric_alarm", "metric_query.metric"): "MetricQueryMetric",
    # awscc_sagemaker_inference_component
    ("awscc_sagemaker_inference_component", "tags"): "Tag",
    ("awscc_sagemaker_inference_component", "specification"): "InferenceComponentSpecification",
    ("awscc_sagemaker_inference_component", "specifications"): "InstanceTypeSpecification",
    ("awscc_sagemaker_inference_component", "specification.compute_resource_requirements"):
        "ComputeResourceRequirements",
    ("awscc_sagemaker_inference_component", "specification.data_cache_config"): "DataCacheConfig",
    ("awscc_sagemaker_inference_component", "specification.scheduling_config"): "SchedulingConfig",
    ("awscc_sagemaker_inference_component", "specification.scheduling_config.availability_zone_balance"):
        "AvailabilityZoneBalance",
    ("awscc_sagemaker_inference_component", "specification.startup_parameters"): "StartupParameters",
    ("awscc_sagemaker_inference_component", "runtime_config"): "InferenceComponentRuntimeConfig",
    ("awscc_sagemaker_inference_component", "deployment_config"): "InferenceComponentDeploymentConfig",
    ("awscc_sagemaker_inference_component", "deployment_config.auto_rollback_configuration"):
        "AutoRollbackConfiguration",
    ("awscc_sagemaker_inference_component", "deployment_config.auto_rollback_configuration.alarms"): "AlarmName",
    ("awscc_sagemaker_inference_component", "deployment_config.rolling_update_policy"):
        "InferenceComponentRollingUpdatePolicy",
    ("awscc_sagemaker_inference_component", "deployment_config.rolling_update_policy.maximum_batch_size"):
        "InferenceComponentCapacitySize",
    # awscc_sagemaker_endpoint_config
    ("awscc_sagemaker_endpoint_config", "metrics_config"): "MetricsConfig",
    ("awscc_sagemaker_endpoint_config", "production_variants"): "ProductionVariant",
    ("awscc_sagemaker_endpoint_config", "production_variants.capacity_reservation_config"): "CapacityReservationConfig",
    ("awscc_sagemaker_endpoint_config", "production_variants.instance_pools"): "InstancePool",
    ("awscc_sagemaker_endpoint_config", "production_variants.managed_instance_scaling"): "ManagedInstanceScaling",
    ("awscc_sagemaker_endpoint_config", "production_variants.managed_instance_scaling.scale_in_policy"):
        "ScaleInPolicy",
    ("awscc_sagemaker_endpoint_config", "production_variants.routing_config"): "RoutingConfig",
    ("awscc_sagemaker_endpoint_config", "production_variants.routing_config.prefix_aware_routing_config"):
        "PrefixAwareRoutingConfig",
}


class SchemaError(ValueError):
    """The schema (or the generator's lists) cannot be turned into props as they are."""


def camel(snake: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in snake.split("_"))


def resource_class_stem(resource_type: str, provider: str) -> str:
    """`aws_sagemaker_model` -> `SagemakerModel`."""
    return camel(resource_type.removeprefix(f"{provider}_"))


# ------------------------------------------------------------------------------------------------ the model


@dataclass(frozen=True)
class Field:
    name: str
    annotation: str
    required: bool


@dataclass
class Shape:
    """One nested object class: its fields and every (resource type, path) with that shape."""

    key: tuple[Any, ...]
    index: int
    fields: tuple[Field, ...] = ()
    paths: list[tuple[str, str, bool]] = field(default_factory=list)  # (type, dotted path, is a list element)
    block: bool = True  # a block, as opposed to a nested attribute
    name: str = ""


@dataclass
class Module:
    """What one provider's module holds, in the order it is written."""

    provider: str
    source: str
    version: str
    shapes: dict[tuple[Any, ...], Shape] = field(default_factory=dict)
    #: (class name, docstring, fields) of the classes in writing order; nested ones before their users.
    classes: list[tuple[str, str, tuple[Field, ...]]] = field(default_factory=list)
    uses: set[str] = field(default_factory=set)  # "Any", "Mapping", "Sequence", "Ref"


class Builder:
    def __init__(self, provider: str, schemas: dict[str, Any]) -> None:
        info = schemas["providers"][provider]
        self.module = Module(provider, info["source"], info["version"])
        self.schemas = schemas
        self.order: list[tuple[Any, ...]] = []  # shape keys, nested before their users

    def shape_key(self, attributes: dict[str, Any], where: str) -> tuple[Any, ...]:
        return tuple((name, self.type_key(entry, f"{where}.{name}"), bool(entry["required"]))
                     for name, entry in sorted(attributes.items()))

    def type_key(self, entry: dict[str, Any], where: str) -> Any:
        kind = entry["type"]
        if kind in ("string", "number", "bool", "any"):
            return kind
        if kind in ("list", "set", "map"):
            return (kind, self.type_key(entry["element"], where))
        if kind == "object":
            return ("object", self.shape_key(entry["attributes"], where))
        raise SchemaError(f"{where}: unknown type {kind!r}")

    def walk(self, resource_type: str, attributes: dict[str, Any], path: str) -> tuple[Field, ...]:
        """The fields of an object with `attributes` at `path`, registering its nested classes first."""
        fields = []
        for name, entry in sorted(attributes.items()):
            if keyword.iskeyword(name):
                raise SchemaError(f"{resource_type}.{path}{name}: a Python keyword cannot be a field name")
            annotation = self.annotation(resource_type, entry, f"{path}{name}", element=False)
            fields.append(Field(name, annotation, bool(entry["required"])))
        return tuple(sorted(fields, key=lambda f: not f.required))  # stable: alphabetical within each group

    def annotation(self, resource_type: str, entry: dict[str, Any], path: str, *, element: bool,
                   holder: dict[str, Any] | None = None) -> str:
        """The type of `entry` at `path`; `holder` is the list or map `entry` is the element of."""
        kind = entry["type"]
        uses = self.module.uses
        if kind == "string":
            return "str"
        if kind == "number":
            uses.add("Ref")
            return "int | float | Ref"
        if kind == "bool":
            uses.add("Ref")
            return "bool | Ref"
        if kind == "any":
            uses.add("Any")
            return "Any"
        if kind in ("list", "set", "map"):
            inner = self.annotation(resource_type, entry["element"], path, element=True, holder=entry)
            if kind == "map":
                uses.add("Mapping")
                return f"Mapping[str, {inner}]"
            uses.add("Sequence")
            return f"Sequence[{inner}]"
        if kind == "object":
            key = self.type_key(entry, f"{resource_type}.{path}")
            # Walked at every path, so that the nested objects' paths are all known (NAMES may name any).
            fields = self.walk(resource_type, entry["attributes"], f"{path}.")
            shape = self.module.shapes.get(key)
            if shape is None:
                shape = self.module.shapes[key] = Shape(key, index=len(self.module.shapes), fields=fields)
                self.order.append(key)
            shape.paths.append((resource_type, path, element))
            # cdktf records "block" on the attribute that holds the object: the list for a block's items.
            shape.block = shape.block and bool((holder or entry).get("block", False))
            return placeholder(shape.index)
        raise SchemaError(f"{resource_type}.{path}: unknown type {kind!r}")

    def build(self, types: tuple[str, ...]) -> Module:
        roots = []
        for resource_type in sorted(types):
            entry = self.schemas["resources"].get(resource_type)
            if entry is None:
                raise SchemaError(f"{resource_type}: not in {SOURCE.relative_to(ROOT)}; add it to "
                                  "scripts/extract_provider_schemas.py and regenerate the schemas first")
            if entry["provider"] != self.module.provider:
                raise SchemaError(f"{resource_type}: a {entry['provider']} type listed under {self.module.provider}")
            start = len(self.order)
            fields = self.walk(resource_type, entry["attributes"], "")
            roots.append((resource_type, start, len(self.order), fields))
        self.name_shapes()
        names = [shape.name for shape in self.module.shapes.values()]  # in index order
        written: set[tuple[Any, ...]] = set()
        for resource_type, start, end, fields in roots:
            for key in self.order[start:end]:
                if key not in written:
                    written.add(key)
                    shape = self.module.shapes[key]
                    self.module.classes.append((shape.name, shape_doc(shape), resolve(shape.fields, names)))
            name = f"{resource_class_stem(resource_type, self.module.provider)}Props"
            doc = f"The arguments of `{resource_type}` ({self.module.source} {self.module.version})."
            self.module.classes.append((name, doc, resolve(fields, names)))
        taken = [name for name, _, _ in self.module.classes]
        clashes = sorted({n for n in taken if taken.count(n) > 1})
        if clashes:
            raise SchemaError(f"{self.module.provider}: two classes would be named {', '.join(clashes)}; "
                              "give one a name in NAMES")
        return self.module

    def name_shapes(self) -> None:
        by_path = {(t, p): key for key, shape in self.module.shapes.items() for t, p, _ in shape.paths}
        for (resource_type, path), name in NAMES.items():
            if self.schemas["resources"].get(resource_type, {}).get("provider") != self.module.provider:
                continue
            key = by_path.get((resource_type, path))
            if key is None:
                raise SchemaError(f"NAMES: {resource_type}.{path} is no nested object of the schema")
            shape = self.module.shapes[key]
            if shape.name and shape.name != name:
                raise SchemaError(f"NAMES: {resource_type}.{path} has the shape of {shape.name}, named twice")
            shape.name = name
        # The rest: the resource's stem and the last attribute of the first path, with as many attributes
        # before it as it takes to tell the class from every other one of the module.
        taken = {shape.name for shape in self.module.shapes.values() if shape.name}
        taken |= {f"{resource_class_stem(t, self.module.provider)}Props" for t in self.schemas["resources"]}
        unnamed = [shape for shape in self.module.shapes.values() if not shape.name]
        depth = {id(shape): 1 for shape in unnamed}

        def candidate(shape: Shape) -> str:
            resource_type, path, _ = shape.paths[0]
            parts = path.split(".")
            return resource_class_stem(resource_type, self.module.provider) + "".join(
                camel(part) for part in parts[-depth[id(shape)]:])

        while True:
            names = [candidate(shape) for shape in unnamed]
            clashing = [shape for shape, name in zip(unnamed, names, strict=True)
                        if name in taken or names.count(name) > 1]
            longer = [shape for shape in clashing if depth[id(shape)] < len(shape.paths[0][1].split("."))]
            if not longer:
                break
            for shape in longer:
                depth[id(shape)] += 1
        for shape, name in zip(unnamed, names, strict=True):
            shape.name = name


def placeholder(index: int) -> str:
    """What stands for the name of nested class `index` until the classes are named."""
    return f"<{index}>"


def resolve(fields: tuple[Field, ...], names: list[str]) -> tuple[Field, ...]:
    """The fields with the placeholders of nested classes replaced by the classes' names."""
    return tuple(Field(f.name, re.sub(r"<(\d+)>", lambda m: names[int(m.group(1))], f.annotation), f.required)
                 for f in fields)


def shape_doc(shape: Shape) -> str:
    """Where the class is used: `[]` marks an item of a repeatable block or of a list."""
    repeated = {element for _, _, element in shape.paths}
    if shape.block:
        what = {frozenset({False}): "A block of at most one item",
                frozenset({True}): "One item of a repeatable block"}.get(
            frozenset(repeated), "A block, of at most one item at some paths and repeatable (`[]`) at others")
    else:
        what = {frozenset({False}): "A nested object",
                frozenset({True}): "One item of a list of nested objects"}.get(
            frozenset(repeated), "A nested object, single at some paths and in a list (`[]`) at others")
    paths = ", ".join(f"`{t}.{p}{'[]' if element else ''}`" for t, p, element in shape.paths)
    return f"{what}: {paths}."


# ------------------------------------------------------------------------------------------------ the text


def wrap_doc(text: str, indent: str, width: int = 116) -> list[str]:
    """`text` as the lines of a docstring at `indent`, wrapped at spaces."""
    words = text.split(" ")
    lines: list[str] = []
    line = ""
    for word in words:
        candidate = f"{line} {word}" if line else word
        if len(indent) + len(candidate) + (3 if not lines else 0) > width and line:
            lines.append(line)
            line = word
        else:
            line = candidate
    lines.append(line)
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}', *(f"{indent}{rest}" for rest in lines[1:]), f'{indent}"""']


def render_module(module: Module, types: tuple[str, ...]) -> str:
    listed = ", ".join(f"`{t}`" for t in sorted(types))
    intro = textwrap.wrap(f"Typed props of the {module.source} {module.version} resource types fastscale uses: "
                          f"{listed}.", width=113, break_on_hyphens=False, break_long_words=False)
    head = [
        f'"""{intro[0]}',
        *intro[1:],
        "",
        "Generated by scripts/gen_resource_props.py from tests/contract/provider_schemas.json; do not edit. The",
        "script's docstring says how the schema's types become these fields and how the classes are named.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
    ]
    abc = sorted(n for n in ("Mapping", "Sequence") if n in module.uses)
    if abc:
        head.append(f"from collections.abc import {', '.join(abc)}")
    head.append("from dataclasses import dataclass")
    if "Any" in module.uses:
        head.append("from typing import Any")
    head += ["", "from fastscale.stacks.resources.props import Props"]
    if "Ref" in module.uses:
        head.append("from fastscale.stacks.resources.tokens import Ref")
    body: list[str] = []
    for name, doc, fields in module.classes:
        body += ["", "", "@dataclass(init=False, repr=False, eq=False)", f"class {name}(Props):", *wrap_doc(doc, "    ")]
        if fields:
            body.append("")
        params = [f"{f.name}: {f.annotation}" if f.required else f"{f.name}: {f.annotation} | None = None"
                  for f in fields]
        body += [f"    {param}" for param in params]
        body += ["", "    def __init__(", "        self,"]
        if params:
            body.append("        *,")
        body += [f"        {param}," for param in params]
        body.append("    ) -> None:")
        body += [f'        object.__setattr__(self, "{f.name}", {f.name})' for f in fields] or ["        pass"]
    return "\n".join(head + body) + "\n"


def generate(schemas: dict[str, Any]) -> dict[Path, str]:
    """Every generated module's path and text."""
    return {OUT_DIR / f"{provider}.py": render_module(Builder(provider, schemas).build(types), types)
            for provider, types in RESOURCE_TYPES.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed module is stale")
    args = parser.parse_args()
    try:
        modules = generate(json.loads(SOURCE.read_text(encoding="utf-8")))
    except SchemaError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return max(write_or_check(path, text, ROOT, COMMAND, args.check) for path, text in modules.items())


if __name__ == "__main__":
    sys.exit(main())
