"""Where fastscale may write: checks run before `synth` and `init` write anything.

An output directory is refused (exit code 2, nothing written) when it lies inside a ``.git`` directory
(generated files there corrupt the repository or are silently never committed), when it cannot be created,
or when it cannot be written. A file or directory fastscale writes is never a symbolic link: writing
through one would change a file elsewhere — ``cdk.tf.json`` pointing at a shell profile, a dangling link
in a project template pointing outside the project — and the link is left for the user to remove.

Pure Python (no cdktf), shared by the synthesizer and the project scaffold.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fastscale.infra.base.safe_files import refuse_special, special_kind
from fastscale.infra.model.naming import stack_name
from fastscale.infra.model.state import local_state_placement

if TYPE_CHECKING:
    from fastscale.infra.config import FastscaleConfig


class OutputPathError(ValueError):
    """An output path fastscale must not or cannot write; bad input (exit code 2), nothing was written."""

    exit_code = 2


def _inside_git(path: Path) -> bool:
    return ".git" in path.parts


def check_output_dir(directory: str | os.PathLike[str], what: str = "output directory") -> Path:
    """Create ``directory`` if needed and prove it can be written; returns it as given (not resolved)."""
    given = Path(directory)
    absolute = Path(os.path.abspath(given))
    if _inside_git(absolute) or _inside_git(absolute.resolve()):
        raise OutputPathError(
            f"{what} {str(given)!r} is inside a .git directory; generated files there would corrupt or "
            "bypass the repository: choose a directory outside .git"
        )
    if os.path.lexists(absolute) and not absolute.is_dir():
        raise OutputPathError(f"{what} {str(given)!r} exists and is not a directory: choose another path")
    try:
        absolute.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(f"cannot create {what} {str(given)!r}: {exc.strerror or exc}") from None
    try:
        handle, probe = tempfile.mkstemp(prefix=".fastscale-write-test-", dir=absolute)
    except OSError as exc:
        raise OutputPathError(
            f"cannot write into {what} {str(given)!r} ({exc.strerror or exc}): check its permissions, or "
            "choose another directory"
        ) from None
    os.close(handle)
    os.unlink(probe)
    return given


def refuse_symlinks(paths: Iterable[str | os.PathLike[str]], what: str = "output file") -> None:
    """Refuse to write any of ``paths`` (or create them inside a directory) that is a symbolic link, or a
    FIFO, device or socket (writing to one would block, or go somewhere else entirely)."""
    for raw in paths:
        path = Path(raw)
        if path.is_symlink():
            raise OutputPathError(
                f"{what} {str(path)!r} is a symbolic link (to {os.readlink(path)!r}); fastscale does not write "
                "through links: remove the link, or choose another output directory"
            )
        try:
            kind = special_kind(os.lstat(path).st_mode)
        except OSError:
            continue
        if kind is not None:
            raise OutputPathError(f"{what} {str(path)!r} is {kind}, not a regular file or directory: remove it, "
                                  "or choose another output directory")


def _write_regular_file(path: str | os.PathLike[str], text: str, flags: int, mode: int, named: str,
                        advice: str = "") -> None:
    """Open ``path`` for writing without blocking (O_NONBLOCK), refuse it unless it is a regular file (the
    error says "<named> is <kind>, not a regular file<advice>"), then truncate and write ``text``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | flags, mode)
    try:
        kind = special_kind(os.fstat(fd).st_mode)
        if kind is not None:
            raise OutputPathError(f"{named} is {kind}, not a regular file{advice}")
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def write_text_nofollow(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``path`` without ever following a symbolic link at its last component (O_NOFOLLOW), and
    without blocking on a FIFO (O_NONBLOCK; anything but a regular file is refused)."""
    refuse_symlinks([path])
    _write_regular_file(path, text, getattr(os, "O_NOFOLLOW", 0), mode, repr(str(path)), ": remove it first")


def write_text_regular(path: str | os.PathLike[str], text: str) -> None:
    """Write a user-named file (``schema --out``) without blocking: a FIFO, device or socket is refused."""
    refuse_special(path, "output file")
    _write_regular_file(path, text, 0, 0o644, f"output file {os.fspath(path)!r}")


#: The stack file of cdktf's layout: `<outdir>/stacks/<stack>/cdk.tf.json`.
STACK_FILE = "cdk.tf.json"


def synth_writes(outdir: Path, stack: str) -> list[Path]:
    """What synthesizing stack `stack` into `outdir` writes, in cdktf's layout (for `refuse_symlinks`)."""
    stack_dir = outdir / "stacks" / stack
    return [outdir / "manifest.json", outdir / "stacks", stack_dir, stack_dir / STACK_FILE]


def synth_targets(configs: Sequence[tuple[str, FastscaleConfig]], outdir: str | os.PathLike[str]) -> list[Path]:
    """Where each of several configs (file, config) is synthesized: `outdir/<stack name>`, each in cdktf's
    layout. Everything that would refuse a write is checked for all of them before any is written: two
    configs with one stack name, a state file that would be lost or orphaned (`infra.model.state.StateLayoutError`),
    an output directory that cannot be written, a symbolic link on the way."""
    first: dict[str, str] = {}
    for path, config in configs:
        name = stack_name(config)
        if name in first:
            raise OutputPathError(
                f"{first[name]} and {path} both define stack {name!r}: one synthesis would overwrite the other; "
                "give each its own `project`, or synthesize them one at a time")
        first[name] = path
    base = Path(outdir)
    targets = [base / stack_name(config) for _, config in configs]
    for (_, config), target in zip(configs, targets, strict=True):
        local_state_placement(config, target)
    check_output_dir(base)
    for (_, config), target in zip(configs, targets, strict=True):
        refuse_symlinks([target, *synth_writes(target, stack_name(config))])
    return targets
