"""A new user's path, end to end, in a fresh virtualenv: no editable install, no project checkout on sys.path.

`fastscale init` writes a project; its README's commands are run as written (a new venv, `pip install -r
requirements.txt`, then the make targets CI runs: validate, estimate, synth, and the checkov scan). The project
directory holds its own `cli/`, `infra/`, `stacks/` and `templates/` packages, which must not shadow fastscale's.
The same venv then shows that only the one import name `fastscale` was installed.

The project and its virtualenv are kept outside the tree (tests/venv_cache.py): the README's install
commands make the virtualenv the first time, in a fresh one, and it is reused while pyproject.toml, the
constraints, the project's requirement files and the Python stay the same. Every run writes the project anew
beside it and runs all of the README's commands again, whose `pip install -r requirements.txt` reinstalls
fastscale from this tree (test_the_venv_holds_this_trees_code checks that no cached copy runs).
checkov comes from the virtualenv that scripts/run_checkov.sh keeps (installed here on first use), as
`make scan` lets a project choose.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fastscale.infra.project.scaffold import installed_requirement
from fastscale.infra.terraform.runner import TerraformNotFound, find_binary
from fastscale.stacks.testing import find_aws_mirror
from tests.conftest import ROOT
from tests.venv_cache import cached_build, locked

pytestmark = pytest.mark.venv

SHADOWS = ("cli", "infra", "stacks", "templates")


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment a user's shell would have: the development venv neither active nor on PATH."""
    dev_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != dev_bin)
    env.update(extra)
    return env


