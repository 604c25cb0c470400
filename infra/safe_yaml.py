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

Parsing stays in libyaml (C) when PyYAML was built with it: one pass over the events checks depth and
aliases, then the checked tree is composed once and serves both the data and the line index.
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
MAX_DUPLICATES_REPORTED = 20

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


def load(text: str) -> Loaded:
    """Parse `text` as one YAML document within the bounds above; raises UnsafeYamlError."""
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise UnsafeYamlError([YamlProblem(
            f"the file is larger than {MAX_BYTES // 1024} KiB, far more than any fastscale config needs; "
            "split it into one file per project"
        )])
    try:
        _check_events(text)
        root = _compose(text)
    except yaml.YAMLError as exc:
        raise UnsafeYamlError([_yaml_problem(exc, text)]) from None
    if root is None:
        return Loaded(None, {})
    problems = _check_tree(root)
    if problems:
        raise UnsafeYamlError(problems)
    try:
        data = _construct(root)
    except yaml.YAMLError as exc:
        raise UnsafeYamlError([_yaml_problem(exc, text)]) from None
    except (ValueError, OverflowError, RecursionError) as exc:
        # e.g. an integer longer than Python's 4300-digit conversion limit
        raise UnsafeYamlError([YamlProblem(f"a value cannot be read: {_short(str(exc))}")]) from None
    return Loaded(data, line_index(root))


def line_index_of(text: str) -> LineIndex:
    """The line index alone, for error messages about data loaded earlier; empty when the text is unsafe."""
    try:
        return load(text).lines
    except UnsafeYamlError:
        return {}


# --------------------------------------------------------------------------------------------- passes


def _check_events(text: str) -> None:
    """Refuse aliases and deep nesting while streaming events, before any node or object exists."""
    depth = 0
    loader = _Loader(text)
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _Refused(
                        f"nesting is deeper than {MAX_DEPTH} levels (a fastscale config needs about 8)", event.start_mark
                    )
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                raise _Refused(
                    f"aliases (*{event.anchor}) are not supported: write the repeated value out in full "
                    "(aliases let a few lines expand into an unbounded document)",
                    event.start_mark,
                )
    finally:
        loader.dispose()


def _compose(text: str) -> yaml.Node | None:
    loader = _Loader(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def _construct(root: yaml.Node) -> Any:
    constructor = yaml.constructor.SafeConstructor()
    return constructor.construct_document(root)


_INT_TAG = "tag:yaml.org,2002:int"


def _check_tree(root: yaml.Node) -> list[YamlProblem]:
    """Duplicate keys (naming both lines) and integers too long to mean anything."""
    problems: list[YamlProblem] = []
    stack: list[tuple[yaml.Node, tuple[Any, ...]]] = [(root, ())]
    while stack and len(problems) < MAX_DUPLICATES_REPORTED:
        node, path = stack.pop()
        if isinstance(node, yaml.ScalarNode):
            if node.tag == _INT_TAG and len(node.value) > MAX_INT_CHARS:
                problems.append(YamlProblem(
                    f"{_dotted(path)}: an integer of {len(node.value)} characters; no setting takes a number that "
                    "long (AWS APIs take 32-bit integers)",
                    node.start_mark.line + 1,
                ))
        elif isinstance(node, yaml.MappingNode):
            first: dict[Any, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    line = key.start_mark.line + 1
                    if key.value in first:
                        where = f" in {_dotted(path)}" if path else ""
                        problems.append(YamlProblem(
                            f"duplicate key {key.value!r}{where}: first on line {first[key.value]}, again on "
                            f"line {line} (YAML would silently keep only the last one; remove or rename one)",
                            line,
                        ))
                    else:
                        first[key.value] = line
                    stack.append((value, path + (key.value,)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, path + (i,)) for i, item in enumerate(node.value))
    return sorted(problems, key=lambda p: p.line or 0)


def line_index(root: yaml.Node) -> LineIndex:
    """Map every key path of an alias-free tree to its 1-based line (iterative: depth is already bounded)."""
    index: LineIndex = {}
    stack: list[tuple[yaml.Node, tuple[Any, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        index.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    continue  # complex keys are refused when the data is constructed
                child = path + (key.value,)
                index[child] = key.start_mark.line + 1
                stack.append((value, child))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, path + (i,)) for i, item in enumerate(node.value))
    return index


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
