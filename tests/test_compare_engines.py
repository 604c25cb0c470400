"""scripts/compare_engines.py: equal documents pass whatever the version stamp and whitespace; any other
difference fails and is named."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compare_engines.py"


@pytest.fixture(scope="module")
def compare():
    spec = importlib.util.spec_from_file_location("compare_engines", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOC = {"//": {"metadata": {"version": "0.21.0", "stackName": "s"}},
       "resource": {"aws_iam_role": {"r": {"name": "x", "tags": {}}}}, "output": {"o": {"value": []}}}


def write(root: Path, doc: dict, indent: int | None) -> None:
    path = root / "example" / "stacks" / "s" / "cdk.tf.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc, indent=indent))


def test_only_the_version_stamp_and_whitespace_differ(compare, tmp_path, capsys):
    other = json.loads(json.dumps(DOC))
    other["//"]["metadata"]["version"] = "0.24.0"
    write(tmp_path / "a", DOC, 2)
    write(tmp_path / "b", other, None)
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "same (engine versions 0.21.0 / 0.24.0)" in capsys.readouterr().out


def test_a_changed_attribute_fails_and_names_its_path(compare, tmp_path, capsys):
    other = json.loads(json.dumps(DOC))
    other["resource"]["aws_iam_role"]["r"]["name"] = "y"
    other["output"]["o"]["value"] = ["z"]
    write(tmp_path / "a", DOC, 2)
    write(tmp_path / "b", other, 2)
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    out = capsys.readouterr().out
    assert "2 difference(s)" in out
    assert 'resource.aws_iam_role.r.name: "x" != "y"' in out
    assert "output.o.value: [] != [\"z\"]" in out


def test_different_sets_of_stacks_are_bad_input(compare, tmp_path, capsys):
    write(tmp_path / "a", DOC, 2)
    (tmp_path / "b").mkdir()
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    assert "different stacks" in capsys.readouterr().err
