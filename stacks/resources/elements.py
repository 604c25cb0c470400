"""The layer's model of a stack: resources, data sources and outputs in groups, and the stack content
that holds them.

A resource (`Resource[Props]`, a subclass per Terraform type with its `TYPE` and `PROVIDER`) takes a frozen
props dataclass whose field names are the provider's attribute names (the generated classes of
`stacks.resources.generated`); `to_terraform` turns the props into Terraform JSON values, `None` meaning
"not set" and left out. `Resource.add_override` changes a rendered attribute afterwards (`apply_override`).

Every element is made inside a scope (a `StackContent`, a `Group` in one, or an engine stack holding one) and
takes the engine's construct path, logical id (`logical_id`) and address from it, computed the way the engine
computes them (tests/stacks/test_resource_layer.py checks them against the engine). A user's own construct in
the same stack references a resource with the string `attr` returns (a Terraform expression, which the engine
passes through) and depends on it by passing the resource itself in `depends_on` (resources and data sources
implement the engine's public `ITerraformDependable` once the engine is loaded, see `stacks.engine_stack`).

`StackContent` is what one stack holds; `StackContent.rendered_elements` is its resources, data sources,
outputs and import blocks as a fragment of the stack's JSON, literals escaped (`stacks.resources.tokens`):
the fragment both writers put in the document (`stacks.resources.document`, `stacks.engine_stack`).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from fastscale.stacks.resources.tokens import Ref, render

# ------------------------------------------------------------------------------------------------ attributes


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


class OverrideError(ValueError):
    """An override path that does not fit the attributes it is applied to (validation reports it first)."""


def apply_override(attributes: dict[str, Any], path: str, value: Any) -> None:
    """Set `attributes` at the dotted `path` to `value`, in place: a numeric part indexes a list (an existing
    element, or the next one, which is created), any other part a map key (the map created when missing)."""
    parts = path.split(".")
    value = copy.deepcopy(value)  # the attributes never share (and a later override never changes) the caller's data
    node: Any = attributes
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        where = ".".join(parts[: i + 1])
        if isinstance(node, list):
            if not part.isdigit():
                raise OverrideError(f"{path}: {'.'.join(parts[:i])} is a list, so {part!r} must be an index")
            index = int(part)
            if index > len(node):
                raise OverrideError(f"{path}: {where} is past the end of a list of {len(node)}")
            if index == len(node):
                node.append(None)
            if last:
                node[index] = value
            else:
                if node[index] is None:
                    node[index] = [] if parts[i + 1].isdigit() else {}
                node = node[index]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if node.get(part) is None:
                    node[part] = [] if parts[i + 1].isdigit() else {}
                node = node[part]
        else:
            raise OverrideError(f"{path}: {'.'.join(parts[:i])} holds a single value, not attributes")


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


#: Where resources are made: a StackContent, a Group inside one, or an engine stack holding one
#: (`stacks.engine_stack.ResourceStack`, whose `content` is its StackContent).
Scope = Any


def resource_stack(scope: Scope) -> StackContent:
    """The StackContent `scope` belongs to."""
    return _placement(scope)[0]


def _placement(scope: Scope) -> tuple[StackContent, tuple[str, ...]]:
    """The stack content `scope` belongs to and the construct ids from the stack down to `scope`."""
    if isinstance(scope, StackContent):
        return scope, ()
    placed = getattr(scope, "_placement", None)
    if placed is None:
        content = getattr(scope, "content", None)
        if isinstance(content, StackContent):
            return content, ()
        raise TypeError(
            f"{type(scope).__name__} cannot hold fastscale resources: create them in a StackContent or a "
            "ResourceStack, or in a Group inside one (fastscale.stacks.resources.base)")
    return placed


def _place(scope: Scope, id_: str) -> tuple[StackContent, tuple[str, ...]]:
    """Reserve construct id `id_` under `scope`: the stack content and the new element's construct ids."""
    stack, path = _placement(scope)
    placed = (*path, _construct_id(id_))
    if placed in stack._paths:
        where = "/".join((stack.name, *path))
        raise ValueError(f"There is already a Construct with name '{id_}' in {where}")
    stack._paths.add(placed)
    return stack, placed


