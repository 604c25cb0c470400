"""The thin typed resource layer: frozen dataclasses of Terraform attributes, synthesized by cdktf.

Field names are the provider's own attribute names, so the synthesized JSON can be checked directly
against the provider schemas (tests/contract). Nested blocks are dataclasses too; lists of blocks are lists.
`None` means "not set" and is left out of the JSON.

Every call between Python and the engine's node process costs about a millisecond, so the number of calls
does not grow with the stack:

- reference tokens (`${aws_iam_role.<logical id>.arn}`) are written in Python from the logical id, which
  `logical_id` computes the way the engine does (`tests/stacks/test_resource_layer.py` checks it against
  the engine for every resource of every example);
- elements (grouping constructs, resources, data sources, outputs) are not created in the engine one call
  each: the `ResourceStack` collects them and creates all that wait in one call (`stacks.elements`), the
  first time the engine needs any of them or the stack, and at the latest before synthesis;
- attributes and the meta-arguments (`depends_on`, `lifecycle`) are not answered per resource through
  callbacks (node asks each resource twice): each time the engine renders the stack it asks the stack's
  Python side once, and gets every element's attributes, from the props as they are at that moment, as one
  JSON text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from fastscale.stacks.elements import Deferred, DeferredMeta, WaitingRoom
from fastscale.stacks.engine import Construct, TerraformDataSource, TerraformOutput, TerraformResource, TerraformStack


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


class Group(Deferred, Construct, metaclass=DeferredMeta):
    """A construct that groups resources (an endpoint, its role, its scaling ...) inside a ResourceStack.

    It remembers where it sits, so the resources inside it know their logical ids without asking node."""

    KIND = "group"

    def __init__(self, scope: Construct, id_: str) -> None:
        stack, path = _placement(scope)
        self._placement = (stack, (*path, _construct_id(id_)))
        self.defer(stack, scope, id_)  # Construct(scope, id_), with the stack's other waiting elements


# ------------------------------------------------------------------------------------------------ resources

P = TypeVar("P")
D = TypeVar("D", bound="DataSource[Any]")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Lifecycle:
    """Terraform's `lifecycle` meta-argument (the parts fastscale uses)."""

    create_before_destroy: bool | None = None
    #: Attribute paths Terraform leaves alone after creation (e.g. what auto scaling changes).
    ignore_changes: Sequence[str] | None = None
    #: Addresses (`terraform_data.<id>`, see `Resource.address`) whose update or replacement replaces this
    #: resource too, in Terraform's own ordering.
    replace_triggered_by: Sequence[str] | None = None


def _register(element: Resource[Any] | DataSource[Any], scope: Construct, id_: str) -> str:
    """Record `element` with its stack, for rendering and for creation in the engine (the engine is told only
    its type and provider: attributes and meta-arguments are rendered in Python); returns its logical id."""
    stack, path = _placement(scope)  # refused before anything is recorded
    stack._elements.append(element)
    element.defer(stack, scope, id_)
    return logical_id((*path, _construct_id(id_)))


class Resource(Deferred, TerraformResource, Generic[P], metaclass=DeferredMeta):
    """Base of every typed resource: subclasses set TYPE and PROVIDER and take a props dataclass."""

    TYPE: ClassVar[str]
    PROVIDER: ClassVar[str]  # "aws" | "awscc"
    #: Where the stack's JSON holds it, and the prefix of a reference to it.
    SECTION: ClassVar[str] = "resource"
    KIND = "resource"

    def __init__(
        self,
        scope: Construct,
        id_: str,
        props: P,
        *,
        depends_on: Sequence[Resource[Any]] | None = None,
        lifecycle: Lifecycle | None = None,
    ) -> None:
        self.props = props
        self._depends_on = list(depends_on) if depends_on else []
        self._lifecycle = lifecycle
        self.logical_id = _register(self, scope, id_)  # TerraformResource(scope, id_, ...), with the stack's others

    def engine_config(self) -> list[Any]:
        return [self.TYPE, self.PROVIDER, None]

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
    def address(self) -> str:
        """The resource's address (`<type>.<logical id>`), as `depends_on` and `replace_triggered_by` name it."""
        return _address(self)

    @property
    def arn(self) -> str:
        return self.attr("arn")


