"""AWS facts are spelled once, in fastscale.infra.base.aws_facts: stacks, rules and verification import them."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from fastscale.infra.base import aws_facts
from tests.conftest import ROOT

FACTS = {
    value
    for name, value in vars(aws_facts).items()
    if name.isupper() and isinstance(value, str) and not name.startswith("_")
} - {"sagemaker"}  # also boto3's name for the SageMaker client, which is not the auto scaling namespace


def _string_constants(path):
    """Every string literal of a module except docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


@pytest.mark.parametrize("folder", ["infra", "stacks", "cli"])
def test_no_aws_fact_is_spelled_outside_its_home(folder):
    home = ROOT / "infra" / "base" / "aws_facts.py"
    respelled = [
        f"{path.relative_to(ROOT)}:{line}: {value}"
        for path in sorted((ROOT / folder).rglob("*.py"))
        if path != home
        for line, value in _string_constants(path)
        if value in FACTS
    ]
    assert respelled == []


def test_the_facts_cost_no_import():
    code = "import sys, fastscale.infra.base.aws_facts; assert not {'boto3', 'botocore', 'cdktf', 'jsii'} & set(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_alarm_periods_are_the_ones_cloudwatch_accepts():
    assert [p for p in range(1, 181) if aws_facts.valid_alarm_period(p)] == [10, 20, 30, 60, 120, 180]


def test_the_step_policy_reads_as_the_verification_prints_it():
    assert aws_facts.SCALE_FROM_ZERO_STEP.describe(120) == "StepScaling ChangeInCapacity +1 at >= 0, Maximum, cooldown 120 s"
