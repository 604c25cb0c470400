"""Terraform provider version constraints: parsing them, and the oldest provider releases fastscale writes for
(the attributes a given config needs beyond them are listed by rule FS071, which checks a constraint against
them). Nothing here reads a config, so the config schema can use the parser.

A config may set its own constraints (`providers.aws`, `providers.awscc`), for example to use the provider
versions an internal mirror holds. A constraint is only accepted when every version it admits has every
attribute the stack will write: a constraint that lets Terraform pick an older release would fail at plan
time with "Unsupported argument" — or, worse, apply without the feature.

The minimum versions below come from the providers' changelogs and from their schemas: hashicorp/aws
5.100.0 (the schema of the release in this project's provider mirror) and 6.25.0 (tests/contract).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_AWS = "~> 6.25"
DEFAULT_AWSCC = ">= 1.106.0, < 2.0"

#: The oldest hashicorp/aws release fastscale's aws resources are checked against: every attribute they
#: write that is not listed in AWS_NEEDS is in its schema.
AWS_FLOOR = "5.100.0"
#: The oldest hashicorp/awscc release with everything fastscale writes (`data_cache_config` on the
#: inference component came in 1.106.0).
AWSCC_FLOOR = "1.106.0"


@dataclass(frozen=True)
class Need:
    attribute: str  # what the stack writes, as Terraform names it
    version: str  # the first provider release that has it
    why: str  # what in the config makes the stack write it


Version = tuple[int, int, int]

_CONSTRAINT = re.compile(r"\s*(=|!=|>=|<=|>|<|~>)?\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*")


class ConstraintError(ValueError):
    pass


def parse_version(text: str) -> Version:
    parts = [int(p) for p in text.split(".")]
    return (parts + [0, 0, 0])[0], (parts + [0, 0])[1], (parts + [0, 0, 0])[2]


def format_version(v: Version) -> str:
    return ".".join(str(p) for p in v)


@dataclass(frozen=True)
class Constraint:
    """A parsed constraint string such as `~> 6.25` or `>= 5.100.0, < 7.0`."""

    text: str
    terms: tuple[tuple[str, Version, int], ...]  # (operator, version, number of parts written)

    @classmethod
    def parse(cls, text: str) -> Constraint:
        if not text.strip():
            raise ConstraintError("the constraint is empty")
        terms = []
        for raw in text.split(","):
            m = _CONSTRAINT.fullmatch(raw)
            if not m:
                raise ConstraintError(
                    f"'{raw.strip()}' is not a Terraform version constraint (operators =, !=, >, >=, <, <=, ~>)")
            op = m.group(1) or "="
            written = [g for g in m.group(2, 3, 4) if g is not None]
            terms.append((op, parse_version(".".join(written)), len(written)))
        return cls(text, tuple(terms))

    def admits(self, v: Version) -> bool:
        return all(_admits(op, ref, parts, v) for op, ref, parts in self.terms)

    def oldest_admitted_below(self, needed: Version) -> Version | None:
        """An admitted version older than `needed`, or None when the constraint admits none.

        Candidates are every version the constraint names plus the versions just after them: the oldest
        admitted version is always one of those (or 0.0.0 when nothing bounds the constraint from below).
        """
        older = sorted(v for v in self._candidates() if v < needed and self.admits(v))
        return older[0] if older else None

    def admits_any(self) -> bool:
        return any(self.admits(v) for v in self._candidates())

    def _candidates(self) -> set[Version]:
        out: set[Version] = {(0, 0, 0)}
        for _, (a, b, c), _ in self.terms:
            out |= {(a, b, c), (a, b, c + 1), (a, b + 1, 0), (a + 1, 0, 0)}
        return out


def _admits(op: str, ref: Version, parts: int, v: Version) -> bool:
    if op == "=":
        return v == ref
    if op == "!=":
        return v != ref
    if op == ">":
        return v > ref
    if op == ">=":
        return v >= ref
    if op == "<":
        return v < ref
    if op == "<=":
        return v <= ref
    # "~>": the rightmost written part may grow; `~> 6.25` is >= 6.25.0, < 7.0.0; `~> 6.25.1` is < 6.26.0.
    if v < ref:
        return False
    if parts <= 1:
        return True
    upper = (ref[0] + 1, 0, 0) if parts == 2 else (ref[0], ref[1] + 1, 0)
    return v < upper


def too_old(constraint: Constraint, needs: list[Need]) -> list[tuple[Need, Version]]:
    """Each need whose version the constraint undercuts, with an admitted older version as evidence."""
    out = []
    for need in needs:
        older = constraint.oldest_admitted_below(parse_version(need.version))
        if older is not None:
            out.append((need, older))
    return out


__all__ = [
    "AWSCC_FLOOR",
    "AWS_FLOOR",
    "DEFAULT_AWS",
    "DEFAULT_AWSCC",
    "Constraint",
    "ConstraintError",
    "Need",
    "format_version",
    "too_old",
]
