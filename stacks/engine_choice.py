"""Which CDK engine synthesizes the stacks: CDK for Terraform (`cdktf`) or CDK Terrain (`cdktn`).

Both have the same construct API and write the same Terraform JSON (CI synthesizes every example with both
and compares). CDK for Terraform was archived upstream on 2025-12-10; CDK Terrain is its maintained
continuation. The engine is chosen without editing code:

- `FASTSCALE_ENGINE=cdktf` or `FASTSCALE_ENGINE=cdktn` picks one explicitly (an error if it is not installed);
- unset, CDK Terrain is used when it is installed (`pip install 'fastscale[terrain]'`), CDK for Terraform
  otherwise (it comes with fastscale itself).

This module only reads package metadata: it imports neither engine, so `fastscale --version` stays fast.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass

from fastscale.infra.base.process import run_bounded

ENV_VAR = "FASTSCALE_ENGINE"

#: Python module -> what people call it. The order is the preference when FASTSCALE_ENGINE is unset.
ENGINES: dict[str, str] = {"cdktn": "CDK Terrain", "cdktf": "CDK for Terraform"}

INSTALL_HINT = {
    "cdktn": "install it with: pip install 'fastscale[terrain]'",
    "cdktf": "it comes with fastscale: reinstall fastscale (pip install --force-reinstall fastscale)",
}


class EngineUnavailable(RuntimeError):
    """No usable engine: the message says which one was asked for and how to install it."""


class UnknownEngine(EngineUnavailable):
    """The environment names an engine that does not exist: a mistake in the input, not a failure."""

    exit_code = 2  # bad input, as the CLI's error handling reads it


@dataclass(frozen=True)
class Engine:
    module: str  # "cdktf" or "cdktn"
    label: str  # "CDK for Terraform" / "CDK Terrain"
    version: str

    def describe(self) -> str:
        return f"{self.label} ({self.module} {self.version})"


def is_installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _engine(module: str) -> Engine:
    try:
        version = importlib.metadata.version(module)
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return Engine(module, ENGINES[module], version)


def select_engine(env: Mapping[str, str] | None = None) -> Engine:
    """The engine to synthesize with (see the module docstring for the rules)."""
    env = os.environ if env is None else env
    wanted = env.get(ENV_VAR, "").strip().lower()
    if wanted:
        if wanted not in ENGINES:
            raise UnknownEngine(
                f"{ENV_VAR}={wanted!r} is not an engine fastscale knows: use 'cdktf' (CDK for Terraform) "
                "or 'cdktn' (CDK Terrain), or unset it")
        if not is_installed(wanted):
            raise EngineUnavailable(f"{ENV_VAR}={wanted} asks for {ENGINES[wanted]}, which is not installed: "
                                    f"{INSTALL_HINT[wanted]}")
        return _engine(wanted)
    for module in ENGINES:
        if is_installed(module):
            return _engine(module)
    raise EngineUnavailable("no CDK engine is installed: reinstall fastscale (it brings CDK for Terraform), "
                            "or add CDK Terrain with pip install 'fastscale[terrain]'")


#: Environment variable jsii reads for the node binary (else `node` on PATH).
NODE_ENV_VAR = "JSII_NODE"
#: Seconds `node --version` may take before node is declared unusable.
NODE_CHECK_TIMEOUT = 15.0


#: V8's young generation size per semi-space for the engine's node process, in MB (node's default: 16).
#: Synthesis keeps its objects (the construct tree) to the end, so a small young generation only promotes
#: them sooner: node's peak memory at 100 endpoints drops by about a fifth, at no measurable cost in time
#: (bench/README.md).
NODE_SEMI_SPACE_MB = 1


def node_options(current: str) -> str:
    """NODE_OPTIONS for the engine's node: `current` plus the young generation size, unless it sets one."""
    if "--max-semi-space-size" in current:
        return current
    return f"{current} --max-semi-space-size={NODE_SEMI_SPACE_MB}".strip()


def require_node(env: Mapping[str, str] | None = None) -> str:
    """Path of a working node, which both engines run on (through jsii); EngineUnavailable otherwise.

    Checked before the engine is imported: without it jsii fails at import with a long traceback of its
    own that never says "install Node.js".
    """
    import shutil
    import subprocess

    env = os.environ if env is None else env
    wanted = env.get(NODE_ENV_VAR, "").strip() or "node"
    where = f"{NODE_ENV_VAR}={wanted!r}" if env.get(NODE_ENV_VAR, "").strip() else "`node` on PATH"
    found = shutil.which(wanted)
    if found is None:
        raise EngineUnavailable(
            f"synthesis needs Node.js (the CDK engine runs on it through jsii) and {where} was not found: "
            f"install Node.js 20 or later, or set {NODE_ENV_VAR} to its path"
        )
    try:
        proc = run_bounded([found, "--version"], NODE_CHECK_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        raise EngineUnavailable(
            f"`{found} --version` did not answer within {NODE_CHECK_TIMEOUT:g} s: check the Node.js installation"
        ) from None
    except OSError as exc:
        raise EngineUnavailable(f"cannot run Node.js at {found}: {exc.strerror or exc}") from None
    answer = proc.stdout.strip()
    if proc.returncode != 0 or not answer.startswith("v"):
        said = " ".join((proc.stderr or proc.stdout).split())[:200] or "nothing"
        raise EngineUnavailable(
            f"{found} does not work as Node.js (`--version` exited {proc.returncode} and said: {said}): "
            f"install Node.js 20 or later, or set {NODE_ENV_VAR} to a working node"
        )
    return found


def engine_summary() -> str:
    """One line for `--version` and synth's summary; never raises."""
    try:
        return select_engine().describe()
    except EngineUnavailable as exc:
        return f"none ({exc})"
