"""Partial matchers for synthesized Terraform JSON, in the manner of aws-cdk's `assertions.Match`.

A pattern is plain data (dicts, lists, strings, numbers, booleans, None) mixed with matchers from
:class:`Match`. Matching a value never stops at the first difference: every difference is collected with its
path (``/production_variants/0/instance_type``), so a failure says what was expected, what was found, and
where.

How plain data matches, as in aws-cdk:

- a dict matches an object that has at least its keys (more keys are allowed), each value matching in turn;
  under :meth:`Match.exact` or :meth:`Match.object_equals` no other key is allowed;
- a list matches a list of the same length, element by element, in order;
- ``None`` matches a key that is present with the JSON value null, and nothing else: to require that a key
  is missing, use :meth:`Match.absent`;
- any other value matches an equal value of the same JSON type (``True`` does not match ``1``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


class _Missing:
    """The value of a key that is not there (distinct from a key whose value is null)."""

    def __repr__(self) -> str:
        return "<absent>"


MISSING: Any = _Missing()

Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """('production_variants', 0, 'instance_type') -> '/production_variants/0/instance_type'."""
    return "/" + "/".join(str(part) for part in path)


def _show(value: Any, limit: int = 120) -> str:
    if value is MISSING:
        return "no such key"
    text = json.dumps(value, sort_keys=True, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


@dataclass(frozen=True)
class Mismatch:
    """One difference between a pattern and a value: where, and what was expected and found."""

    path: Path
    message: str

    def __str__(self) -> str:
        return f"{format_path(self.path)}: {self.message}"


class Matcher:
    """A pattern that decides by itself whether a value matches. Subclasses implement `test`."""

    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        """Every difference between the pattern and ``actual`` (empty: it matches). ``actual`` is
        :data:`MISSING` when the key is not there."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def view(self) -> Any:
        """The pattern as JSON data for messages: a matcher shows as {"$name": its pattern} or "$name()"."""
        return f"${self.describe()}"

    def __repr__(self) -> str:
        return self.describe()


def as_matcher(pattern: Any, partial_objects: bool = True) -> Matcher:
    """The matcher a pattern stands for (plain data is matched literally; see the module docstring)."""
    if isinstance(pattern, Matcher):
        return pattern
    if isinstance(pattern, dict):
        return _ObjectMatch(pattern, partial=partial_objects, name="object_like" if partial_objects else "exact")
    if isinstance(pattern, (list, tuple)):
        return _ArrayMatch(list(pattern), subsequence=False, partial_objects=partial_objects, name="array")
    if pattern is None or isinstance(pattern, (str, int, float, bool)):
        return _Literal(pattern)
    raise TypeError(f"a pattern is JSON data or a Match matcher, not {type(pattern).__name__}: {pattern!r}")


def pattern_view(pattern: Any) -> Any:
    """``pattern`` as JSON data for messages, each matcher shown by its view()."""
    if isinstance(pattern, Matcher):
        return pattern.view()
    if isinstance(pattern, dict):
        return {k: pattern_view(v) for k, v in pattern.items()}
    if isinstance(pattern, (list, tuple)):
        return [pattern_view(v) for v in pattern]
    return pattern


def _not_found(actual: Any, path: Path, expected: str) -> list[Mismatch]:
    return [Mismatch(path, f"expected {expected}, but the key is absent")] if actual is MISSING else []


class _Literal(Matcher):
    def __init__(self, value: Any):
        self.value = value

    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        if actual is MISSING:
            return _not_found(actual, path, _show(self.value))
        # JSON types first: in Python True == 1 and 1 == 1.0, in the JSON document they are different values
        # (1 and 1.0 are both numbers and compare equal).
        if _kind(actual) != _kind(self.value) or actual != self.value:
            return [Mismatch(path, f"expected {_show(self.value)}, found {_show(actual)}")]
        return []

    def describe(self) -> str:
        return _show(self.value)

    def view(self) -> Any:
        return self.value


