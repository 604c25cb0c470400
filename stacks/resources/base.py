"""The thin typed resource layer: frozen dataclasses of Terraform attributes, synthesized by cdktf.

Field names are the provider's own attribute names, so the synthesized JSON can be checked directly
against the provider schemas (tests/contract). Nested blocks are dataclasses too; lists of blocks are lists.
`None` means "not set" and is left out of the JSON.

Every call between Python and the engine's node process costs about a millisecond, so the layer keeps them
to one per resource (creating it in the construct tree):

- reference tokens (`${aws_iam_role.<logical id>.arn}`) are written in Python from the logical id, which
  `logical_id` computes the way the engine does (`tests/stacks/test_resource_layer.py` checks it against
  the engine for every resource of every example);
- attributes and the meta-arguments (`depends_on`, `lifecycle`) are not answered per resource through
  callbacks (node asks each resource twice): the `ResourceStack` adds them to the stack's JSON once, when
  the engine renders it, from the props as they are at that moment;
- the engine is told only each element's type and provider, through one shared config value per type, and
  without the generated constructors' per-call typeguard checks (`engine.create_in_engine`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from fastscale.stacks.engine import (
    Construct,
    GeneratorMetadata,
    TerraformDataSource,
    TerraformResource,
    TerraformResourceConfig,
    TerraformStack,
    create_in_engine,
)


def to_terraform(value: Any) -> Any:
    """Turn props (dataclasses, lists, dicts, scalars) into Terraform JSON values, dropping unset fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if v is None:
                continue
            out[f.name] = to_terraform(v)
        return out
    if isinstance(value, (list, tuple)):
        return [to_terraform(v) for v in value]
    if isinstance(value, dict):
        return {k: to_terraform(v) for k, v in sorted(value.items())}
    return value


# ------------------------------------------------------------------------------------------------ logical ids

_HIDDEN = "Default"  # left out of the id entirely
_HIDDEN_FROM_HUMAN = "Resource"  # left out of the readable part, kept in the hash
_DISALLOWED = re.compile(r"[^A-Za-z0-9_-]")
_MAX_ID_LEN = 255
_MAX_HUMAN_LEN = 240


def logical_id(components: Sequence[str]) -> str:
    """The engine's logical id of an element from its construct ids below the stack: a single id as it is,
    else the ids joined by `_` (consecutive repeats and `Resource` left out) and an 8-character hash of the
    whole path."""
    parts = [c for c in components if c != _HIDDEN]
    if not parts:
        raise ValueError("a logical id needs at least one construct id below the stack")
    if len(parts) == 1:
        single = _DISALLOWED.sub("", parts[0])
        if len(single) <= _MAX_ID_LEN:
            return single
    digest = hashlib.md5("/".join(parts).encode(), usedforsecurity=False).hexdigest()[:8].upper()
    human: list[str] = []
    for part in parts:
        if not human or not human[-1].endswith(part):
            human.append(part)
    readable = "_".join(_DISALLOWED.sub("", p) for p in human if p != _HIDDEN_FROM_HUMAN)[:_MAX_HUMAN_LEN]
    return f"{readable}_{digest}"


def _construct_id(id_: str) -> str:
    return id_.replace("/", "--")  # what constructs does with a path separator inside an id


def resource_stack(scope: Construct) -> ResourceStack:
    """The ResourceStack `scope` belongs to (known in Python, no engine call)."""
    return _placement(scope)[0]


def _placement(scope: Construct) -> tuple[ResourceStack, tuple[str, ...]]:
    """The stack `scope` belongs to and the construct ids from the stack down to `scope`."""
    if isinstance(scope, ResourceStack):
        return scope, ()
    placed = getattr(scope, "_placement", None)
    if placed is None:
        raise TypeError(
            f"{type(scope).__name__} cannot hold fastscale resources: create them in a ResourceStack, or in a "
            "Group inside one (fastscale.stacks.resources.base)")
    return placed


class Group(Construct):
    """A construct that groups resources (an endpoint, its role, its scaling ...) inside a ResourceStack.

    It remembers where it sits, so the resources inside it know their logical ids without asking node."""

    def __init__(self, scope: Construct, id_: str) -> None:
        stack, path = _placement(scope)
        create_in_engine(self, scope, id_)  # Construct(scope, id_)
        self._placement = (stack, (*path, _construct_id(id_)))


# ------------------------------------------------------------------------------------------------ resources

P = TypeVar("P")
D = TypeVar("D", bound="DataSource[Any]")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Lifecycle:
    """Terraform's `lifecycle` meta-argument (the parts fastscale uses)."""

    create_before_destroy: bool | None = None
    #: Attribute paths Terraform leaves alone after creation (e.g. what auto scaling changes).
    ignore_changes: Sequence[str] | None = None


@functools.cache
def _engine_config(terraform_type: str, provider: str) -> TerraformResourceConfig:
    """What the engine is told about an element: its type and provider, nothing else (meta-arguments are
    rendered in Python too). One immutable value per type, shared, instead of a new struct per element."""
    return TerraformResourceConfig(
        terraform_resource_type=terraform_type, terraform_generator_metadata=GeneratorMetadata(provider_name=provider)
    )


