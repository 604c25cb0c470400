"""The rules declared with infra.rules._bounds: each module's pass/fail table, run through its EXAMPLE.

A table sits beside the EXAMPLE it edits (``CASES``): values at both limits and just inside must pass, values one
past either limit must fail with a hint that clamps to that limit. The tables are data, so adding a bounded rule
adds its cases here without a new test.
"""

from __future__ import annotations

import sys

import pytest
import yaml

from fastscale.infra.config import parse_config
from fastscale.infra.rules import Severity, all_rules
from fastscale.infra.rules._bounds import Bound, Cases, out_of_bounds

TABLES = [
    (rule, cases)
    for rule in all_rules()
    for cases in getattr(sys.modules[rule.check.__module__], "CASES", ())
    if isinstance(cases, Cases)
]


def example_with(rule, cases: Cases, value: int):
    example = sys.modules[rule.check.__module__].EXAMPLE
    assert example.count(cases.replace) == 1, f"{rule.code}: {cases.replace!r} must occur once in its EXAMPLE"
    return parse_config(yaml.safe_load(example.replace(cases.replace, cases.template.format(value))))


def test_the_bounded_rules_have_tables():
    assert {rule.code for rule, _ in TABLES} >= {"FS020", "FS040", "FS042"}


@pytest.mark.parametrize(("rule", "cases"), TABLES, ids=lambda x: getattr(x, "code", None) or getattr(x, "template", ""))
def test_passing_values_give_no_finding(rule, cases):
    assert cases.passing, "a table names the values at both limits"
    for value in cases.passing:
        assert rule.run(example_with(rule, cases, value)) == [], (rule.code, value)


@pytest.mark.parametrize(("rule", "cases"), TABLES, ids=lambda x: getattr(x, "code", None) or getattr(x, "template", ""))
def test_failing_values_give_one_finding_with_the_clamp(rule, cases):
    assert cases.failing, "a table names the values one past each limit"
    for value, hint in cases.failing.items():
        (finding,) = rule.run(example_with(rule, cases, value))
        key = hint.split(":")[0].removeprefix("set ")
        assert finding.severity is Severity.ERROR and finding.path.endswith(f".{key}")
        assert finding.hint == hint and f"{key} is {value}" in finding.message


def test_a_bound_is_inclusive_at_both_ends_and_clamps_to_the_nearer_limit():
    bound = Bound("period", "Period", 10, 20, "it would fail", unit="s")

    class Holder:
        def __init__(self, period):
            self.period = period

    holders = [("a", Holder(10)), ("b", Holder(20)), ("c", Holder(9)), ("d", Holder(21)), ("e", Holder(None)), ("f", None)]
    found = list(out_of_bounds(holders, [bound]))
    assert [(h.path, h.hint) for h in found] == [("c.period", "set period: 10"), ("d.period", "set period: 20")]
    assert found[0].message == "period is 9 s: SageMaker accepts 10 to 20 s for Period, so it would fail."
