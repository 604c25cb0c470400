"""Helpers shared by the CLI tests: fixture stacks of ``terraform_data``, running the CLI, reading state."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.cli.runtime import Runtime

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tf_data"
REAL_BINARY = shutil.which("terraform") or shutil.which("tofu")
#: For a test that runs the real binary: marked `terraform`, which tests/conftest.py skips where neither terraform
#: nor tofu is on PATH (and which makes the test slow).
needs_binary = pytest.mark.terraform

#: What the fixture stacks' state is called: the real stack's local backend default for project "demo" in
#: us-east-1 (infra.model.state.default_state_file).
STATE_FILE = "terraform.demo.us-east-1.tfstate"


# --------------------------------------------------------------------------------------------- helpers


def fixture_addresses(name: str) -> set[str]:
    doc = json.loads((FIXTURES / name / "main.tf.json").read_text())
    return {f"terraform_data.{r}" for r in doc["resource"]["terraform_data"]}


@dataclass
class FakeSynthResult:
    outdir: Path
    stack_name: str
    stack_dir: Path


class FixtureSynth:
    """Stands in for stacks.app.synthesize: writes a fixture stack (or a given document) where the real
    stack (the resolved one it is handed) would go, with the real stack's local backend (state three levels up, beside the output dir)."""

    def __init__(self, stack: str | dict = "basic"):
        self.stack = stack
        self.calls: list[str] = []

    def __call__(self, resolved, outdir):
        self.calls.append(str(outdir))
        stack_dir = Path(outdir) / "stacks" / resolved.name
        stack_dir.mkdir(parents=True, exist_ok=True)
        doc = self.stack if isinstance(self.stack, dict) else json.loads((FIXTURES / self.stack / "main.tf.json").read_text())
        doc = {**doc, "terraform": {"backend": {"local": {"path": f"../../../terraform.{resolved.name}.{resolved.region}.tfstate"}}}}
        (stack_dir / "cdk.tf.json").write_text(json.dumps(doc))
        return FakeSynthResult(Path(outdir), resolved.name, stack_dir)


class TestRuntime:
    """The :class:`Runtime` a CLI test hands to every command it runs (as Click's context object): the real
    one with the test's stand-ins swapped in by :meth:`use`. The autouse ``runtime`` fixture of
    tests/cli/conftest.py makes one per test and :func:`active` while it runs."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self) -> None:
        self.runtime = Runtime.default()

    def use(self, **parts) -> Runtime:
        """Swap the named parts (``synthesize=``, ``aws_clients=``, ...) for every later command of the test."""
        self.runtime = self.runtime.replace(**parts)
        return self.runtime


_active: list[TestRuntime] = []


@contextmanager
def active(runtime: TestRuntime) -> Iterator[TestRuntime]:
    """``runtime`` is the one :func:`run` and :func:`current_runtime` hand in until the block ends."""
    _active.append(runtime)
    try:
        yield runtime
    finally:
        _active.remove(runtime)


def current_runtime() -> Runtime | None:
    """The running test's runtime (None outside tests/cli: the CLI then builds the real one)."""
    return _active[-1].runtime if _active else None


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False, obj=current_runtime())


def state_resources(project: Path) -> dict[str, str]:
    """Address -> instance status ("ok", or "tainted" for one whose provisioner failed or was stopped)."""
    path = project / STATE_FILE
    if not path.exists():
        return {}
    return {
        f"{r['type']}.{r['name']}": r["instances"][0].get("status", "ok")
        for r in json.loads(path.read_text())["resources"]
    }


def state_addresses(project: Path) -> set[str]:
    return {address for address, status in state_resources(project).items() if status == "ok"}


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_invalid(project: Path) -> str:
    config = yaml.safe_load((project / "fastscale.yaml").read_text())
    config["endpoints"][0]["instance_type"] = "ml.g6.2xlarg"  # not an instance type
    path = project / "invalid.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)
