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

Literals and references. Terraform evaluates `${...}` and `%{...}` inside every string of the JSON, so a
string from the config would run as a Terraform expression (`${file("...")}`). This layer is the one place
where strings are handed to the engine, and there every plain `str` is a literal: `render` escapes it for
Terraform's template syntax (`escape_template`: `${` -> `$${`, `%{` -> `%%{`, map keys too), so AWS
receives exactly the text. Only a `Ref` stays as it is: the references `attr` / `arn` write. A string that
mixes references with literal text (an ARN with the account's reference, a JSON policy holding one) is an
`Interpolated`, made with `tf_format`, `json_text` or `+`, whose literal parts are escaped and whose
references are not. Both are `str` subclasses, so props keep their types; an f-string, `%`, `.join` or
`json.dumps` turns them back into a plain (literal) `str`. Strings the engine renders itself (providers,
outputs) go through `engine_literal`, which also refuses the engine's own token syntax, since the engine
would resolve it even escaped; the backend block, which Terraform reads without evaluating it (JSON strings
are literal there), goes through `engine_verbatim`: not escaped, the token syntax refused all the same.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import re
import secrets
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from fastscale.stacks.elements import Deferred, DeferredMeta, WaitingRoom
from fastscale.stacks.engine import Construct, TerraformDataSource, TerraformOutput, TerraformResource, TerraformStack

# ------------------------------------------------------------------------------------------------ literals

#: What an engine token looks like inside a string (`${TfToken[TOKEN.12]}`).
ENGINE_TOKEN = "TfToken["


def escape_template(text: str) -> str:
    """`text` as a Terraform template that evaluates to exactly `text`: `${` becomes `$${` and `%{`
    becomes `%%{` (Terraform's escapes; a `$` or `%` not followed by `{` is already literal)."""
    return text.replace("${", "$${").replace("%{", "%%{")


class Ref(str):
    """A Terraform reference written by the layer (`${aws_iam_role.<id>.arn}`): rendered as it is.

    Made only by `Resource.attr` / `DataSource.attr` (and `arn`); any other `str` is a literal."""

    def __add__(self, other: str) -> Interpolated:
        return Interpolated._of((self, other))

    def __radd__(self, other: str) -> Interpolated:
        return Interpolated._of((other, self))


class Interpolated(str):
    """A string of literal parts and references: its text is their concatenation, and `render` escapes
    the literal parts only. Made with `tf_format`, `json_text` or `+` on a `Ref`."""

    parts: tuple[str, ...]

    @classmethod
    def _of(cls, parts: Sequence[str]) -> Interpolated:
        flat: list[str] = []
        for part in parts:
            flat.extend(part.parts if isinstance(part, Interpolated) else (part,))
        made = cls("".join(flat))
        made.parts = tuple(flat)
        return made

    def __add__(self, other: str) -> Interpolated:
        return Interpolated._of((self, other))

    def __radd__(self, other: str) -> Interpolated:
        return Interpolated._of((other, self))

    def rendered(self) -> str:
        return "".join(p if isinstance(p, Ref) else escape_template(p) for p in self.parts)


def tf_format(pattern: str, *values: str) -> Interpolated:
    """`pattern` with each `{}` replaced by the next value, keeping references as references:
    `tf_format("arn:aws:sagemaker:{}:{}:*", region, account_ref)`. The pattern itself is literal text."""
    pieces = pattern.split("{}")
    if len(pieces) != len(values) + 1:
        raise ValueError(f"{pattern!r} has {len(pieces) - 1} placeholders for {len(values)} values")
    parts: list[str] = [pieces[0]]
    for value, piece in zip(values, pieces[1:], strict=True):
        parts += [value, piece]
    return Interpolated._of(parts)


def json_text(document: Any, **dumps: Any) -> str:
    """`json.dumps(document, **dumps)`, except that references inside `document`'s strings stay references
    (an `Interpolated` when there are any, so `render` escapes only the document's literal text)."""
    nonce = secrets.token_hex(8)
    found: list[str] = []

    def mark(value: Any) -> Any:
        if isinstance(value, (Ref, Interpolated)):
            found.append(value)
            return f"\x00{nonce}:{len(found) - 1}\x00"
        if isinstance(value, dict):
            return {mark(k): mark(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [mark(v) for v in value]
        return value

    text = json.dumps(mark(document), **dumps)
    if not found:
        return text
    # json.dumps writes the marker's NUL characters as \u0000: the marker cannot occur in any other text.
    marker = re.compile(r"\\u0000" + nonce + r":(\d+)\\u0000")
    parts: list[str] = []
    last = 0
    for match in marker.finditer(text):
        parts.append(text[last:match.start()])
        value = found[int(match.group(1))]
        # A value inside a JSON string: its literal parts need JSON's escaping, its references never do.
        if isinstance(value, Interpolated):
            parts += [p if isinstance(p, Ref) else json.dumps(p)[1:-1] for p in value.parts]
        else:
            parts.append(value)
        last = match.end()
    parts.append(text[last:])
    return Interpolated._of(parts)


def render(value: Any) -> Any:
    """Terraform JSON values with every literal string escaped and every reference kept (see the module
    docstring): what the layer hands to the engine."""
    if isinstance(value, Ref):
        return str(value)
    if isinstance(value, Interpolated):
        return value.rendered()
    if isinstance(value, str):
        return escape_template(value)
    if isinstance(value, dict):
        return {render(k): render(v) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v) for v in value]
    return value


class EngineTokenError(ValueError):
    """A literal handed to the engine itself holds the engine's token syntax, which the engine would resolve
    even escaped. Validation refuses such values (rule FS074) before synthesis."""


def engine_verbatim(value: Any, where: str) -> Any:
    """`value` unchanged, for settings the engine renders itself and Terraform reads without evaluating
    them (the backend block: HCL takes JSON strings literally there); the engine's token syntax refused."""
    if ENGINE_TOKEN in json.dumps(value):
        raise EngineTokenError(
            f"{where}: a value holds the CDK engine's token syntax ({ENGINE_TOKEN}...]}}), which the engine "
            "would resolve instead of passing it on literally")
    return value


def engine_literal(value: Any, where: str) -> Any:
    """`render(value)` for what the engine renders itself and Terraform evaluates (provider settings,
    outputs): the same escaping, and the engine's token syntax refused (see `engine_verbatim`)."""
    return engine_verbatim(render(value), where)


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


class UnresolvedTokenError(ValueError):
    """An engine token was asked for (`get_string_attribute` and the like) instead of a reference written
    with `attr`: in the props it would be a plain string, so a literal, never resolved."""


class _NoEngineTokens:
    """Mixin of resources and data sources: the engine's token getters are refused (see `UnresolvedTokenError`)."""

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise UnresolvedTokenError(
            f"{type(self).__name__}: the engine's attribute tokens cannot be used in props (a plain string is a "
            "literal): build references with the resource layer's `attr`")

    get_string_attribute = get_list_attribute = get_number_attribute = get_boolean_attribute = _refuse
    get_string_map_attribute = get_number_list_attribute = get_number_map_attribute = _refuse
    get_boolean_map_attribute = get_any_map_attribute = interpolation_for_attribute = _refuse


class Resource(_NoEngineTokens, Deferred, TerraformResource, Generic[P], metaclass=DeferredMeta):
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
        self._overrides: list[tuple[str, Any]] = []
        self.logical_id = _register(self, scope, id_)  # TerraformResource(scope, id_, ...), with the stack's others

    def engine_config(self) -> list[Any]:
        return [self.TYPE, self.PROVIDER, None]

    def attributes(self) -> dict[str, Any]:
        """The Terraform attributes of the props as they are now, with the meta-arguments."""
        out = to_terraform(self.props)
        for path, value in self._overrides:
            apply_override(out, path, value)
        if self._depends_on:
            out["depends_on"] = [_address(d) for d in self._depends_on]
        if self._lifecycle is not None:
            out["lifecycle"] = to_terraform(self._lifecycle)
        return out

    def add_override(self, path: str, value: Any) -> None:
        """Set the attribute at the dotted `path` (`production_variants.0.enable_ssm_access`) to `value`, over
        what the props write: the engine's `addOverride`, done in Python because the layer hands the engine
        the attributes itself (an engine override of an attribute the props set would clash with them).
        Numeric parts index lists; missing maps are created. `value` is data like props: every plain `str`
        in it, nested ones included, is a literal, escaped by `render` with the rest of the attributes."""
        self._overrides.append((path, value))

    def attr(self, name: str) -> Ref:
        """A Terraform reference to one of this resource's attributes (e.g. `arn`)."""
        return Ref(f"${{{self.TYPE}.{self.logical_id}.{name}}}")

    @property
    def address(self) -> str:
        """The resource's address (`<type>.<logical id>`), as `depends_on` and `replace_triggered_by` name it."""
        return _address(self)

    @property
    def arn(self) -> Ref:
        return self.attr("arn")


class DataSource(_NoEngineTokens, Deferred, TerraformDataSource, Generic[P], metaclass=DeferredMeta):
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

    def attr(self, name: str) -> Ref:
        """A Terraform reference to one of the data source's attributes (e.g. `account_id`)."""
        return Ref(f"${{data.{self.TYPE}.{self.logical_id}.{name}}}")


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
        # The engine renders outputs itself: literals escaped, its token syntax refused.
        return [None, None, engine_literal(self._config, f"output {self._id}")]


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
        """What the engine adds to the stack's JSON when it renders it (see `elements.render_attributes`):
        added after the engine resolved its own tokens, so the escaped literals reach the file as they are."""
        return json.dumps([[e.SECTION, e.TYPE, e.logical_id, render(e.attributes())] for e in self._elements])


def _address(element: Resource[Any] | DataSource[Any]) -> str:
    prefix = "data." if element.SECTION == "data" else ""
    return f"{prefix}{element.TYPE}.{element.logical_id}"