class _ObjectMatch(Matcher):
    def __init__(self, pattern: dict[str, Any], *, partial: bool, name: str):
        if not isinstance(pattern, dict):
            raise TypeError(f"Match.{name} takes a dict, not {type(pattern).__name__}")
        self.pattern, self.partial, self.name = pattern, partial, name

    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        if actual is MISSING:
            return _not_found(actual, path, "an object")
        if not isinstance(actual, dict):
            return [Mismatch(path, f"expected an object, found {_kind(actual)} {_show(actual)}")]
        found: list[Mismatch] = []
        if not self.partial:
            found += [Mismatch((*path, key), f"unexpected key (found {_show(actual[key])}); {self.name} allows "
                                              "no key the pattern does not name")
                      for key in actual if key not in self.pattern]
        for key, sub in self.pattern.items():
            found += as_matcher(sub, self.partial).test(actual.get(key, MISSING), (*path, key))
        return found

    def describe(self) -> str:
        return f"{self.name}({_show(self.pattern, 80)})"

    def view(self) -> Any:
        return {f"${self.name}": pattern_view(self.pattern)}


class _ArrayMatch(Matcher):
    def __init__(self, pattern: list[Any], *, subsequence: bool, partial_objects: bool, name: str):
        if not isinstance(pattern, list):
            raise TypeError(f"Match.{name} takes a list, not {type(pattern).__name__}")
        if any(isinstance(p, _Absent) for p in pattern):
            raise ValueError(f"Match.absent() has no meaning inside an array ({name})")
        self.pattern, self.subsequence, self.partial, self.name = pattern, subsequence, partial_objects, name

    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        if actual is MISSING:
            return _not_found(actual, path, "an array")
        if not isinstance(actual, list):
            return [Mismatch(path, f"expected an array, found {_kind(actual)} {_show(actual)}")]
        matchers = [as_matcher(p, self.partial) for p in self.pattern]
        if not self.subsequence:
            if len(actual) != len(matchers):
                return [Mismatch(path, f"expected an array of {len(matchers)} element(s), found {len(actual)}: "
                                       f"{_show(actual)}")]
            return [m for i, matcher in enumerate(matchers) for m in matcher.test(actual[i], (*path, i))]
        # array_with: the pattern's elements in this order, other elements allowed before, between and after.
        # Taking the earliest element that matches each pattern element finds an order-preserving match
        # whenever one exists.
        start = 0
        for index, matcher in enumerate(matchers):
            hit = next((i for i in range(start, len(actual)) if not matcher.test(actual[i], (*path, i))), None)
            if hit is None:
                return [self._no_match(actual, path, index, matcher, start)]
            start = hit + 1
        return []

    def _no_match(self, actual: list[Any], path: Path, index: int, matcher: Matcher, start: int) -> Mismatch:
        where = f"at or after index {start}" if start else "anywhere"
        message = f"no element {where} matches pattern element {index} ({matcher.describe()})"
        tries = [(matcher.test(actual[i], (*path, i)), i) for i in range(start, len(actual))]
        if tries:
            diffs, _ = min(tries, key=lambda t: (len(t[0]), t[1]))
            message += "; the closest element differs at " + "; ".join(str(d) for d in diffs[:5])
        elif start:
            earlier = [i for i in range(start) if not matcher.test(actual[i], (*path, i))]
            if earlier:
                message += f" (element {earlier[0]} matches it, but array_with keeps the pattern's order)"
        return Mismatch(path, message)

    def describe(self) -> str:
        return f"{self.name}({_show(self.pattern, 80)})"

    def view(self) -> Any:
        return {f"${self.name}": pattern_view(self.pattern)}


class _Absent(Matcher):
    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        return [] if actual is MISSING else [Mismatch(path, f"expected the key to be absent, found {_show(actual)}")]

    def describe(self) -> str:
        return "absent()"


class _AnyValue(Matcher):
    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        if actual is MISSING:
            return _not_found(actual, path, "any value")
        return [Mismatch(path, "expected any value, found null")] if actual is None else []

    def describe(self) -> str:
        return "any_value()"


class _Regexp(Matcher):
    def __init__(self, pattern: str):
        self.pattern, self.regexp = pattern, re.compile(pattern)

    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        if actual is MISSING:
            return _not_found(actual, path, f"a string matching /{self.pattern}/")
        if not isinstance(actual, str):
            return [Mismatch(path, f"expected a string matching /{self.pattern}/, found {_kind(actual)} "
                                   f"{_show(actual)}")]
        if not self.regexp.search(actual):
            return [Mismatch(path, f"expected a string matching /{self.pattern}/, found {_show(actual)}")]
        return []

    def describe(self) -> str:
        return f"string_like_regexp({self.pattern!r})"


