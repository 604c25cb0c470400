"""The base of the generated props classes (stacks/resources/generated/): frozen, compared and hashed field by
field, shown with their fields, as ``@dataclass(frozen=True)`` classes are.

The generated classes are real dataclasses (``dataclasses.fields``, ``replace`` and ``is_dataclass`` work on
them, and the renderer reads them so), but ``scripts/gen_resource_props.py`` writes their keyword-only
``__init__`` into the module instead of letting ``@dataclass`` build it, and this base gives them the rest. The
reason is start-up time: ``@dataclass`` compiles up to six methods per class when the module is imported, and a
hundred generated classes would add about 50 ms to every synthesis; written ahead of time they are compiled
once, into the module's bytecode cache.
"""

from __future__ import annotations

import dataclasses
from typing import Any


class Props:
    """Immutable after ``__init__`` (which sets each field with ``object.__setattr__``)."""

    __slots__ = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self))  # type: ignore[arg-type]

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        fields = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self))  # type: ignore[arg-type]
        return f"{type(self).__qualname__}({fields})"
