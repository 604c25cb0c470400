"""The thin typed resource layer: frozen dataclasses of Terraform attributes, rendered to Terraform JSON.

Field names are the provider's own attribute names, so the synthesized JSON can be checked directly
against the provider schemas (tests/contract). Nested blocks are dataclasses too; lists of blocks are lists.
`None` means "not set" and is left out of the JSON.

The layer is plain Python: it imports neither jsii nor the engine. A stack's content (`StackContent`: its
resources, data sources, outputs, providers, backend and stack-level settings) is recorded here and rendered
here, into the Terraform JSON the engine would write, in one of two ways:

- `render_document` / `write_document`: the whole `cdk.tf.json`, byte for byte as the engine writes it
  (json-stable-stringify's layout), without the engine: what `fastscale synth` and `stacks.testing.synth` use;
- `stacks.engine_stack.ResourceStack`: a real `TerraformStack` of the engine (what `cdktf synth`, a user's
  `App` and the engine's `Testing.synth` use) whose providers and backend are real engine constructs, and whose
  public `to_terraform` adds the resources, data sources and outputs rendered here to the engine's document.

tests/stacks/test_engine_parity.py checks that both give the same bytes for every example, on either engine.
Logical ids (`logical_id`) and reference tokens (`${aws_iam_role.<logical id>.arn}`) are computed here the
way the engine computes them (tests/stacks/test_resource_layer.py checks them against the engine).

A user's own construct in the same stack references a resource with the string `attr` returns (a Terraform
expression, which the engine passes through) and depends on it by passing the resource itself in
`depends_on` (resources and data sources implement the engine's public `ITerraformDependable` once the
engine is loaded, see `stacks.engine_stack`). `Resource.add_override` changes a rendered attribute.

Literals and references. Terraform evaluates `${...}` and `%{...}` inside every string of the JSON, so a
string from the config would run as a Terraform expression (`${file("...")}`). This layer is the one place
where strings are rendered, and there every plain `str` is a literal: `render` escapes it for
Terraform's template syntax (`escape_template`: `${` -> `$${`, `%{` -> `%%{`, map keys too), so AWS
receives exactly the text. Only a `Ref` stays as it is: the references `attr` / `arn` write. A string that
mixes references with literal text (an ARN with the account's reference, a JSON policy holding one) is an
`Interpolated`, made with `tf_format`, `json_text` or `+`, whose literal parts are escaped and whose
references are not. Both are `str` subclasses, so props keep their types; an f-string, `%`, `.join` or
`json.dumps` turns them back into a plain (literal) `str`. Resources, data sources and outputs reach the
engine's document after the engine resolved its tokens, so nothing in them is ever resolved. Strings the
engine renders itself (provider settings) go through `engine_literal`, which also refuses the engine's own
token syntax, since the engine would resolve it even escaped; the backend block, which Terraform reads without evaluating it (JSON strings
are literal there), goes through `engine_verbatim`: not escaped, the token syntax refused all the same.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import os
import re
import secrets
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

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


def _set_keys(target: dict[str, Any], keys: Sequence[str], value: Any) -> None:
    """What the engine's `add_override("a.b.c", value)` does to its overrides: a deep set along the keys,
    making objects where there are none."""
    for key in keys[:-1]:
        inner = target.get(key)
        if not isinstance(inner, dict):
            inner = target[key] = {}
        target = inner
    target[keys[-1]] = value


def deep_merge(target: dict[str, Any], source: dict[str, Any]) -> dict[str, Any]:
    """`source` merged into `target` the way the engine merges a stack's fragments and overrides: objects
    recursively, anything else (lists included) replaced."""
    for key, value in source.items():
        if isinstance(value, dict):
            inner = target.get(key)
            if not isinstance(inner, dict):
                inner = target[key] = {}
            deep_merge(inner, value)
        else:
            target[key] = value
    return target


def render_document(content: StackContent, engine_version: str) -> dict[str, Any]:
    """The stack's whole Terraform JSON, as the engine (at `engine_version`) builds it from a
    `ResourceStack` of `content` with nothing else in it."""
    metadata: dict[str, Any] = {"version": engine_version, "stackName": content.name, "backend": "local"}
    overrides: dict[str, Any] = {}
    for path, value in content.stack_overrides:
        _set_keys(overrides, path.split("."), value)
    if overrides:
        metadata["overrides"] = {"stack": list(overrides)}
    doc: dict[str, Any] = {}
    terraform: dict[str, Any] = {}
    for provider in content.providers:
        terraform.setdefault("required_providers", {})[provider.name] = {"source": provider.source,
                                                                        "version": provider.version}
        doc.setdefault("provider", {})[provider.name] = [provider.settings]
    # Without a backend the engine adds a local one, its state file in the working directory.
    kind, settings = content.backend or ("local", {"path": os.path.join(os.getcwd(), f"terraform.{content.name}.tfstate")})
    metadata["backend"] = kind
    terraform["backend"] = {kind: {k: v for k, v in settings.items() if v is not None}}
    doc["terraform"] = terraform
    deep_merge(doc, content.rendered_elements())
    doc["//"]["metadata"] = {**doc["//"].get("metadata", {}), **metadata}
    return deep_merge(doc, overrides)


# ------------------------------------------------------------------------------------------------ the JSON text


def _js_number(value: float) -> str:
    """A number as JavaScript's `JSON.stringify` writes it (shortest digits; exponent below 1e-6 and from 1e21)."""
    if value != value or value in (float("inf"), float("-inf")):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    match = re.fullmatch(r"-?(\d+)(?:\.(\d+))?(?:e([+-]\d+))?", repr(value))
    assert match is not None
    whole, frac, exp = match.group(1), match.group(2) or "", int(match.group(3) or 0)
    digits, point = whole + frac, len(whole) + exp
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{sign}{mantissa}e{'+' if e > 0 else '-'}{abs(e)}"


_SURROGATE = re.compile("[\ud800-\udfff]")


def _js_string(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def _utf16_order(key: str) -> bytes:
    return key.encode("utf-16-be", "surrogatepass")  # JavaScript sorts keys by UTF-16 code units


def stable_json(value: Any, level: int = 0, *, collapse_empty: bool = False) -> str:
    """`value` as the engine writes its files, with two spaces: keys sorted, one item per line. An empty list
    or object is `[]` / `{}` with `collapse_empty` (CDK Terrain's safe-stable-stringify), else still on two
    lines (CDK for Terraform's json-stable-stringify)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, str):
        return _js_string(value)
    indent = "\n" + "  " * level
    item_indent = indent + "  "
    if isinstance(value, (list, tuple)):
        if collapse_empty and not value:
            return "[]"
        return "[" + ",".join(item_indent + stable_json(v, level + 1, collapse_empty=collapse_empty)
                              for v in value) + indent + "]"
    if isinstance(value, dict):
        if collapse_empty and not value:
            return "{}"
        items = (item_indent + _js_string(k) + ": " + stable_json(value[k], level + 1, collapse_empty=collapse_empty)
                 for k in sorted(value, key=_utf16_order))
        return "{" + ",".join(items) + indent + "}"
    raise TypeError(f"{type(value).__name__} is not a JSON value")
