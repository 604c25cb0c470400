"""Where several configs are synthesized, and what is refused before any of them is written."""

from __future__ import annotations

import pytest

from fastscale.infra.config import load_config
from fastscale.infra.model.resolved import resolve
from fastscale.infra.terraform.outputs import OutputPathError, synth_targets
from tests.conftest import EXAMPLES


def _named(paths):
    return [(str(p), resolve(load_config(p))) for p in paths]


def test_each_config_gets_its_stack_name_under_the_output_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    configs = _named(EXAMPLES[:3])
    targets = synth_targets(configs, "out")
    assert [t.name for t in targets] == [c.project for _, c in configs]
    assert all(t.parent.as_posix() == "out" for t in targets)
    assert (tmp_path / "out").is_dir() and not any((tmp_path / "out").iterdir())  # checked, nothing written


def test_one_stack_name_twice_is_refused_naming_both_files(tmp_path):
    first, second = _named([EXAMPLES[0], EXAMPLES[0]])
    with pytest.raises(OutputPathError, match=f"{first[0]} and {second[0]} both define stack"):
        synth_targets([first, second], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_symbolic_link_on_the_way_of_a_later_config_is_refused(tmp_path):
    configs = _named(EXAMPLES[:2])
    later = tmp_path / "out" / configs[1][1].project
    later.mkdir(parents=True)
    (later / "stacks").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OutputPathError, match="symbolic link"):
        synth_targets(configs, tmp_path / "out")
    assert not (tmp_path / "out" / configs[0][1].project).exists()
