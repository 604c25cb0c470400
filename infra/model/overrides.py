"""Overrides: raw provider attributes a config sets on the resources fastscale synthesizes.

`overrides: {<terraform resource type>: {<dotted attribute path>: value}}` on an endpoint or on an inference
component adds or replaces attributes of that entry's resources of that type
(`aws_sagemaker_endpoint_configuration: {production_variants.0.enable_ssm_access: true}`). It is the way to a
provider attribute fastscale has no setting for. The stack applies them through the resource layer's
`add_override` (stacks/resources/elements.py), after the attributes fastscale writes, so they reach
`cdk.tf.json` as ordinary attributes (and so `terraform plan` shows them); every string in a value is a
literal there, escaped like every other config string, never evaluated by Terraform.

Checked here, without Terraform, against a trimmed copy of the provider schemas the contract tests hold
(`override_schema.json`, made by scripts/gen_override_schema.py from tests/contract/provider_schemas.json,
hashicorp/aws 6.25.0 and hashicorp/awscc 1.106.0; a test fails when the two differ):

- which types an entry can target: the ones that entry synthesizes (`targets`);
- the path: every part an attribute of the schema, a list or set stepped into by a numeric index, a map by
  its key; the value's type against the attribute's;
- attributes fastscale owns are refused (`OWNED`, and `EVERY_TYPE` on every type): names, the ownership tags
  teardown proves ownership by, the region a resource lives in, and the wiring between the stack's
  resources (variant name, model and endpoint references, shadow variants' models included, counts that
  auto scaling or the cut-over variable own).

What an override sends elsewhere without re-owning anything (data capture, core dumps and asynchronous
output to a bucket, a KMS key of another account) is allowed, and rule FS107 says what it does.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from fastscale.infra.config import EndpointSpec, FastscaleConfig
from fastscale.infra.model import capacity, naming

SCHEMA_FILE = Path(__file__).with_name("override_schema.json")

ENDPOINT_CONFIG_AWS = "aws_sagemaker_endpoint_configuration"
ENDPOINT_CONFIG_AWSCC = "awscc_sagemaker_endpoint_config"
ENDPOINT = "aws_sagemaker_endpoint"
MODEL = naming.MODEL_TYPE
INFERENCE_COMPONENT = "awscc_sagemaker_inference_component"

#: Every type an override can target, and where (the docs list them from here).
TARGETABLE: dict[str, str] = {
    ENDPOINT_CONFIG_AWS: "endpoint: its endpoint configuration, when hashicorp/aws's is synthesized",
    ENDPOINT_CONFIG_AWSCC: "endpoint: its endpoint configuration, when awscc's is synthesized (metrics, capacity, "
    "scale-in or prefix/KV-aware routing settings, an AMI or instance type hashicorp/aws does not know)",
    ENDPOINT: "endpoint: the endpoint",
    MODEL: "endpoint (single-model endpoints): the model and its fallback pools' models; component: the "
    "component's model and its pools' models",
    INFERENCE_COMPONENT: "component: the inference component",
}

_TAGS = "the ownership tags: teardown, sweep and verify-cleanup prove a resource is this stack's by them; set `tags` in the config instead"
_SHADOW_MODEL = ("the shadow variant's model: a model the stack does not make (another stack's, say) would serve a copy "
                 "of the traffic and be tied to this endpoint")
#: Attribute paths an override may not set on any type, whether or not the type's provider schema has them.
EVERY_TYPE: dict[str, str] = {
    "region": "the resource's region (hashicorp/aws 6 places each resource in its own): status, verify-cleanup, sweep "
    "and the stack's other resources look for it in the config's `region` only, so it would move out of the stack's "
    "reach; set `region` in the config instead",
}
_ROLE = "the execution role: fastscale creates a least-privilege one; set the endpoint's `execution_role_arn` to bring your own"
#: Attribute paths (list indexes left out) an override may not set or replace, per type, and why.
OWNED: dict[str, dict[str, str]] = {
    ENDPOINT_CONFIG_AWS: {
        "name": "the configuration's name: fastscale gives it a fresh name on every change (name_prefix) so the endpoint switches over",
        "name_prefix": "the configuration's name prefix: teardown and sweep find the stack's configurations by it",
        "tags": _TAGS, "tags_all": _TAGS, "execution_role_arn": _ROLE,
        "production_variants.variant_name": "the variant's name: auto scaling, alarms and verification address the variant by it",
        "production_variants.model_name": "the reference to the stack's model",
        "production_variants.initial_instance_count": "the cut-over count: the stack's variable, set from the live count at deploy",
        "shadow_production_variants.model_name": _SHADOW_MODEL,
    },
    ENDPOINT_CONFIG_AWSCC: {
        "endpoint_config_name": "the configuration's name: it carries a digest of the content, so a change creates a new configuration",
        "tags": _TAGS, "execution_role_arn": _ROLE,
        "production_variants.variant_name": "the variant's name: auto scaling, alarms and verification address the variant by it",
        "production_variants.model_name": "the reference to the stack's model",
        "production_variants.initial_instance_count": "the cut-over count: the stack's variable, set from the live count at deploy",
        "production_variants.instance_pools.model_name_override": "the references to the fallback pools' models",
        "shadow_production_variants.model_name": _SHADOW_MODEL,
        "shadow_production_variants.instance_pools.model_name_override": _SHADOW_MODEL,
    },
    ENDPOINT: {
        "name": "the endpoint's name: verification, teardown and the scaling resource ids use it",
        "endpoint_config_name": "the reference to the stack's endpoint configuration",
        "tags": _TAGS, "tags_all": _TAGS,
    },
    MODEL: {
        "name": "the model's name: it carries a content digest so a replacing model never collides with the old one",
        "tags": _TAGS, "tags_all": _TAGS, "execution_role_arn": _ROLE,
    },
    INFERENCE_COMPONENT: {
        "inference_component_name": "the component's name: auto scaling, alarms and teardown use it",
        "endpoint_name": "the reference to the stack's endpoint",
        "variant_name": "the variant the component runs on",
        "runtime_config.copy_count": "the copy count: auto scaling owns it after creation (ignore_changes)",
        "specification.model_name": "the reference to the component's model",
        "specifications.model_name": "the references to the component's models",
        "tags": _TAGS,
    },
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an override: `kind` is `unknown` (no such attribute, or a value of the wrong
    type) or `owned` (an attribute fastscale owns)."""

    kind: str
    message: str
    hint: str