class Group:
    """Groups resources (an endpoint, its role, its scaling ...) under one construct id inside a stack's
    content: the resources inside it take their logical ids and paths from it."""

    def __init__(self, scope: Scope, id_: str) -> None:
        self._placement = _place(scope, id_)


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


class _Element:
    """What resources and data sources share: their place, their overrides and how they are rendered."""

    TYPE: ClassVar[str]
    PROVIDER: ClassVar[str]  # "aws" | "awscc" | "terraform"
    SECTION: ClassVar[str]  # where the stack's JSON holds it: "resource" | "data"
    props: Any

    def _register(self, scope: Scope, id_: str) -> None:
        stack, placed = _place(scope, id_)  # refused before anything is recorded
        self._stack, self._path = stack, placed
        self._overrides: list[tuple[str, Any]] = []
        self.logical_id = logical_id(placed)
        stack._elements.append(self)  # type: ignore[arg-type]  # only Resource and DataSource register

    @property
    def path(self) -> str:
        """The construct path (`<stack>/<group>/<id>`), as the engine's metadata names it."""
        return "/".join((self._stack.name, *self._path))

    @property
    def address(self) -> str:
        """The element's address (`<type>.<logical id>`, `data.` first for a data source), as `depends_on`
        and `replace_triggered_by` name it."""
        return f"{'data.' if self.SECTION == 'data' else ''}{self.TYPE}.{self.logical_id}"

    @property
    def fqn(self) -> str:
        """The address: what the engine's `ITerraformDependable` reads when a user's construct lists this
        element in its `depends_on`."""
        return self.address

    def add_override(self, path: str, value: Any) -> None:
        """Set the attribute at the dotted `path` (`production_variants.0.enable_ssm_access`) to `value`, over
        what the props (and the meta-arguments) write, as the engine's `addOverride` would. Numeric parts
        index lists; missing maps are created (`apply_override`). `value` is data like props: every plain
        `str` in it, nested ones included, is a literal, escaped by `render` with the rest of the attributes;
        a `Ref` stays a reference."""
        self._overrides.append((path, value))

    def _base_attributes(self) -> dict[str, Any]:
        raise NotImplementedError

    def attributes(self) -> dict[str, Any]:
        """The Terraform attributes of the props as they are now, with the meta-arguments and overrides."""
        out = self._base_attributes()
        for path, value in self._overrides:
            apply_override(out, path, value)
        return out

    def rendered(self) -> dict[str, Any]:
        """The element's body in the stack's JSON: the engine's metadata and the rendered attributes."""
        body: dict[str, Any] = {"//": {"metadata": {"path": self.path, "uniqueId": self.logical_id}}}
        body.update(render(self.attributes()))
        return body


class Resource(_Element, Generic[P]):
    """Base of every typed resource: subclasses set TYPE and PROVIDER and take a props dataclass."""

    SECTION: ClassVar[str] = "resource"

    def __init__(
        self,
        scope: Scope,
        id_: str,
        props: P,
        *,
        depends_on: Sequence[Resource[Any]] | None = None,
        lifecycle: Lifecycle | None = None,
    ) -> None:
        self.props = props
        self._depends_on = list(depends_on) if depends_on else []
        self._lifecycle = lifecycle
        self._import_id: str | None = None
        self._register(scope, id_)

    def import_from(self, id_: str) -> None:
        """Adopt the live resource `id_` (its import ID, as the provider documents it): the stack gets an
        import block for this resource, so the first apply reads it into the state instead of creating it.
        `id_` is a literal, escaped like every other string."""
        self._import_id = id_

    def _base_attributes(self) -> dict[str, Any]:
        out: dict[str, Any] = to_terraform(self.props)
        if self._depends_on:
            out["depends_on"] = [d.address for d in self._depends_on]
        if self._lifecycle is not None:
            out["lifecycle"] = to_terraform(self._lifecycle)
        return out

    def attr(self, name: str) -> Ref:
        """A Terraform reference to one of this resource's attributes (e.g. `arn`): a string a user's own
        construct in the same stack can take as it is (the engine passes it through)."""
        return Ref(f"${{{self.TYPE}.{self.logical_id}.{name}}}")

    @property
    def arn(self) -> Ref:
        return self.attr("arn")