class _Not(Matcher):
    def __init__(self, pattern: Any):
        self.inner = as_matcher(pattern)

    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        if self.inner.test(actual, path):
            return []
        return [Mismatch(path, f"expected anything but {self.inner.describe()}, found {_show(actual)}")]

    def describe(self) -> str:
        return f"not_({self.inner.describe()})"

    def view(self) -> Any:
        return {"$not_": self.inner.view()}


class _SerializedJson(Matcher):
    def __init__(self, pattern: Any):
        self.inner = as_matcher(pattern, partial_objects=False)

    def test(self, actual: Any, path: Path = ()) -> list[Mismatch]:
        if actual is MISSING:
            return _not_found(actual, path, "a JSON string")
        if not isinstance(actual, str):
            return [Mismatch(path, f"expected a JSON string, found {_kind(actual)} {_show(actual)}")]
        try:
            parsed = json.loads(actual)
        except ValueError as err:
            return [Mismatch(path, f"expected a JSON string, found one that does not parse ({err})")]
        return [Mismatch(m.path, f"(in the JSON string) {m.message}") for m in self.inner.test(parsed, path)]

    def describe(self) -> str:
        return f"serialized_json({self.inner.describe()})"

    def view(self) -> Any:
        return {"$serialized_json": self.inner.view()}


class Match:
    """The matchers. Nest them anywhere in a pattern; plain data around them matches as described above."""

    @staticmethod
    def object_like(pattern: dict[str, Any]) -> Matcher:
        """An object with at least these keys; nested plain dicts match the same way."""
        return _ObjectMatch(pattern, partial=True, name="object_like")

    @staticmethod
    def object_equals(pattern: dict[str, Any]) -> Matcher:
        """An object with exactly these keys (nested plain dicts too, unless they use a matcher)."""
        return _ObjectMatch(pattern, partial=False, name="object_equals")

    @staticmethod
    def exact(pattern: Any) -> Matcher:
        """``pattern`` literally: objects (at any depth) may have no key the pattern does not name."""
        return as_matcher(pattern, partial_objects=False)

    @staticmethod
    def array_with(pattern: Sequence[Any]) -> Matcher:
        """An array that contains elements matching these, in this order (others may come in between).
        Objects in the pattern match partially."""
        return _ArrayMatch(list(pattern), subsequence=True, partial_objects=True, name="array_with")

    @staticmethod
    def array_equals(pattern: Sequence[Any]) -> Matcher:
        """An array of exactly these elements, in this order, objects matched exactly."""
        return _ArrayMatch(list(pattern), subsequence=False, partial_objects=False, name="array_equals")

    @staticmethod
    def absent() -> Matcher:
        """The key is not there at all (a key with the value null is there: match that with ``None``)."""
        return _Absent()

    @staticmethod
    def any_value() -> Matcher:
        """The key is there with any value except null."""
        return _AnyValue()

    @staticmethod
    def string_like_regexp(pattern: str) -> Matcher:
        """A string in which the regular expression is found (``re.search``: anchor it with ``^`` and ``\\Z``;
        ``$`` also matches before a final line break)."""
        return _Regexp(pattern)

    @staticmethod
    def not_(pattern: Any) -> Matcher:
        """Anything that does not match ``pattern`` (a missing key included)."""
        return _Not(pattern)

    @staticmethod
    def serialized_json(pattern: Any) -> Matcher:
        """A string holding JSON (an IAM policy, a dashboard body) whose parsed value matches ``pattern``
        (plain data inside it matches exactly: use object_like for a partial match)."""
        return _SerializedJson(pattern)


def mismatches(actual: Any, pattern: Any) -> list[Mismatch]:
    """Every difference between ``actual`` and ``pattern`` (plain dicts match partially)."""
    return as_matcher(pattern).test(actual)


def assert_matches(actual: Any, pattern: Any, what: str = "value") -> None:
    """Raise AssertionError listing every difference between ``actual`` and ``pattern``, with paths."""
    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    found = mismatches(actual, pattern)
    if found:
        lines = "\n".join(f"  {m}" for m in found)
        raise AssertionError(f"{what} does not match the pattern, {len(found)} difference(s):\n{lines}")
