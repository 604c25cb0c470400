"""Literals and references: the one place where the layer's strings become Terraform's.

Terraform evaluates `${...}` and `%{...}` inside every string of the JSON, so a string from the config would
run as a Terraform expression (`${file("...")}`). Every plain `str` in props is therefore a literal: `render`
escapes it for Terraform's template syntax (`escape_template`: `${` -> `$${`, `%{` -> `%%{`, map keys too),
so AWS receives exactly the text. Only a `Ref` stays as it is: the references `attr` / `arn` of a resource
write. A string that mixes references with literal text (an ARN with the account's reference, a JSON policy
holding one) is an `Interpolated`, made with `tf_format`, `json_text` or `+`, whose literal parts are escaped
and whose references are not. Both are `str` subclasses, so props keep their types; an f-string, `%`, `.join`
or `json.dumps` turns them back into a plain (literal) `str`.

Resources, data sources and outputs reach the engine's document after the engine resolved its tokens, so
nothing in them is ever resolved. Strings the engine renders itself (provider settings) go through
`engine_literal`, which also refuses the engine's own token syntax, since the engine would resolve it even
escaped; the backend block, which Terraform reads without evaluating it (JSON strings are literal there),
goes through `engine_verbatim`: not escaped, the token syntax refused all the same.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from typing import Any

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