class DataSource(_Element, Generic[P]):
    """Base of every typed data source (`data.<TYPE>`): like `Resource`, its props are its arguments."""

    SECTION: ClassVar[str] = "data"

    def __init__(self, scope: Scope, id_: str, props: P) -> None:
        self.props = props
        self._register(scope, id_)

    def _base_attributes(self) -> dict[str, Any]:
        out: dict[str, Any] = to_terraform(self.props)
        return out

    def attr(self, name: str) -> Ref:
        """A Terraform reference to one of the data source's attributes (e.g. `account_id`)."""
        return Ref(f"${{data.{self.TYPE}.{self.logical_id}.{name}}}")


class Output:
    """A Terraform output of the stack, rendered with the stack's resources (literals escaped)."""

    def __init__(self, scope: Scope, id_: str, *, value: Any, description: str | None = None,
                 static_id: bool = False) -> None:
        stack, placed = _place(scope, id_)
        self._path = placed
        self.value, self.description = value, description
        self.logical_id = _construct_id(id_) if static_id else logical_id(placed)
        stack._outputs.append(self)

    def rendered(self) -> dict[str, Any]:
        body: dict[str, Any] = {"value": render(self.value)}
        if self.description is not None:
            body["description"] = render(self.description)
        return body


# ------------------------------------------------------------------------------------------------ stack content


@dataclasses.dataclass(frozen=True)
class ProviderBlock:
    """A provider of the stack: its `required_providers` entry and its (rendered) settings."""

    name: str
    source: str
    version: str
    settings: dict[str, Any]


class StackContent:
    """What one stack holds, in Python: its resources, data sources and outputs (in the order they were
    made), its providers, its backend (`("local" | "s3", settings)`) and its stack-level overrides (each
    `(dot path, value)`, applied the way the engine's `TerraformStack.add_override` applies them)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._elements: list[Resource[Any] | DataSource[Any]] = []
        self._outputs: list[Output] = []
        self._shared: dict[str, DataSource[Any]] = {}
        self._paths: set[tuple[str, ...]] = set()
        self.providers: list[ProviderBlock] = []
        self.backend: tuple[str, dict[str, Any]] | None = None
        self.stack_overrides: list[tuple[str, Any]] = []

    def shared(self, id_: str, make: Callable[[StackContent, str], D]) -> D:
        """The stack's one data source with construct id `id_` (directly under the stack), made on first use."""
        found = self._shared.get(id_)
        if found is None:
            found = self._shared[id_] = make(self, id_)
        return found  # type: ignore[return-value]

    @property
    def elements(self) -> list[Resource[Any] | DataSource[Any]]:
        """Every resource and data source, in the order they were made."""
        return list(self._elements)

    @property
    def _resources(self) -> list[Resource[Any]]:
        return [e for e in self._elements if isinstance(e, Resource)]

    def add_override(self, path: str, value: Any) -> None:
        """A stack-level override (`variable`, `terraform.backend.s3.use_lockfile` ...), applied by the
        engine stack with its own `add_override` and by `render_document` the same way."""
        self.stack_overrides.append((path, value))

    def rendered_elements(self) -> dict[str, Any]:
        """The resources, data sources and outputs as a fragment of the stack's JSON, with the outputs'
        entries of the engine's `//` metadata."""
        fragment: dict[str, Any] = {}
        for element in self._elements:
            fragment.setdefault(element.SECTION, {}).setdefault(element.TYPE, {})[element.logical_id] = \
                element.rendered()
        imports: list[dict[str, Any]] = []
        imported: dict[str, list[str]] = {}  # the engine's metadata: the imported resources' logical ids by type
        for r in self._resources:
            if r._import_id is not None:
                imports.append({"id": render(r._import_id), "to": r.address})
                imported.setdefault(r.TYPE, []).append(r.logical_id)
        if imports:
            fragment["import"] = imports
        outputs: dict[str, Any] = {}
        for output in self._outputs:
            fragment.setdefault("output", {})[output.logical_id] = output.rendered()
            node = outputs
            for part in (self.name, *output._path[:-1]):
                node = node.setdefault(part, {})
            node[output._path[-1]] = output.logical_id
        fragment["//"] = {"outputs": outputs}
        if imported:
            fragment["//"]["metadata"] = {"imports": imported}
        return fragment
