"""What the rules can still check in a file with schema errors: the config without its invalid parts.

Every part a schema error points at is left out (a key with a default then takes its default; a required key
takes its whole mapping with it, and a list item is left out of its list), repeatedly, until the rest
validates. The rules then run on that rest, so `validate` reports schema and rule errors in one pass. A schema
error of the file as a whole (a missing `project`, say) leaves nothing to check.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from fastscale.infra.config.loading import _clean_loc, format_path, parse_path
from fastscale.infra.config.root import FastscaleConfig

#: A config that keeps failing after this many rounds of leaving parts out is not checked at all.
_MAX_ROUNDS = 25

Loc = tuple[Any, ...]


@dataclass(frozen=True)
class PartialConfig:
    """The valid rest of a config file, and what was left out of it (paths as the file spells them)."""

    config: FastscaleConfig
    left_out: tuple[str, ...]
    #: per list (its path in the file), the file's indexes of the items left out of it
    _removed: tuple[tuple[Loc, tuple[int, ...]], ...]

    def file_path(self, path: str) -> str:
        """A path of :attr:`config` (as a rule finding spells it) as the file spells it: list indexes count
        the items left out."""
        return format_path(_to_file(parse_path(path), dict(self._removed)))

    def covers(self, path: str) -> bool:
        """Whether ``path`` (as the file spells it) is in, or under, a part that was left out."""
        loc = parse_path(path)
        return any(loc[: len(out)] == out for out in (parse_path(p) for p in self.left_out))


def _to_file(loc: Loc, removed: dict[Loc, tuple[int, ...]]) -> Loc:
    out: Loc = ()
    for part in loc:
        gone = removed.get(out)
        if isinstance(part, int) and gone:
            kept = (i for i in range(part + len(gone) + 1) if i not in gone)
            part = next(i for n, i in enumerate(kept) if n == part)
        out += (part,)
    return out


def _existing(data: Any, loc: Loc) -> Loc:
    """The longest prefix of ``loc`` that names something in ``data`` (pydantic adds union member names and
    names keys that are missing)."""
    node: Any = data
    found: Loc = ()
    for part in loc:
        in_mapping = isinstance(node, dict) and part in node
        if not (in_mapping or (isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node))):
            break
        node = node[part]
        found += (part,)
    return found


def _delete(data: Any, loc: Loc) -> None:
    node = data
    for part in loc[:-1]:
        node = node[part]
    del node[loc[-1]]


def partial_config(data: dict[str, Any]) -> PartialConfig | None:
    """The config ``data`` holds without its invalid parts, or None when nothing valid is left to check."""
    work = copy.deepcopy(data)
    removed: dict[Loc, tuple[int, ...]] = {}
    left_out: list[Loc] = []
    for _ in range(_MAX_ROUNDS):
        try:
            config = FastscaleConfig.model_validate(work)
        except ValidationError as exc:
            targets = {_existing(work, _clean_loc(tuple(err["loc"]))) for err in exc.errors()}
            if () in targets:
                return None
            outermost = [t for t in targets if not any(o != t and t[: len(o)] == o for o in targets)]
            # the last list item first, so the indexes of the others still hold
            for target in sorted(outermost, reverse=True):
                in_file = _to_file(target, removed)
                left_out.append(in_file)
                if isinstance(target[-1], int):
                    parent = in_file[:-1]
                    removed[parent] = tuple(sorted({*removed.get(parent, ()), in_file[-1]}))
                _delete(work, target)
            continue
        shown = sorted({format_path(loc) for loc in left_out
                        if not any(o != loc and loc[: len(o)] == o for o in left_out)})
        return PartialConfig(config, tuple(shown), tuple(removed.items()))
    return None