def _register(element: Resource[Any] | DataSource[Any], placed: tuple[ResourceStack, tuple[str, ...]], id_: str) -> str:
    """Record `element` with its stack, for rendering; returns its logical id."""
    stack, path = placed
    stack._elements.append(element)
    return logical_id((*path, _construct_id(id_)))


class Resource(TerraformResource, Generic[P]):
    """Base of every typed resource: subclasses set TYPE and PROVIDER and take a props dataclass."""

    TYPE: ClassVar[str]
    PROVIDER: ClassVar[str]  # "aws" | "awscc"
    #: Where the stack's JSON holds it, and the prefix of a reference to it.
    SECTION: ClassVar[str] = "resource"

    def __init__(
        self,
        scope: Construct,
        id_: str,
        props: P,
        *,
        depends_on: Sequence[Resource[Any]] | None = None,
        lifecycle: Lifecycle | None = None,
    ) -> None:
        placed = _placement(scope)  # refused before the engine is asked anything
        # TerraformResource(scope, id_, terraform_resource_type=..., ...), minus its argument type checks
        create_in_engine(self, scope, id_, _engine_config(self.TYPE, self.PROVIDER))
        self.props = props
        self._depends_on = list(depends_on) if depends_on else []
        self._lifecycle = lifecycle
        self.logical_id = _register(self, placed, id_)

    def attributes(self) -> dict[str, Any]:
        """The Terraform attributes of the props as they are now, with the meta-arguments."""
        out = to_terraform(self.props)
        if self._depends_on:
            out["depends_on"] = [_address(d) for d in self._depends_on]
        if self._lifecycle is not None:
            out["lifecycle"] = to_terraform(self._lifecycle)
        return out

    def attr(self, name: str) -> str:
        """A Terraform reference to one of this resource's attributes (e.g. `arn`)."""
        return f"${{{self.TYPE}.{self.logical_id}.{name}}}"

    @property
    def arn(self) -> str:
        return self.attr("arn")


class DataSource(TerraformDataSource, Generic[P]):
    """Base of every typed data source (`data.<TYPE>`): like `Resource`, its props are its arguments."""

    TYPE: ClassVar[str]
    PROVIDER: ClassVar[str]
    SECTION: ClassVar[str] = "data"

    def __init__(self, scope: Construct, id_: str, props: P) -> None:
        placed = _placement(scope)
        create_in_engine(self, scope, id_, _engine_config(self.TYPE, self.PROVIDER))  # TerraformDataSource(...)
        self.props = props
        self.logical_id = _register(self, placed, id_)

    def attributes(self) -> dict[str, Any]:
        return to_terraform(self.props)

    def attr(self, name: str) -> str:
        """A Terraform reference to one of the data source's attributes (e.g. `account_id`)."""
        return f"${{data.{self.TYPE}.{self.logical_id}.{name}}}"


#: What an engine token looks like inside a string (`${TfToken[TOKEN.12]}`): the engine resolves it only in
#: what it renders itself, so one left in the props would reach the JSON as it is.
ENGINE_TOKEN = "TfToken["


class UnresolvedTokenError(ValueError):
    """Props held an engine token (from `get_string_attribute` and the like) instead of a reference
    written with `attr`."""


class ResourceStack(TerraformStack):
    """A stack that adds its resources' and data sources' attributes to its JSON in one step when the
    engine renders it."""

    def __init__(self, scope: Construct, id_: str) -> None:
        super().__init__(scope, id_)
        self._elements: list[Resource[Any] | DataSource[Any]] = []
        self._shared: dict[str, DataSource[Any]] = {}

    def shared(self, id_: str, make: Callable[[ResourceStack, str], D]) -> D:
        """The stack's one data source with construct id `id_` (directly under the stack), made on first use."""
        found = self._shared.get(id_)
        if found is None:
            found = self._shared[id_] = make(self, id_)
        return found  # type: ignore[return-value]

    @property
    def _resources(self) -> list[Resource[Any]]:
        return [e for e in self._elements if isinstance(e, Resource)]

    def to_terraform(self) -> Any:
        document = super().to_terraform()
        for element in self._elements:
            body = document[element.SECTION][element.TYPE][element.logical_id]
            attributes = element.attributes()
            clash = sorted(body.keys() & attributes.keys())
            if clash:
                raise ValueError(f"{_address(element)}: attributes {clash} are also set by the engine")
            body.update(attributes)
        if ENGINE_TOKEN in json.dumps(document):
            holders = [_address(e) for e in self._elements if ENGINE_TOKEN in json.dumps(e.attributes())]
            raise UnresolvedTokenError(
                f"unresolved engine token ({ENGINE_TOKEN}...]}}) in the stack's JSON, in {', '.join(holders) or 'it'}: "
                "build references with the resource layer's `attr`, not the engine's `get_*_attribute`")
        return document


def _address(element: Resource[Any] | DataSource[Any]) -> str:
    prefix = "data." if element.SECTION == "data" else ""
    return f"{prefix}{element.TYPE}.{element.logical_id}"
