"""Reading a config file: safe YAML, schema validation, and problems reported with their dotted path, line
and a closest-name suggestion; the JSON Schema for editors."""

from __future__ import annotations

import difflib
import functools
import json
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import (
    BaseModel,
    ValidationError,
)

from fastscale.infra.base.safe_files import SpecialFileError, read_bytes
from fastscale.infra.config import safe_yaml
from fastscale.infra.config.root import FastscaleConfig
from fastscale.infra.config.secrets import redact as mask

if TYPE_CHECKING:
    from pydantic_core import ErrorDetails

# --------------------------------------------------------------------------------------------- loading


#: Schema problems listed per file; a generated file can have thousands, and listing them all helps no one.
MAX_PROBLEMS_REPORTED = 50


@dataclass(frozen=True)
class ConfigProblem:
    """One reason a file could not be read as a config: where (dotted path and line) and why."""

    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}: " if self.line else ""
        return f"{where}{self.path or '<root>'}: {self.message}"


class ConfigError(Exception):
    """The file is missing, not YAML, or does not match the schema. Carries every problem found."""

    def __init__(self, source: str, problems: list[ConfigProblem], data: dict[str, Any] | None = None):
        self.source = source
        self.problems = problems
        #: the YAML mapping that did not match the schema (None when the file could not be read as one):
        #: what ``infra.config.partial`` can still hand to the rules
        self.data = data
        super().__init__(f"{source}: " + "; ".join(str(p) for p in problems))


def format_path(loc: tuple[Any, ...]) -> str:
    """('endpoints', 0, 'instances', 'min') -> 'endpoints[0].instances.min'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _line_index(text: str) -> dict[tuple[Any, ...], int]:
    """Map every key path in the YAML document to its 1-based line, so schema errors can name the line.

    Built by the bounded loader: a file that could expand (aliases) or recurse without end gets no index."""
    return safe_yaml.line_index_of(text)


def parse_path(path: str) -> tuple[Any, ...]:
    """'endpoints[0].instances.min' -> ('endpoints', 0, 'instances', 'min'): the inverse of format_path."""
    found = re.findall(r'([^.\[\]"]+)|\[(\d+)\]|\["([^"]*)"\]', path)  # key, [index] or ["quoted key"]
    return tuple(int(index) if index else quoted or key for key, index, quoted in found)


class LineMap:
    """Where each key path of a YAML text is: the line schema errors and rule findings name."""

    def __init__(self, text: str):
        self._index = _line_index(text)

    def line_of(self, path: str) -> int | None:
        """The line of ``path`` (dotted, as findings spell it), or of its nearest parent in the text."""
        loc = parse_path(path)
        return _nearest_line(self._index, loc) if loc else None


def _nearest_line(index: dict[tuple[Any, ...], int], loc: tuple[Any, ...]) -> int | None:
    for cut in range(len(loc), -1, -1):
        if loc[:cut] in index:
            return index[loc[:cut]]
    return None


def _clean_loc(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    # pydantic inserts the discriminator tag ('s3' / 'local') and function names into locations;
    # users only know their own keys.
    return tuple(p for p in loc if not (isinstance(p, str) and (p in {"local", "s3"} or p.startswith("function-"))))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The config sections a field's type can hold (through lists, optionals, unions, annotations)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys the schema allows in the mapping at ``loc`` (a cleaned location, list indexes included)."""
    models: list[type[BaseModel]] = [FastscaleConfig]
    for part in loc:
        if isinstance(part, int):
            continue  # an item of a list: the list field already named its item type
        fields = [f for m in models for name, f in m.model_fields.items() if part in (name, f.alias)]
        models = [m for f in fields for m in _models_in(f.annotation)]
    return sorted({key for m in models for name, f in m.model_fields.items() for key in (f.alias or name,)})


def _did_you_mean(loc: tuple[Any, ...]) -> str:
    if not loc or not isinstance(loc[-1], str):
        return ""
    close = difflib.get_close_matches(loc[-1], known_keys(loc[:-1]), n=3, cutoff=0.6)
    return f"did you mean {' or '.join(close)}? " if close else ""


def _friendly(err: ErrorDetails, loc: tuple[Any, ...] = ()) -> str:
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        return f"unknown key ({_did_you_mean(loc)}`fastscale schema` lists every key)"
    if kind == "missing":
        return "required key is missing"
    msg = str(err.get("msg", "invalid value"))
    return msg.removeprefix("Value error, ")


def redact(text: str) -> str:
    """A schema message with any credential it quotes masked (a URL's password, a token): see infra.config.secrets."""
    return mask(text)


def parse_config(
    data: Any, source: str = "<config>", text: str | None = None, lines: dict[tuple[Any, ...], int] | None = None
) -> FastscaleConfig:
    """Validate already-loaded YAML data; raises ConfigError naming every bad field (and its line when known).

    `lines` is the key-path -> line index when the caller already has it (`load_config` does), else it is
    built from `text` only when there is an error to locate."""
    if not isinstance(data, dict):
        raise ConfigError(source, [ConfigProblem("", "the file must be a YAML mapping with `project`, `region` and `endpoints`", 1)])
    try:
        return FastscaleConfig.model_validate(data)
    except ValidationError as exc:
        index = lines if lines is not None else (_line_index(text) if text is not None else {})
        problems = []
        errors = exc.errors()
        for err in errors[:MAX_PROBLEMS_REPORTED]:
            loc = _clean_loc(tuple(err["loc"]))
            problems.append(ConfigProblem(format_path(loc), redact(_friendly(err, loc)), _nearest_line(index, loc)))
        if len(errors) > MAX_PROBLEMS_REPORTED:
            problems.append(ConfigProblem("", f"{len(errors) - MAX_PROBLEMS_REPORTED} more problems not shown: fix the "
                                               "ones above and validate again"))
        raise ConfigError(source, problems, data) from None


def load_config(path: str | Path) -> FastscaleConfig:
    """Read and validate a fastscale YAML file. Raises ConfigError (never a raw YAML/pydantic traceback)."""
    p = Path(path)
    try:
        # Read at most one byte past the limit: a huge file is refused without reading it all. A FIFO,
        # device or socket is refused before it is opened for good (it could block for ever).
        raw = read_bytes(p, safe_yaml.MAX_BYTES + 1, "config file")
    except FileNotFoundError:
        raise ConfigError(str(p), [ConfigProblem("", "file not found")]) from None
    except SpecialFileError as exc:
        raise ConfigError(str(p), [ConfigProblem("", str(exc))]) from None
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise ConfigError(str(p), [ConfigProblem("", f"cannot read the file: {reason}")]) from None
    try:
        if len(raw) > safe_yaml.MAX_BYTES:
            raise safe_yaml.too_large()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise ConfigError(str(p), [ConfigProblem(
                "", f"the file is not UTF-8 text (byte {exc.start} cannot be decoded): a config is YAML text, "
                "save it as UTF-8", line)]) from None
        loaded = safe_yaml.load(text)
    except safe_yaml.UnsafeYamlError as exc:
        raise ConfigError(str(p), [ConfigProblem("", prob.message, prob.line) for prob in exc.problems]) from None
    return parse_config(loaded.data, str(p), text, loaded.lines)


def json_schema() -> dict[str, Any]:
    """JSON Schema of the config file, for editors (yaml-language-server) and docs."""
    schema = FastscaleConfig.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "fastscale configuration"
    return schema


@functools.cache  # the same text every time (the config model is fixed); pydantic takes about 30 ms to build it
def dump_json_schema() -> str:
    return json.dumps(json_schema(), indent=2, sort_keys=True) + "\n"
