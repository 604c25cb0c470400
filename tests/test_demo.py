"""`make demo`: what it installs (the runtime only, visibly), and what scripts/demo.sh prints and writes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs the whole demo script over every example: `make test` runs it, `make test-fast` does not

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.yaml"))


def _installs(project: Path, target: str) -> list[str]:
    """The pip installs `make -n TARGET` would run in ``project`` (nothing is run)."""
    out = subprocess.run(["make", "-n", "-C", str(project), target], capture_output=True, text=True, check=True)
    return [ln for ln in out.stdout.splitlines() if "pip install" in ln]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the Makefile and the files its install stamps depend on (older than any stamp made later)."""
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
        os.utime(tmp_path / name, (1, 1))
    return tmp_path


def test_demo_installs_the_runtime_only_and_shows_pip_progress(project):
    # no [dev] extra, and no --quiet: pip's own progress is the demo's first output
    assert _installs(project, "demo") == [f"PIP_CONSTRAINT={project}/constraints.txt .venv/bin/pip install -e ."]


def test_setup_after_demo_still_installs_the_dev_tools(project):
    (project / ".venv").mkdir()
    (project / ".venv" / ".installed-runtime").touch()  # what `make demo` leaves
    assert _installs(project, "demo") == []
    installs = _installs(project, "setup")  # the environment `make test` installs first
    assert len(installs) == 1 and "-e '.[dev]'" in installs[0]
    (project / ".venv" / ".installed").touch()  # after `make test`: the demo uses that environment as it is
    assert _installs(project, "demo") == []


def test_demo_script_writes_every_example_and_ends_with_the_next_steps(tmp_path):
    fastscale = Path(sys.executable).parent / "fastscale"
    env = {**os.environ, "FASTSCALE": str(fastscale), "OUT": str(tmp_path)}
    env.pop("FASTSCALE_ENDPOINT_URL", None)
    run = subprocess.run(["bash", str(ROOT / "scripts" / "demo.sh")], capture_output=True, text=True, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    for name in EXAMPLES:
        written = list((tmp_path / name / "stacks").glob("*/cdk.tf.json"))
        assert len(written) == 1, name
        assert f"  ✓ {name}: {tmp_path}/{name}/stacks/{written[0].parent.name}/cdk.tf.json" in lines
        assert "first capacity" in (tmp_path / name / "estimate.txt").read_text()
    assert len(lines) < 100  # a summary, not every example's tables
    tail = "\n".join(lines[-4:])
    assert "fastscale emulator" in tail and "fastscale init demo --emulator http://127.0.0.1:5000" in tail
