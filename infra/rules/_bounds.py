"""The commonest rule shape, declared instead of written: a number the API accepts only within [lo, hi].

A rule of this shape names where the values live (``holders``: config path and the object holding the
fields) and, per field, the API member it becomes, its limits and what fails beyond them. Every value
outside the limits is one finding at ``<holder path>.<field>`` whose hint clamps it to the nearest limit;
unset values (None) are left to AWS's defaults::

    check = bounded_rule(
        "FS040", "provision-timeout-out-of-range", Severity.ERROR, "capacity.provision_timeout is outside 300-3600 s.",
        module=__name__,
        holders=lambda config: ((f"{path}.capacity", ep.capacity) for path, ep in endpoints(config)),
        bounds=[Bound("provision_timeout", "VariantInstanceProvisionTimeoutInSeconds", 300, 3600, unit="s",
                      fails="creating the endpoint configuration would fail")],
    )

Each such rule module keeps a case table beside its EXAMPLE (:class:`Cases`): values that must pass and values
that must fail with their clamped hint, which tests/rules/test_bounded_rules.py runs through the EXAMPLE.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Rule, Severity, rule, stack_rule


@dataclass(frozen=True)
class Bound:
    """One field's accepted range: ``lo <= value <= hi`` (both inclusive), as the API documents it."""

    key: str  # the config field, as the user writes it
    api_name: str  # what it becomes in the API request, e.g. "ScaleInPolicy.CooldownInMinutes"
    lo: int
    hi: int
    fails: str  # what goes wrong beyond the limits, e.g. "the deploy would fail"
    unit: str = ""  # "s" for seconds; shown after the value and the limits

    def clamp(self, value: int) -> int:
        return min(max(value, self.lo), self.hi)

    def hit(self, path: str, value: int) -> Hit:
        unit = f" {self.unit}" if self.unit else ""
        return Hit(
            f"{path}.{self.key}",
            f"{self.key} is {value}{unit}: SageMaker accepts {self.lo} to {self.hi}{unit} for {self.api_name}, "
            f"so {self.fails}.",
            f"set {self.key}: {self.clamp(value)}",
        )


def out_of_bounds(holders: Iterable[tuple[str, Any]], bounds: Sequence[Bound]) -> Iterator[Hit]:
    """A finding for every set field outside its bound, holder by holder, in the order of ``bounds``."""
    for path, holder in holders:
        if holder is None:
            continue
        for bound in bounds:
            value = getattr(holder, bound.key)
            if value is not None and not bound.lo <= value <= bound.hi:
                yield bound.hit(path, value)


def bounded_rule(
    code: str,
    name: str,
    severity: Severity,
    summary: str,
    *,
    module: str,
    holders: Callable[[FastscaleConfig], Iterable[tuple[str, Any]]] | None = None,
    stack_holders: Callable[[ResolvedStack], Iterable[tuple[str, Any]]] | None = None,
    bounds: Sequence[Bound],
) -> Rule:
    """Register a rule that reports every field of ``bounds`` outside its range, in each of ``holders(config)``,
    or, for a value of what will be built, of ``stack_holders(stack)`` on the resolved stack (a `stack_rule`).

    ``module`` is the rule module's ``__name__``: the registry and docs/rules.md find the module (its docstring
    and EXAMPLE) through the check function's module."""
    if (holders is None) == (stack_holders is None):
        raise TypeError("give either holders or stack_holders")

    def check(source: Any) -> Iterator[Hit]:
        walk = stack_holders if stack_holders is not None else holders
        assert walk is not None
        return out_of_bounds(walk(source), bounds)

    check.__module__ = module
    check.__qualname__ = check.__name__ = "check"
    register = stack_rule if stack_holders is not None else rule
    return register(code, name, severity, summary)(check)


@dataclass(frozen=True)
class Cases:
    """A rule's pass/fail table: the EXAMPLE with ``replace`` (a fragment of it) written as ``template`` filled
    with each value. ``passing`` values give no finding; each ``failing`` value gives one, with this hint."""

    replace: str
    template: str  # e.g. "provision_timeout: {}"
    passing: Sequence[int] = ()
    failing: Mapping[int, str] = field(default_factory=dict)
