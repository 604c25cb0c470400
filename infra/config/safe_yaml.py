"""Bounded YAML loading: any file loads, or fails with a located problem, in bounded time and memory.

A fastscale config is a small hand-written file, so anything a config never needs is refused before it
can cost anything:

- **size**: files over :data:`MAX_BYTES` are refused unread.
- **aliases** (``*name``) are refused. An alias shares a node, so ``a: &x [*y, *y, ...]`` chains
  (the "billion laughs") turn a few hundred bytes into billions of paths for anything that walks the
  data — validation, the line index, error formatting. Expanding under a size limit would still
  make every consumer pay for the expansion and would hide the repetition from the reader; a config
  has no repetition that a few more lines cannot state plainly. Anchors without an alias are harmless.
- **nesting** deeper than :data:`MAX_DEPTH` is refused (a config is about 8 levels deep; libyaml's
  composer and Python's constructor recurse once per level).
- **duplicate keys** are an error naming both lines (YAML leaves them undefined; PyYAML keeps the last).
- **tabs**: YAML forbids tabs in indentation; the error says so, with the tab's line and column.
- integers longer than Python's digit limit, and other constructor failures, become located problems.

Parsing stays in libyaml (C) when PyYAML was built with it, and nothing else reads the text: one pass over
libyaml's events builds the data and the line index together, refusing an alias or an excess level at
the event that introduces it, so nothing is ever built from a refused construct.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

#: Largest file accepted. The shipped examples are 1-2 KB and a 50-endpoint config about 25 KB; this leaves
#: room for several hundred endpoints while keeping the worst file within 2 s and 200 MB (bench/hostile.py).
MAX_BYTES = 128 * 1024
#: Deepest nesting of mappings and sequences accepted (a config needs about 8).
MAX_DEPTH = 32
#: Longest integer literal accepted: far beyond any count or size, short enough to convert instantly.
MAX_INT_CHARS = 100
#: Problems (duplicate keys, overlong integers) reported per file; more only repeat the same mistake.
MAX_PROBLEMS_REPORTED = 20

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

LineIndex = dict[tuple[Any, ...], int]


@dataclass(frozen=True)
class YamlProblem:
    """One reason the text is not an acceptable YAML document, with its 1-based line (and column) when known."""

    message: str
    line: int | None = None
    column: int | None = None


class UnsafeYamlError(Exception):
    """The text cannot be loaded: not YAML, or outside the bounds above. Carries every problem found."""

    def __init__(self, problems: list[YamlProblem]):
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


@dataclass
class Loaded:
    """The document's data and the 1-based line of every key path, e.g. ('endpoints', 0, 'name') -> 7."""

    data: Any
    lines: LineIndex = field(default_factory=dict)


def too_large() -> UnsafeYamlError:
    """The error for a file over :data:`MAX_BYTES` (also raised before decoding, on the raw bytes)."""
    return UnsafeYamlError([YamlProblem(
        f"the file is larger than {MAX_BYTES // 1024} KiB, far more than any fastscale config needs; "
        "split it into one file per project"
    )])


def load(text: str) -> Loaded:
    """Parse `text` as one YAML document within the bounds above; raises UnsafeYamlError."""
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise too_large()
    builder = _Builder()
    loader = _Loader(text)
    try:
        while loader.check_event():
            builder.feed(loader, loader.get_event())
    except yaml.YAMLError as exc:
        raise UnsafeYamlError([_yaml_problem(exc, text)]) from None
    except (ValueError, OverflowError) as exc:  # a scalar the constructor cannot convert
        raise UnsafeYamlError([YamlProblem(f"a value cannot be read: {_short(str(exc))}")]) from None
    finally:
        loader.dispose()
    if builder.problems:
        raise UnsafeYamlError(sorted(builder.problems, key=lambda p: p.line or 0))
    return Loaded(builder.data, builder.lines)


def line_index_of(text: str) -> LineIndex:
    """The line index alone, for error messages about data loaded earlier; empty when the text is unsafe."""
    try:
        return load(text).lines
    except UnsafeYamlError:
        return {}


# --------------------------------------------------------------------------------------------- the pass

_INT_TAG = "tag:yaml.org,2002:int"
_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_MERGE_TAG = "tag:yaml.org,2002:merge"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_NO_KEY = object()


class _Frame:
    __slots__ = ("data", "first", "key", "path")

    def __init__(self, data: Any, path: tuple[Any, ...]):
        self.data = data
        self.path = path
        self.key: Any = _NO_KEY  # a mapping's key waiting for its value
        self.first: dict[Any, int] = {}  # key -> line of its first occurrence