@cache
def schema() -> dict[str, Any]:
    """The trimmed provider schemas: {"providers": {...}, "resources": {type: {"attributes": ...}}}."""
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def provider_of(type_: str) -> str:
    info = schema()["providers"]["awscc" if type_.startswith("awscc_") else "aws"]
    return f"{info['source']} {info['version']}"


def endpoint_targets(awscc_config: bool, single_model: bool) -> dict[str, str]:
    """The types an endpoint-level override can target (what that entry synthesizes), with what each is: the
    endpoint configuration of its provider (awscc's when ``awscc_config``), the endpoint, and the model of a
    single-model endpoint."""
    config_type = ENDPOINT_CONFIG_AWSCC if awscc_config else ENDPOINT_CONFIG_AWS
    out = {config_type: "the endpoint configuration", ENDPOINT: "the endpoint"}
    if single_model:
        out[MODEL] = "the model (and its fallback pools' models)"
    return out


def component_targets() -> dict[str, str]:
    """The types a component-level override can target."""
    return {INFERENCE_COMPONENT: "the inference component", MODEL: "the component's model (and its pools' models)"}


Entry = tuple[str, dict[str, str], Mapping[str, Mapping[str, Any]], EndpointSpec]


def entries(config: FastscaleConfig) -> Iterator[Entry]:
    """(config path of the entry, the types it can target, its overrides, its endpoint) for every endpoint
    and component."""
    for i, ep in enumerate(config.endpoints):
        yield f"endpoints[{i}]", endpoint_targets(capacity.needs_awscc_config(ep), ep.model is not None), ep.overrides, ep
        for j, c in enumerate(ep.inference_components):
            yield f"endpoints[{i}].inference_components[{j}]", component_targets(), c.overrides, ep


