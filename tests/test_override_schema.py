"""The provider schemas shipped for `overrides:` validation are the contract tests' extract, cut to the
targetable types: a stale copy (the contract data regenerated for a new provider, this file not) fails here."""

from __future__ import annotations

import json
import subprocess
import sys

from fastscale.infra.model import overrides
from tests.conftest import ROOT


def test_the_shipped_schema_is_the_contract_extract_of_the_targetable_types():
    full = json.loads((ROOT / "tests" / "contract" / "provider_schemas.json").read_text())
    shipped = overrides.schema()
    assert set(shipped["resources"]) == set(overrides.TARGETABLE)
    for type_, body in shipped["resources"].items():
        assert body["attributes"] == full["resources"][type_]["attributes"], type_
    for name, info in shipped["providers"].items():
        assert info["version"] == full["providers"][name]["version"]
    run = subprocess.run([sys.executable, "scripts/gen_override_schema.py", "--check"], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def _indexed(type_: str, bare: str) -> str:
    """`bare` (no list indexes) with `.0` after every list of the schema: a path an override could write."""
    node = {"type": "object", "attributes": overrides.schema()["resources"][type_]["attributes"]}
    out = []
    for part in bare.split("."):
        node = node["attributes"][part]
        out.append(part)
        if node["type"] == "list":
            out.append("0")
            node = node["element"]
    return ".".join(out)


def test_every_owned_attribute_exists_in_the_schema():
    """A renamed attribute would leave a refusal that guards nothing."""
    for type_, owned in overrides.OWNED.items():
        for path in owned:
            problem = overrides.path_problem(type_, _indexed(type_, path), None)
            assert problem is not None and problem.kind == "owned", (type_, path, problem)
