"""The cache of the install tests' virtualenvs (tests/venv_cache.py): one build per content of its inputs."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests import venv_cache


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(venv_cache, "CACHE", tmp_path / "cache")
    return tmp_path / "cache"


def counting_build(calls: list[Path]):
    def build(directory: Path) -> None:
        calls.append(directory)
        (directory / "made").write_text(str(len(calls)))

    return build


def test_the_same_inputs_are_built_once_and_a_changed_input_builds_anew_removing_the_old(cache, tmp_path):
    inputs = tmp_path / "pyproject.toml"
    inputs.write_text("a")
    calls: list[Path] = []
    build = counting_build(calls)
    first = venv_cache.cached_build("env", [inputs], build)
    assert venv_cache.cached_build("env", [inputs], build) == first and len(calls) == 1
    assert (first / "made").read_text() == "1"

    inputs.write_text("b")
    second = venv_cache.cached_build("env", [inputs], build)
    assert second != first and len(calls) == 2 and (second / "made").read_text() == "2"
    assert not first.exists()  # the build of the old content is gone
    assert venv_cache.cached_build("env", [inputs], build, salt="other requirements") != second


def test_a_failed_build_leaves_nothing_and_the_next_one_starts_afresh(cache, tmp_path):
    def failing(directory: Path) -> None:
        (directory / "half").write_text("")
        raise RuntimeError("pip failed")

    with pytest.raises(RuntimeError):
        venv_cache.cached_build("env", [], failing)
    assert [p.name for p in cache.iterdir()] == ["env.lock"]
    calls: list[Path] = []
    built = venv_cache.cached_build("env", [], counting_build(calls))
    assert calls == [built] and not (built / "half").exists()


def test_other_names_are_never_removed(cache, tmp_path):
    calls: list[Path] = []
    kept = venv_cache.cached_build("env-two", [], counting_build(calls))
    venv_cache.cached_build("env", [], counting_build(calls))
    assert kept.is_dir() and len(calls) == 2


def test_concurrent_askers_wait_for_one_build(cache):
    calls: list[Path] = []

    def slow(directory: Path) -> None:
        calls.append(directory)
        time.sleep(0.3)

    results: list[Path] = []
    threads = [threading.Thread(target=lambda: results.append(venv_cache.cached_build("env", [], slow)))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(set(results)) == 1 and len(results) == 3