def _run(args, cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def _readme_commands(readme: str) -> list[str]:
    """The README's first bash block, up to the first command that needs an AWS account."""
    block = re.search(r"```bash\n(.*?)```", readme, re.S)
    assert block, "the README shows its commands in a bash block"
    commands = []
    for line in block.group(1).splitlines():
        command = line.split("#", 1)[0].strip()
        if command.startswith(("make deploy", "make destroy", "make plan")):
            break
        if command:
            commands.append(command)
    return commands


@pytest.fixture(scope="module")
def installed_project(tmp_path_factory):
    """A project written by `fastscale init`, with the README's setup and checks run in it."""
    if shutil.which("python3", path=_clean_env()["PATH"]) is None:
        pytest.fail("python3 must be on PATH: the generated README creates its venv with it")
    checkov = subprocess.run(["bash", str(ROOT / "scripts" / "run_checkov.sh"), "--install"],
                             capture_output=True, text=True, timeout=900)
    assert checkov.returncode == 0, checkov.stderr
    checkov_venv = Path(checkov.stdout.strip()).parent.parent

    base = tmp_path_factory.mktemp("fresh")
    written = base / "proj"
    init = _run([str(Path(sys.executable).parent / "fastscale"), "init", str(written), "--project", "fresh-demo"],
                cwd=base, env=_clean_env())
    assert init.returncode == 0, init.stderr + init.stdout
    for name in SHADOWS:  # a user's own packages with fastscale's generic folder names
        (written / name).mkdir()
        (written / name / "__init__.py").write_text(f"raise ImportError('the project folder {name}/ was imported')\n")

    commands = _readme_commands((written / "README.md").read_text())
    script = "set -e\n" + "\n".join(commands)
    env = _clean_env(CHECKOV_VENV=str(checkov_venv))
    # pip builds a local checkout in place: remove what that build leaves in this tree, if it was not there.
    leftovers = [p for p in (ROOT / "build", ROOT / "fastscale.egg-info") if not p.exists()]
    try:
        with locked("fresh-install-use"):  # one run at a time uses the kept project
            project, left = _kept_project(written, commands, env)
            steps = _run(["bash", "-c", "set -e\n" + "\n".join(left)], cwd=project, env=env, timeout=1500)
            yield project, env, script, steps
    finally:
        for path in leftovers:
            shutil.rmtree(path, ignore_errors=True)


def _kept_project(written: Path, commands: list[str], env: dict[str, str]) -> tuple[Path, list[str]]:
    """The project `init` wrote, moved where its virtualenv is kept (a virtualenv cannot move), and the README's
    commands still to run there. Its install commands (those before its first `make`) ran there in a fresh `.venv`
    the first time: then the rest is left, in that `.venv`. Every later run replaces all but `.venv` with what
    `init` wrote now, and all the commands are left: they reinstall fastscale from this tree."""
    install = commands[:next(i for i, c in enumerate(commands) if c.startswith("make"))]
    assert install and install[0] == "python3 -m venv .venv && . .venv/bin/activate", install
    built_now = []

    def build(directory: Path) -> None:
        shutil.copytree(written, directory / "proj")
        done = _run(["bash", "-c", "set -e\n" + "\n".join(install)], cwd=directory / "proj", env=env, timeout=1500)
        assert done.returncode == 0, f"{install}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        built_now.append(directory)

    python3 = shutil.which("python3", path=env["PATH"])
    assert python3 is not None
    salt = "\n".join([*install, *(p.read_text() for p in sorted(written.glob("requirements*.txt")))])
    project = cached_build("fresh-install", [ROOT / "pyproject.toml", ROOT / "constraints.txt"], build,
                           python=python3, salt=salt) / "proj"
    for path in project.iterdir():
        if path.name != ".venv":
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    shutil.copytree(written, project, dirs_exist_ok=True)
    return project, [". .venv/bin/activate", *commands[len(install):]] if built_now else commands


def test_requirements_name_the_fastscale_that_ran_init(installed_project):
    project, *_ = installed_project
    lines = [ln for ln in (project / "requirements.txt").read_text().splitlines() if ln and not ln.startswith("#")]
    assert lines == [installed_requirement()]


def test_readme_steps_pass_in_a_fresh_venv(installed_project):
    project, _, script, steps = installed_project
    assert steps.returncode == 0, f"{script}\n--- stdout\n{steps.stdout[-4000:]}\n--- stderr\n{steps.stderr[-4000:]}"
    assert "make scan" in script and "pip install -r requirements.txt" in script
    # The project's own stack tests ran against the snapshot init wrote (tests/test_stack.py).
    assert "make test" in script and "pip install -r requirements-dev.txt" in script
    # Its `terraform validate` runs wherever the binary (found as fastscale finds it) and a provider mirror are.
    passed = r"\b5 passed\b" if _validates() else r"\b4 passed, 1 skipped\b"
    assert re.search(passed, steps.stdout) and "1 snapshot passed" in steps.stdout, steps.stdout[-3000:]
    assert (project / "cdktf.out" / "stacks" / "fresh-demo" / "cdk.tf.json").is_file()
    assert re.search(r"Passed checks: [1-9]\d*, Failed checks: 0", steps.stdout), steps.stdout[-2000:]


def _validates() -> bool:
    """Whether the project's `test_stack_is_valid_terraform` runs here rather than skipping."""
    try:
        find_binary()
    except TerraformNotFound:
        return False
    return find_aws_mirror() is not None


def test_the_install_is_not_editable_and_only_fastscale_is_importable(installed_project, tmp_path):
    project, env, _, steps = installed_project
    assert steps.returncode == 0
    python = str(project / ".venv" / "bin" / "python")
    where = _run([python, "-c", "import fastscale.infra as m; print(m.__file__)"], cwd=tmp_path, env=env)
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(project / ".venv"), "installed into the venv, not linked"
    for name in SHADOWS:
        result = _run([python, "-c", f"import {name}"], cwd=tmp_path, env=env)
        assert result.returncode != 0 and "ModuleNotFoundError" in result.stderr, (name, result.stderr)
    version = _run([str(project / ".venv" / "bin" / "fastscale"), "--version"], cwd=tmp_path, env=env)
    assert version.returncode == 0 and re.search(r"fastscale, version \d", version.stdout), version


def test_the_venv_holds_this_trees_code(installed_project, tmp_path):
    # The virtualenv is reused between runs (tests/venv_cache.py): fastscale in it must be the tree under test.
    project, env, _, steps = installed_project
    assert steps.returncode == 0
    python = str(project / ".venv" / "bin" / "python")
    where = _run([python, "-c", "import fastscale.infra, pathlib; print(pathlib.Path(fastscale.infra.__file__).parents[1])"],
                 cwd=tmp_path, env=env)
    assert where.returncode == 0, where.stderr
    installed = Path(where.stdout.strip())
    modules = [p.relative_to(ROOT) for top in SHADOWS for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts]
    assert modules
    stale = [str(m) for m in modules if not (installed / m).is_file() or (installed / m).read_bytes() != (ROOT / m).read_bytes()]
    assert stale == [], f"the venv's fastscale differs from the tree in {stale[:5]}"


def test_main_py_runs_beside_the_projects_own_packages(installed_project, tmp_path):
    # `cdktf synth` runs `python3 main.py` from the project directory: its folders come first on sys.path.
    project, env, _, steps = installed_project
    assert steps.returncode == 0
    out = tmp_path / "cdktf-out"
    result = _run([str(project / ".venv" / "bin" / "python"), "main.py"], cwd=project,
                  env={**env, "CDKTF_OUTDIR": str(out)})
    assert result.returncode == 0, result.stderr
    assert (out / "stacks" / "fresh-demo" / "cdk.tf.json").is_file()
