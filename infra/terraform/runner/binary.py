"""Which ``terraform`` (or ``tofu``) binary runs, and whether it can: found from the ``--terraform-bin`` flag,
``$FASTSCALE_TERRAFORM`` or PATH, asked for its version, checked against the oldest one the stacks run on, and the
environment every command runs in. Also the runner's errors (:class:`TerraformError` is the base of them all).

:mod:`.commands` asks this module before it runs anything; nothing here reads a command's output
(:mod:`.messages` does).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fastscale.infra.base.process import run_bounded

#: Environment variable naming the binary (path or name) when no ``--terraform-bin`` is given.
ENV_VAR = "FASTSCALE_TERRAFORM"
#: The CLI flag that points at a binary; named in error messages so users know how to fix them.
CLI_FLAG = "--terraform-bin"
#: Looked up on PATH in this order.
BINARY_NAMES = ("terraform", "tofu")

#: Oldest Terraform that runs the synthesized stacks: CDK for Terraform's own prerequisite. Every OpenTofu
#: release (1.6 and later) qualifies.
MIN_TERRAFORM_VERSION = (1, 2, 0)
#: Seconds ``terraform version`` may take. It answers in well under a second; a binary that does not is
#: not a working terraform (a wrong file, a wrapper waiting for input or the network).
VERSION_TIMEOUT = 20.0

_VERSION_RE = re.compile(r"^(Terraform|OpenTofu) v(\d+)\.(\d+)\.(\d+)", re.MULTILINE)


class TerraformError(Exception):
    """Base class of the runner's errors."""


class TerraformNotFound(TerraformError):
    """No terraform or tofu binary could be found or started."""


class TerraformUnsupported(TerraformError):
    """The binary does not answer ``version`` as terraform/tofu does, in time, or is too old."""


def not_found_hint() -> str:
    return (
        f"Install Terraform (`terraform`) or OpenTofu (`tofu`) and put it on PATH, or point fastscale at "
        f"one with {CLI_FLAG} PATH or the {ENV_VAR} environment variable."
    )


def _resolve(candidate: str) -> str | None:
    """An absolute executable path for a name or path, or None.

    Absolute because Terraform runs in another directory (the run's own): a relative ``./tf`` (or a relative PATH
    entry) means the caller's working directory, and only resolving it here keeps that meaning.
    """
    if os.sep in candidate or (os.altsep and os.altsep in candidate):
        path = Path(candidate).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return os.path.abspath(path)
        return None
    found = shutil.which(candidate)
    return os.path.abspath(found) if found else None


def find_binary(explicit: str | None = None) -> str:
    """Path of the binary to run: ``explicit`` (the CLI flag), then ``$FASTSCALE_TERRAFORM``, then
    ``terraform`` on PATH, then ``tofu`` on PATH.

    A binary the user named explicitly (flag or environment variable) that cannot be found is an error
    of its own rather than a silent fall back to whatever is on PATH: deploying with a different binary
    than the one asked for could use a different state format or provider lock.
    """
    if explicit:
        found = _resolve(explicit)
        if found is None:
            raise TerraformNotFound(
                f"{CLI_FLAG} {explicit!r}: no executable file by that name or path. {not_found_hint()}"
            )
        return found
    from_env = os.environ.get(ENV_VAR, "").strip()
    if from_env:
        found = _resolve(from_env)
        if found is None:
            raise TerraformNotFound(
                f"{ENV_VAR}={from_env!r}: no executable file by that name or path. {not_found_hint()}"
            )
        return found
    for name in BINARY_NAMES:
        found = _resolve(name)
        if found:
            return found
    raise TerraformNotFound(f"Neither `terraform` nor `tofu` was found on PATH. {not_found_hint()}")

@dataclass(frozen=True)
class VersionInfo:
    product: str  # "terraform", "tofu" or "unknown"
    version: tuple[int, int, int]

    def __str__(self) -> str:
        return f"{self.product} {'.'.join(map(str, self.version))}"


def child_env(extra: Mapping[str, str | None]) -> dict[str, str]:
    """The environment every command runs in: the inherited one, two settings for unattended runs, then
    ``extra`` (the runner's ``env``), which overrides both; a ``None`` in it removes the variable."""
    env = dict(os.environ)
    # TF_IN_AUTOMATION trims advice meant for humans at a prompt; CHECKPOINT_DISABLE stops the
    # binary phoning home for update checks (deploys must not depend on network beyond AWS).
    env["TF_IN_AUTOMATION"] = "1"
    env["CHECKPOINT_DISABLE"] = "1"
    for name, value in extra.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def cannot_run(binary: str, exc: OSError) -> TerraformNotFound:
    return TerraformNotFound(f"Cannot run {binary!r}: {exc.strerror}. {not_found_hint()}")


def read_version(binary: str, workdir: Path, env: Mapping[str, str], timeout: float = VERSION_TIMEOUT) -> VersionInfo:
    """What ``binary version`` says it is (``unknown`` 0.0.0 when it does not answer as terraform or tofu); a
    binary that does not answer within ``timeout`` seconds is stopped and refused."""
    try:
        proc = run_bounded([binary, "version"], timeout, cwd=workdir, env=env)
    except OSError as exc:
        raise cannot_run(binary, exc) from exc
    except subprocess.TimeoutExpired:
        raise TerraformUnsupported(
            f"`{binary} version` did not answer within {timeout:g} s and was stopped; "
            f"check that it is a working terraform or tofu binary. {not_found_hint()}"
        ) from None
    match = _VERSION_RE.search(proc.stdout)
    if match:
        product = "terraform" if match.group(1) == "Terraform" else "tofu"
        numbers = (int(match.group(2)), int(match.group(3)), int(match.group(4)))
        return VersionInfo(product, numbers)
    return VersionInfo("unknown", (0, 0, 0))


def check_supported(binary: str, info: VersionInfo) -> VersionInfo:
    """``info``, or TerraformUnsupported when the binary is not terraform/tofu or is too old."""
    if info.product == "unknown":
        raise TerraformUnsupported(
            f"{binary!r} does not answer `version` as terraform or tofu does; {not_found_hint()}"
        )
    if info.product == "terraform" and info.version < MIN_TERRAFORM_VERSION:
        wanted = ".".join(map(str, MIN_TERRAFORM_VERSION))
        raise TerraformUnsupported(
            f"{binary} is {info}, older than the {wanted} fastscale's stacks need: install Terraform "
            f"{wanted} or later (or OpenTofu), or point {CLI_FLAG} at it"
        )
    return info