def written_lengths(ep: EndpointSpec) -> dict[str, int]:
    """How many elements fastscale writes in the lists an index may go past the first of (paths without
    indexes, the same for every type that has them): an index may name one of them or the next one."""
    pools = len(capacity.pools(ep)) if capacity.has_pools(ep) else 0
    return {"production_variants": 1, "production_variants.instance_pools": pools, "specifications": pools}


def target_problem(type_: str, targets: Mapping[str, str], where: str) -> Problem | None:
    """Why `type_` cannot be targeted by an entry whose types are `targets` (None when it can)."""
    if type_ in targets:
        return None
    listed = ", ".join(sorted(targets))
    if type_ in TARGETABLE:
        why = {
            ENDPOINT_CONFIG_AWS: "this endpoint's configuration is awscc's (awscc_sagemaker_endpoint_config), since it "
            "sets metrics, capacity, scale-in or prefix/KV-aware routing settings hashicorp/aws cannot express, or an AMI "
            "or instance type its validation does not know",
            ENDPOINT_CONFIG_AWSCC: "this endpoint's configuration is hashicorp/aws's (aws_sagemaker_endpoint_configuration)",
            MODEL: "an inference-component endpoint has no model of its own: target the model from the component's `overrides`",
            INFERENCE_COMPONENT: "an inference component is targeted from that component's own `overrides`",
            ENDPOINT: "the endpoint is targeted from the endpoint's `overrides`",
        }[type_]
        return Problem("target", f"{where} does not synthesize a {type_}: {why}.", f"target one of: {listed}")
    close = difflib.get_close_matches(type_, list(targets) + list(TARGETABLE), n=1)
    suggestion = f"did you mean {close[0]}? " if close else ""
    return Problem(
        "target",
        f"{type_} is not a resource type fastscale synthesizes for {where}, so an override cannot target it.",
        f"{suggestion}this entry can target: {listed} (docs/overrides.md lists every targetable type)",
    )


def _parts(path: str) -> list[str]:
    return path.split(".")


def _owned(type_: str, path: str, owned_here: Mapping[str, str] | None = None) -> Problem | None:
    bare = ".".join(p for p in _parts(path) if not p.isdigit())
    for owned, why in (OWNED.get(type_, {}) | EVERY_TYPE if owned_here is None else owned_here).items():
        if bare == owned or bare.startswith(owned + "."):
            return Problem("owned", f"{type_}.{owned} belongs to fastscale: {why}.",
                           "remove this override; fastscale sets that attribute itself")
        if owned.startswith(bare + "."):
            return Problem("owned", f"this override replaces {bare} whole, including {owned}, which belongs to "
                           f"fastscale: {why}.", f"override the attributes inside {bare} one by one instead "
                           f"({bare}.<attribute>), leaving {owned} alone")
    return None


def _unknown(name: str, known: Mapping[str, Any], where: str, type_: str) -> Problem:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    listed = ", ".join(sorted(known))
    hint = f"did you mean {close[0]}? " if close else ""
    return Problem(
        "unknown",
        f"{where} has no attribute {name!r} in the {provider_of(type_)} schema of {type_}.",
        f"{hint}attributes there: {listed}",
    )


_PY_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "number": (int, float), "bool": (bool,)}
_WORDS = {"string": "a string", "number": "a number", "bool": "true or false", "list": "a list", "set": "a list",
          "map": "a mapping", "object": "a mapping of attributes"}


