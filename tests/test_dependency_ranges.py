"""fastscale installs beside other tools: ranges in pyproject.toml, exact versions only in constraints.txt.

The install test puts the lower bounds of three common dependencies (boto3, pydantic, click) into a fresh
virtualenv first, as a user's CI image would hold them, then installs fastscale from this tree without
constraints: pip must keep those versions (they lie in the ranges), `pip check` must pass, and fastscale must
run on them. That virtualenv is kept while pyproject.toml and constraints-floor.txt stay the same
(tests/venv_cache.py); fastscale in it is reinstalled from the tree on every run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import ROOT
from tests.venv_cache import cached_build, locked, reinstall_fastscale

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _requirements() -> list[Requirement]:
    reqs = [Requirement(r) for r in PYPROJECT["dependencies"]]
    for extra in PYPROJECT["optional-dependencies"].values():
        reqs += [Requirement(r) for r in extra]
    return reqs


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{path.name}: {line!r} is not an exact pin"
            pins[canonicalize_name(name)] = version
    return pins


def test_every_dependency_is_a_bounded_range_not_a_pin():
    for req in _requirements():
        ops = {spec.operator for spec in req.specifier}
        assert "==" not in ops and "===" not in ops, f"{req}: exact pins belong in constraints.txt"
        assert ">=" in ops and "<" in ops, f"{req}: needs a lower bound (oldest tested) and an upper bound"


def test_constraints_pin_every_dependency_inside_its_range():
    pins = _pins(ROOT / "constraints.txt")
    for req in _requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"constraints.txt has no exact version for {req.name}"
        assert pins[name] in req.specifier, f"constraints.txt pins {req.name}=={pins[name]}, outside {req.specifier}"


def test_floor_constraints_are_the_lower_bounds_of_the_ranges():
    floor = _pins(ROOT / "constraints-floor.txt")
    lower = {canonicalize_name(r.name): next(s.version for s in r.specifier if s.operator == ">=")
             for r in (Requirement(d) for d in PYPROJECT["dependencies"])}
    assert floor == lower, "constraints-floor.txt and pyproject.toml's lower bounds must move together"


def _tree_copy(dest: Path) -> Path:
    """A copy of the tree to install from, so the build leaves nothing in the checkout."""
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "cdktf.out", ".engines*", "node_modules", "*.egg-info", "build",
        ".mypy*", ".pytest_cache"))
    return dest


@pytest.mark.venv
def test_installs_into_a_venv_that_already_holds_other_versions(tmp_path):
    floor = _pins(ROOT / "constraints-floor.txt")
    held = {name: floor[name] for name in ("boto3", "botocore", "pydantic", "click")}
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PIP_CONSTRAINT")}
    built_now = []

    def build(directory: Path) -> None:
        # The held versions first, then fastscale and whatever else it needs, unconstrained, as a user's pip does.
        venv = directory / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip"]
        pre = subprocess.run([*pip, "install", *(f"{n}=={v}" for n, v in held.items())],
                             env=env, capture_output=True, text=True, timeout=600)
        assert pre.returncode == 0, pre.stderr
        src = _tree_copy(directory / "src")
        install = subprocess.run([*pip, "install", str(src)], env=env, capture_output=True, text=True, timeout=900)
        shutil.rmtree(src)
        assert install.returncode == 0, install.stderr[-3000:]
        built_now.append(directory)

    # Kept while pyproject.toml (the ranges) and constraints-floor.txt (the held versions) stay the same.
    venv = cached_build("held-versions", [ROOT / "pyproject.toml", ROOT / "constraints-floor.txt"], build) / "venv"
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    with locked("held-versions-use"):
        if not built_now:  # the code under test, not the cached one (a build of this run installed this tree)
            reinstall_fastscale(venv, str(_tree_copy(tmp_path / "src")), env)
        listed = subprocess.run([*pip, "list", "--format=freeze", "--disable-pip-version-check"], env=env,
                                capture_output=True, text=True, check=True)
        versions = {canonicalize_name(n): v for n, _, v in (ln.partition("==") for ln in listed.stdout.splitlines())}
        assert {n: versions[n] for n in held} == held, "pip replaced versions that lie inside fastscale's ranges"
        check = subprocess.run([*pip, "check"], env=env, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        example = ROOT / "examples" / "qwen3-8b.yaml"
        run = subprocess.run([str(venv / "bin" / "fastscale"), "validate", str(example)], env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stdout + run.stderr


def test_make_installs_through_the_constraints_file():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    installs = [ln.strip() for ln in makefile.splitlines() if re.search(r"pip install .*-e '\.\[", ln)]
    unconstrained = [ln for ln in installs if "PIP_CONSTRAINT=" not in ln]
    # Only the canary and the constraints refresh take the newest versions; `make setup`/`test` never do.
    assert unconstrained and all(ln.startswith(("$(CANARY_VENV)", ".venv-constraints")) for ln in unconstrained)
    assert any(ln.startswith("PIP_CONSTRAINT=$(CURDIR)/$(CONSTRAINTS) $(BIN)/pip") for ln in installs)
