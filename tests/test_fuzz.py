"""Fuzzing load -> validate -> synth with Hypothesis: whatever the file, `fastscale validate` ends in exit 0
(valid) or exit 2 with findings, never in an exception, and a valid config synthesizes to JSON that says
exactly what the config said.

Inputs start from the shipped examples and the test base and are then damaged the way people and
generators damage files: a value replaced by any YAML value (huge and negative integers, NaN, infinity,
1e300, booleans, nulls, long strings, lists, mappings), a key added or removed, or the text itself cut,
tab-indented, given a duplicate line or an alias. Time is bounded by `max_examples`; synthesis (a whole stack rendered and
written to disk each time) runs for the first few valid configs only.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fastscale.cli.main import cli
from fastscale.infra.config import ConfigError, FastscaleConfig, load_config
from fastscale.infra.model.resolved import resolve
from fastscale.infra.rules import has_errors, run_rules
from tests.conftest import BASE_CONFIG, EXAMPLES

SEEDS = [yaml.safe_load(p.read_text()) for p in EXAMPLES] + [BASE_CONFIG]
#: Valid configs synthesized per test run: each renders and writes a whole stack.
MAX_SYNTHS = 2

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.sampled_from([0, 1, -1, 2**31 - 1, 2**31, 2**53 + 1, 10**20, 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e300, -1e300, 5e-324, 0.1, 97.5]),
    st.text(max_size=40),
    st.sampled_from(["ml.g6.2xlarge", "hf_" + "x" * 34, "arn:aws:secretsmanager:us-east-1:123456789012:secret:s",
                     "s3://b/k/", "123456789012.dkr.ecr.us-east-1.amazonaws.com/r:1", "yes", "1e300", ".nan"]),
)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
                      max_leaves=6)


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path to a value inside nested dicts and lists."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, prefix + (i,))
    return out


def set_path(data: Any, path: tuple, value: Any) -> None:
    for part in path[:-1]:
        data = data[part]
    data[path[-1]] = value


@st.composite
def damaged_configs(draw) -> str:
    data = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        choice = draw(st.sampled_from(["replace", "add", "remove"]))
        targets = paths(data)
        path = draw(st.sampled_from(targets))
        if choice == "replace":
            set_path(data, path, draw(values))
        elif choice == "add":
            parent = data
            for part in path[:-1]:
                parent = parent[part]
            if isinstance(parent, dict):
                parent[draw(st.sampled_from(["extra", "max", "environment", "secrets", "period"]))] = draw(values)
        elif len(path) > 1:
            parent = data
            for part in path[:-1]:
                parent = parent[part]
            if isinstance(parent, dict):
                parent.pop(path[-1], None)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    edit = draw(st.sampled_from(["none", "none", "tab", "duplicate", "alias", "cut"]))
    lines = text.splitlines(keepends=True)
    at = draw(st.integers(min_value=0, max_value=max(0, len(lines) - 1)))
    if edit == "tab" and lines:
        lines[at] = "\t" + lines[at].lstrip(" ")
    elif edit == "duplicate" and lines:
        lines.insert(at, lines[at])
    elif edit == "alias":
        lines = ["x-anchor: &a [1, 2]\n", "x-alias: *a\n", *lines]
    elif edit == "cut":
        lines = lines[:at]
    return "".join(lines)


def numbers(node: Any) -> list[float]:
    if isinstance(node, bool):
        return []
    if isinstance(node, (int, float)):
        return [node]
    if isinstance(node, dict):
        return [n for v in node.values() for n in numbers(v)]
    if isinstance(node, list):
        return [n for v in node for n in numbers(v)]
    return []


@pytest.fixture(scope="module")
def synthesized() -> list[int]:
    return []


@settings(max_examples=60, deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(text=damaged_configs())
@example(text=yaml.safe_dump(BASE_CONFIG, sort_keys=False))  # the synth path runs at least once
def test_any_file_validates_to_exit_0_or_2_and_valid_configs_synthesize(text, tmp_path_factory, synthesized):
    directory = tmp_path_factory.mktemp("fuzz")
    path = directory / "fastscale.yaml"
    path.write_text(text, encoding="utf-8")

    result = CliRunner().invoke(cli, ["validate", "--json", str(path)])
    assert result.exit_code in (0, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    report = json.loads(result.stdout)
    assert report["valid"] is (result.exit_code == 0)
    if result.exit_code == 2:
        assert any(f["severity"] == "error" for f in report["files"][0]["findings"])

    try:
        config = load_config(path)
    except ConfigError:
        assert result.exit_code == 2
        return
    assert all(math.isfinite(n) for n in numbers(config.model_dump()))
    if has_errors(run_rules(config)) or len(synthesized) >= MAX_SYNTHS:
        return
    synthesized.append(1)
    _synthesizes_exactly(config, directory / "out")


def _synthesizes_exactly(config: FastscaleConfig, out: Path) -> None:
    from fastscale.stacks.app import synthesize

    stack = synthesize(resolve(config), out, project_root=out.parent)
    text = stack.stack_file.read_text()
    doc = json.loads(text)  # strict JSON: NaN or Infinity would not parse
    assert "NaN" not in text and "Infinity" not in text
    # every count reaches the stack exactly as validated (no float rounding on the way to the JSON)
    targets = doc["resource"].get("aws_appautoscaling_target", {}).values()
    written = {(t["min_capacity"], t["max_capacity"]) for t in targets}
    expected = set()
    for ep in config.endpoints:
        for _, workload in ep.workloads():
            if not workload.autoscaling.enabled:
                continue
            capacity = ep.instances if ep.model is not None else workload.copies
            expected.add((capacity.min, capacity.max))
    assert written == expected
