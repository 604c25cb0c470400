"""The distribution installs every package folder of the tree, each under the one import name `fastscale`."""

from __future__ import annotations

import tomllib
from pathlib import Path

from tests.conftest import ROOT

TOP_LEVEL = ("cli", "infra", "stacks", "templates")


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _module_folders() -> dict[str, Path]:
    """Dotted `fastscale.*` name -> folder, for every folder under the top-level folders that holds Python modules."""
    found = {}
    for top in TOP_LEVEL:
        for folder in [ROOT / top, *(p for p in (ROOT / top).rglob("*") if p.is_dir())]:
            if "__pycache__" in folder.parts or not any(folder.glob("*.py")):
                continue
            found[".".join(("fastscale", *folder.relative_to(ROOT).parts))] = folder
    return found


def test_packages_list_names_every_package_folder():
    listed = set(_pyproject()["tool"]["setuptools"]["packages"])
    folders = set(_module_folders())
    assert folders - listed == set(), "package folders missing from [tool.setuptools] packages: they would not install"
    assert listed - folders == set(), "[tool.setuptools] packages names folders that do not exist"


def test_every_package_folder_is_a_regular_package():
    # A folder without __init__.py would install as a namespace package and hide typos in imports.
    assert [name for name, folder in _module_folders().items() if not (folder / "__init__.py").is_file()] == []


def test_top_level_folders_map_under_fastscale_only():
    mapping = _pyproject()["tool"]["setuptools"]["package-dir"]
    assert mapping == {f"fastscale.{top}": top for top in TOP_LEVEL}
    assert all(name.startswith("fastscale.") for name in _pyproject()["tool"]["setuptools"]["packages"])
