"""vulture, as `make test` runs it ([tool.vulture] in pyproject.toml): the tree has no unused code, and a new
unused function is reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VULTURE = Path(sys.executable).parent / "vulture"


def test_the_tree_has_no_unused_code():
    run = subprocess.run([str(VULTURE)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_unused_function_is_reported(tmp_path):
    extra = tmp_path / "extra.py"
    extra.write_text("def never_called_anywhere():\n    return 1\n")
    run = subprocess.run([str(VULTURE), str(extra)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and "never_called_anywhere" in run.stdout