class DataSource(Deferred, TerraformDataSource, Generic[P], metaclass=DeferredMeta):
    """Base of every typed data source (`data.<TYPE>`): like `Resource`, its props are its arguments."""

    TYPE: ClassVar[str]
    PROVIDER: ClassVar[str]
    SECTION: ClassVar[str] = "data"
    KIND = "data"

    def __init__(self, scope: Construct, id_: str, props: P) -> None:
        self.props = props
        self.logical_id = _register(self, scope, id_)  # TerraformDataSource(scope, id_, ...), with the others

    def engine_config(self) -> list[Any]:
        return [self.TYPE, self.PROVIDER, None]

    def attributes(self) -> dict[str, Any]:
        return to_terraform(self.props)

    def attr(self, name: str) -> str:
        """A Terraform reference to one of the data source's attributes (e.g. `account_id`)."""
        return f"${{data.{self.TYPE}.{self.logical_id}.{name}}}"


class Output(Deferred, TerraformOutput, metaclass=DeferredMeta):
    """A Terraform output of the stack (the engine's `TerraformOutput`, created with the stack's other elements)."""

    KIND = "output"

    def __init__(self, scope: Construct, id_: str, *, value: Any, description: str | None = None,
                 static_id: bool = False) -> None:
        stack = resource_stack(scope)
        self._config: dict[str, Any] = {"value": value, "staticId": static_id}
        if description is not None:
            self._config["description"] = description
        self.defer(stack, scope, id_)

    def engine_config(self) -> list[Any]:
        return [None, None, self._config]


#: What an engine token looks like inside a string (`${TfToken[TOKEN.12]}`): the engine resolves it only in
#: what it renders itself, so one left in the props would reach the JSON as it is.
ENGINE_TOKEN = "TfToken["


class UnresolvedTokenError(ValueError):
    """Props held an engine token (from `get_string_attribute` and the like) instead of a reference
    written with `attr`."""


class ResourceStack(WaitingRoom, TerraformStack):
    """A stack that adds its resources' and data sources' attributes to its JSON in one step when the
    engine renders it."""

    def __init__(self, scope: Construct, id_: str) -> None:
        super().__init__(scope, id_)
        self._waiting = []
        self._elements: list[Resource[Any] | DataSource[Any]] = []
        self._shared: dict[str, DataSource[Any]] = {}
        self.attach_to_engine(self._attributes_json)

    @property
    def __jsii_ref__(self) -> Any:
        self.create_waiting()  # the engine never sees the stack without the elements made so far
        return self._stack_ref

    @__jsii_ref__.setter
    def __jsii_ref__(self, ref: Any) -> None:
        self._stack_ref = ref

    def shared(self, id_: str, make: Callable[[ResourceStack, str], D]) -> D:
        """The stack's one data source with construct id `id_` (directly under the stack), made on first use."""
        found = self._shared.get(id_)
        if found is None:
            found = self._shared[id_] = make(self, id_)
        return found  # type: ignore[return-value]

    @property
    def _resources(self) -> list[Resource[Any]]:
        return [e for e in self._elements if isinstance(e, Resource)]

    def _attributes_json(self) -> str:
        """What the engine adds to the stack's JSON when it renders it (see `elements.render_attributes`)."""
        rendered = [[e.SECTION, e.TYPE, e.logical_id, e.attributes()] for e in self._elements]
        text = json.dumps(rendered)
        if ENGINE_TOKEN in text:
            holders = [_address(e) for e in self._elements if ENGINE_TOKEN in json.dumps(e.attributes())]
            raise UnresolvedTokenError(
                f"unresolved engine token ({ENGINE_TOKEN}...]}}) in the stack's JSON, in {', '.join(holders)}: "
                "build references with the resource layer's `attr`, not the engine's `get_*_attribute`")
        return text


def _address(element: Resource[Any] | DataSource[Any]) -> str:
    prefix = "data." if element.SECTION == "data" else ""
    return f"{prefix}{element.TYPE}.{element.logical_id}"
