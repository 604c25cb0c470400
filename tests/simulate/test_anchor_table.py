"""bench/simulate_anchors.md is what scripts/gen_simulate_table.py renders now, and it reproduces the anchors."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.conftest import ROOT


def load_script():
    spec = importlib.util.spec_from_file_location("gen_simulate_table", ROOT / "scripts" / "gen_simulate_table.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script is executed
    spec.loader.exec_module(module)
    return module


def test_committed_table_is_current():
    committed = (ROOT / "bench" / "simulate_anchors.md").read_text(encoding="utf-8")
    assert committed == load_script().render(), "bench/simulate_anchors.md is stale: run python scripts/gen_simulate_table.py"


def test_published_anchors_are_reproduced():
    by = {a.what: a for a in load_script().anchors()}
    fast = by["first scale-out alarm, 10-second metrics"].simulated
    slow = by["first scale-out alarm, 60-second metrics"].simulated
    assert 25 <= fast <= 40 and 170 <= slow <= 195  # ~30 s and ~3 min
    assert 5 <= slow / fast <= 7  # ~6x
    assert by["first request to a copy serving"].simulated == pytest.approx(302, rel=0.05)  # ~5 min
    assert by["instance provisioning"].simulated == pytest.approx(105, abs=1)
    assert by["launch to serving, with container image caching"].simulated == pytest.approx(258, rel=0.05)
    # The image extraction rate is pooled over four published runs, this one among them: within 10%.
    assert by["launch to serving, without container image caching"].simulated == pytest.approx(525, rel=0.10)


def test_table_covers_every_example():
    text = load_script().render()
    for path in sorted((ROOT / "examples").glob("*.yaml")):
        assert f"`examples/{path.name}`" in text
    assert "sharing the link" in text and "times added" in text


def test_check_mode_detects_a_stale_table(tmp_path, monkeypatch):
    script = load_script()
    stale = tmp_path / "simulate_anchors.md"
    stale.write_text("old\n")
    monkeypatch.setattr(script, "OUT", stale)
    monkeypatch.setattr(script, "ROOT", ROOT)
    assert script.main(["--check"]) == 1
    text = script.render()
    stale.write_text(text)
    assert script.main(["--check"]) == 0