class _Builder:
    """Builds the data and the line index straight from libyaml's events, in one pass: no node tree, no
    second parse. Aliases and excess depth are refused at the event that introduces them, before anything
    is built from them; duplicate keys and overlong integers are collected with their lines."""

    def __init__(self) -> None:
        self.stack: list[_Frame] = []
        self.data: Any = None
        self.lines: LineIndex = {}
        self.problems: list[YamlProblem] = []
        self.documents = 0

    def feed(self, loader: Any, event: Any) -> None:
        kind = type(event)
        if kind is yaml.ScalarEvent:
            self._value(self._scalar(loader, event), event)
        elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
            if len(self.stack) >= MAX_DEPTH:
                raise _Refused(f"nesting is deeper than {MAX_DEPTH} levels (a fastscale config needs about 8)",
                               event.start_mark)
            mapping = kind is yaml.MappingStartEvent
            if event.tag not in (None, "!", _MAP_TAG if mapping else _SEQ_TAG):
                raise _Refused(f"the tag {event.tag} is not supported: write plain YAML", event.start_mark)
            path = self._child_path(event)
            self.lines.setdefault(path, event.start_mark.line + 1)
            self.stack.append(_Frame({} if mapping else [], path))
        elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            frame = self.stack.pop()
            self._value(frame.data, event, container=True)
        elif kind is yaml.AliasEvent:
            raise _Refused(
                f"aliases (*{event.anchor}) are not supported: write the repeated value out in full "
                "(aliases let a few lines expand into an unbounded document)",
                event.start_mark,
            )
        elif kind is yaml.DocumentStartEvent:
            self.documents += 1
            if self.documents > 1:
                raise _Refused("the file holds more than one YAML document (---): a config is one document",
                               event.start_mark)

    def _child_path(self, event: Any) -> tuple[Any, ...]:
        if not self.stack:
            return ()
        parent = self.stack[-1]
        if isinstance(parent.data, list):
            return parent.path + (len(parent.data),)
        if parent.key is _NO_KEY:
            raise _Refused("a mapping or list used as a key is not supported: keys are plain words",
                           event.start_mark)
        return parent.path + (parent.key,)

    def _scalar(self, loader: Any, event: Any) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR_TAG:
            return event.value
        if tag == _MERGE_TAG:
            raise _Refused("merge keys (<<) are not supported: write the keys out in full", event.start_mark)
        if tag == _INT_TAG and len(event.value) > MAX_INT_CHARS:
            top = self.stack[-1] if self.stack else None
            path = self._child_path(event) if top and (isinstance(top.data, list) or top.key is not _NO_KEY) else ()
            self.problems.append(YamlProblem(
                f"{_dotted(path)}: an integer of {len(event.value)} characters; no setting takes a number that "
                "long (AWS APIs take 32-bit integers)",
                event.start_mark.line + 1,
            ))
            return None
        construct = loader.yaml_constructors.get(tag)
        if construct is None:
            raise _Refused(f"the tag {tag} is not supported: write plain YAML", event.start_mark)
        return construct(loader, yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style))

    def _value(self, value: Any, event: Any, container: bool = False) -> None:
        if not self.stack:
            self.data = value
            return
        frame = self.stack[-1]
        if isinstance(frame.data, list):
            if not container:
                self.lines.setdefault(frame.path + (len(frame.data),), event.start_mark.line + 1)
            frame.data.append(value)
            return
        if frame.key is _NO_KEY:  # this scalar is a key
            line = event.start_mark.line + 1
            try:
                hash(value)
            except TypeError:
                raise _Refused("this key cannot be used as a mapping key", event.start_mark) from None
            if value in frame.first:
                if len(self.problems) < MAX_PROBLEMS_REPORTED:
                    where = f" in {_dotted(frame.path)}" if frame.path else ""
                    self.problems.append(YamlProblem(
                        f"duplicate key {value!r}{where}: first on line {frame.first[value]}, again on line {line} "
                        "(YAML would silently keep only the last one; remove or rename one)",
                        line,
                    ))
            else:
                frame.first[value] = line
            frame.key = value
            self.lines[frame.path + (value,)] = line
            return
        frame.data[frame.key] = value
        frame.key = _NO_KEY


# --------------------------------------------------------------------------------------------- messages


class _Refused(yaml.YAMLError):
    def __init__(self, problem: str, mark: Any):
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


def _yaml_problem(exc: yaml.YAMLError, text: str) -> YamlProblem:
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    column = mark.column + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    if context and not isinstance(exc, _Refused):
        problem = f"{context}, {problem}"  # e.g. "expected a single document in the stream, but found another document"
    if isinstance(exc, _Refused):
        return YamlProblem(problem, line, column)
    tab = _tab_near(text, mark)
    if tab is not None:
        line, column = tab
        return YamlProblem(
            f"a tab character at line {line}, column {column}: YAML does not allow tabs for indentation; "
            "use spaces",
            line,
            column,
        )
    return YamlProblem(f"not valid YAML: {_short(problem)}", line, column)


def _tab_near(text: str, mark: Any) -> tuple[int, int] | None:
    """(line, column) of the tab that caused a scanner error at `mark`, if a tab is the cause."""
    if mark is None:
        return None
    lines = text.splitlines()
    if not 0 <= mark.line < len(lines):
        return None
    current = lines[mark.line]
    if mark.column < len(current) and current[mark.column] == "\t":
        return mark.line + 1, mark.column + 1
    # libyaml reports some tab errors at the start of the token after the tabbed indentation
    for number in (mark.line, mark.line - 1):
        if 0 <= number < len(lines):
            indent = lines[number][: len(lines[number]) - len(lines[number].lstrip(" \t"))]
            if "\t" in indent:
                return number + 1, indent.index("\t") + 1
    return None


def _dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<root>"


def _short(message: str, limit: int = 200) -> str:
    message = " ".join(message.split())
    return message if len(message) <= limit else message[: limit - 3] + "..."
