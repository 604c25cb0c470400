"""docs/rules.md must be exactly what scripts/gen_rules_doc.py generates from the rule registry."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from fastscale.infra.rules import all_rules

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gen_rules_doc.py"
DOC = ROOT / "docs" / "rules.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_rules_doc", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rules_doc_is_up_to_date():
    assert DOC.read_text(encoding="utf-8") == _generator().render(), (
        "docs/rules.md is stale: run python scripts/gen_rules_doc.py"
    )


def test_rules_doc_covers_every_rule_with_its_example():
    text = DOC.read_text(encoding="utf-8")
    for r in all_rules():
        assert f"## {r.code} `{r.name}`" in text
        assert f"**{r.severity.value}**: {r.summary}" in text
        assert sys.modules[r.check.__module__].EXAMPLE.rstrip("\n") in text


def test_check_mode_fails_on_a_stale_doc(tmp_path):
    gen = _generator()
    stale = tmp_path / "rules.md"
    stale.write_text(DOC.read_text(encoding="utf-8") + "\nedited by hand\n", encoding="utf-8")
    assert gen.main(["--check"], target=stale) == 1
    assert gen.main([], target=stale) == 0  # regenerates it
    assert gen.main(["--check"], target=stale) == 0
    assert stale.read_text(encoding="utf-8") == DOC.read_text(encoding="utf-8")
    assert gen.main(["--check"], target=tmp_path / "missing.md") == 1


def test_script_runs_standalone():
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
