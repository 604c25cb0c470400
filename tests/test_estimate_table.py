"""bench/estimate_table.md is what scripts/gen_estimate_table.py renders now."""

from __future__ import annotations

import importlib.util
import sys

from tests.conftest import ROOT


def load_script():
    spec = importlib.util.spec_from_file_location("gen_estimate_table", ROOT / "scripts" / "gen_estimate_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script is executed
    spec.loader.exec_module(module)
    return module


def test_committed_table_is_current():
    script = load_script()
    committed = (ROOT / "bench" / "estimate_table.md").read_text(encoding="utf-8")
    assert committed == script.render(), "bench/estimate_table.md is stale: run python scripts/gen_estimate_table.py"


def test_table_covers_the_published_runs_and_every_example():
    text = load_script().render()
    for needle in ("Qwen3-8B", "scale from zero", "| 525 |", "| 258 |", "| 302 |"):
        assert needle in text
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        assert f"`examples/{path.name}`" in text


def test_check_mode_detects_a_stale_table(tmp_path, monkeypatch):
    script = load_script()
    stale = tmp_path / "estimate_table.md"
    stale.write_text("old\n")
    monkeypatch.setattr(script, "OUT", stale)
    monkeypatch.setattr(script, "ROOT", tmp_path)
    assert script.main(["--check"]) == 1
    assert script.main([]) == 0
    assert script.main(["--check"]) == 0
