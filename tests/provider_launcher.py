"""The provider mirror the suite's Terraform commands install hashicorp/aws from: a copy of the mirror found on the
machine (tests/tf_mirror.py) whose provider executable is a two-line launcher of the found one.

Terraform checks a provider package against the lock file's ``h1:`` hash at every command that loads it: plan,
apply, ``show -json``, validate and init each read and hash the whole package directory. hashicorp/aws 5.x is one
707 MB executable, so that check costs about half a second of CPU per command, about a fifth of a plan's, and the
suite runs several hundred such commands. A launcher (``exec`` of the found executable) makes the package a few
bytes: the lock file, its hashes and Terraform's check of them work as for any package, and every command runs the
same provider binary. ``fastscale`` and the tests see only an ordinary filesystem mirror.

A mirror named explicitly in ``FASTSCALE_TF_MIRROR`` is used as it is: ``FASTSCALE_TF_MIRROR=/opt/tf-plugins
make test`` runs the suite against the package itself. The launcher mirror is kept in the tests' cache
(tests/venv_cache.py), rebuilt when the found executable changes.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from fastscale.stacks.testing.terraform import AWS_PROVIDER, MIRROR_ENV, find_aws_mirror
from tests.venv_cache import cached_build

EXECUTABLE_PREFIX = "terraform-provider-"


def launcher(target: Path) -> str:
    """A shell script that runs ``target`` in its own process, with the arguments, environment and standard
    streams it was given (``exec``: the provider keeps the process Terraform started)."""
    return f"#!/bin/sh\nexec {shlex.quote(str(target))} \"$@\"\n"


def launcher_mirror(mirror: Path, version: str) -> Path:
    """A mirror holding hashicorp/aws ``version`` of ``mirror``, one directory per platform, with a launcher of each
    provider executable and a copy of every other file of the package."""
    package = mirror / AWS_PROVIDER / version
    executables = sorted(p for p in package.glob(f"*/{EXECUTABLE_PREFIX}*") if p.is_file())
    assert executables, f"no {EXECUTABLE_PREFIX}* executable under {package}"
    # The launchers name the executables by path: another executable at that path, or another size or time
    # (the same file replaced), builds the mirror anew.
    salt = "\n".join(f"{p.resolve()} {p.stat().st_size} {p.stat().st_mtime_ns}" for p in executables)

    def build(directory: Path) -> None:
        for platform in sorted(p for p in package.iterdir() if p.is_dir()):
            into = directory / AWS_PROVIDER / version / platform.name
            into.mkdir(parents=True)
            for item in sorted(platform.iterdir()):
                if item.name.startswith(EXECUTABLE_PREFIX):
                    (into / item.name).write_text(launcher(item.resolve()))
                    (into / item.name).chmod(0o755)
                elif item.is_file():
                    shutil.copyfile(item, into / item.name)

    return cached_build("tf-mirror", [], build, salt=salt)


def use_launcher_mirror() -> Path | None:
    """Point ``FASTSCALE_TF_MIRROR`` (and so every mirror lookup of this process and the processes it starts) at
    the launcher mirror of the mirror found on this machine, unless it names a mirror already or none is found.
    Returns the mirror now in use, or None."""
    if os.environ.get(MIRROR_ENV):
        return Path(os.environ[MIRROR_ENV])
    found = find_aws_mirror()
    if found is None:
        return None
    chosen = launcher_mirror(*found)
    os.environ[MIRROR_ENV] = str(chosen)
    return chosen


__all__ = ["launcher", "launcher_mirror", "use_launcher_mirror"]