def _value_problem(node: Mapping[str, Any], value: Any, where: str, type_: str) -> Problem | None:
    """Whether `value` fits the schema `node` (null always fits: Terraform reads it as unset)."""
    if value is None:
        return None
    kind = node["type"]
    if kind in _PY_TYPES:
        fits = isinstance(value, _PY_TYPES[kind]) and not (kind == "number" and isinstance(value, bool))
    elif kind in ("list", "set"):
        if isinstance(value, list):
            for i, item in enumerate(value):
                problem = _value_problem(node["element"], item, f"{where}.{i}", type_)
                if problem:
                    return problem
            return None
        fits = False
    elif kind == "map":
        if isinstance(value, dict):
            for key, item in value.items():
                problem = _value_problem(node["element"], item, f"{where}.{key}", type_)
                if problem:
                    return problem
            return None
        fits = False
    else:  # object: a nested block or nested attribute
        if isinstance(value, dict):
            attributes = node["attributes"]
            for key, item in value.items():
                if key not in attributes:
                    return _unknown(key, attributes, where, type_)
                problem = _value_problem(attributes[key], item, f"{where}.{key}", type_)
                if problem:
                    return problem
            return None
        fits = False
    if fits:
        return None
    return Problem("unknown", f"{where} takes {_WORDS[kind]} ({kind} in the {provider_of(type_)} schema of {type_}), "
                   f"not {type(value).__name__}.", f"give {where} {_WORDS[kind]}")


def path_problem(type_: str, path: str, value: Any, lengths: Mapping[str, int] | None = None) -> Problem | None:
    """What is wrong with overriding `path` of `type_` with `value` (None when nothing): the path against the
    provider schema, the value's type, then fastscale's own attributes. `type_` must be targetable. An index
    past the first is accepted only on the lists of `lengths` (`written_lengths`), up to the next element:
    elsewhere fastscale does not know how many elements it writes, so set the whole list instead."""
    parts = _parts(path)
    if any(not p for p in parts):
        return Problem("unknown", f"{path!r} is not a dotted attribute path (an empty part).",
                       "write it as attribute.0.attribute, e.g. production_variants.0.enable_ssm_access")
    # Owned on every type even where this provider release has no such attribute: the next one may.
    everywhere = _owned(type_, path, EVERY_TYPE)
    if everywhere is not None:
        return everywhere
    node: Mapping[str, Any] = {"type": "object", "attributes": schema()["resources"][type_]["attributes"]}
    walked: list[str] = []
    for part in parts:
        where = ".".join(walked) or type_
        kind = node["type"]
        if kind == "object":
            if part.isdigit():
                return Problem("unknown", f"{where} is a single block, not a list: {part} cannot index it.",
                               f"leave the index out ({where}.<attribute>)")
            if part not in node["attributes"]:
                return _unknown(part, node["attributes"], where, type_)
            node = node["attributes"][part]
        elif kind in ("list", "set"):
            if not part.isdigit():
                return Problem("unknown", f"{where} is a list: the next part of the path must be an index, not {part!r}.",
                               f"write {where}.0.{part} for the first element")
            bare = ".".join(p for p in walked if not p.isdigit())
            most = (lengths or {}).get(bare, 0)
            if int(part) > most:
                said = f"fastscale writes {most} element(s) there" if bare in (lengths or {}) else \
                    "fastscale checks indexes past the first only on production_variants, instance_pools and specifications"
                return Problem("unknown", f"{where}.{part} is past the end of {where}: {said}, and an index may "
                               "name one of them or the next one.",
                               f"use an index up to {most}" + ("" if bare in (lengths or {}) else f", or set {where} whole (a list)"))
            node = node["element"]
        elif kind == "map":
            node = node["element"]
        else:
            return Problem("unknown", f"{where} is a single value ({kind}): it has no attribute {part!r}.",
                           f"override {where} itself")
        walked.append(part)
    return _value_problem(node, value, path, type_) or _owned(type_, path)


def path_problems(config: FastscaleConfig) -> Iterator[tuple[str, str, str, Problem]]:
    """(entry's config path, type, attribute path, problem) for every override of a type its entry can
    target (a type it cannot is FS101's) whose path or value is wrong: FS102 and FS103 each report their kind."""
    for where, targets, entry, ep in entries(config):
        lengths = written_lengths(ep)
        for type_, paths in entry.items():
            if type_ not in targets:
                continue
            for path, value in paths.items():
                problem = path_problem(type_, path, value, lengths)
                if problem is not None:
                    yield where, type_, path, problem
