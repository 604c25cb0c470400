"""Where fastscale may write: checks run before `synth` and `init` write anything.

An output directory is refused (exit code 2, nothing written) when it lies inside a ``.git`` directory
(generated files there corrupt the repository or are silently never committed), when it cannot be created,
or when it cannot be written. No file or directory fastscale writes is reached through a symbolic link:
:mod:`infra.base.writer`, the one writer, refuses a link anywhere on the way, and the checks here ask it
about every path a synthesis writes before the first is written.

Pure Python (no cdktf), shared by the synthesizer, the plan session and the project scaffold.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from fastscale.infra.base import writer
from fastscale.infra.base.writer import OutputPathError as OutputPathError
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.terraform.workdir import STACK_FILE, refuse_foreign_files


def _inside_git(path: Path) -> bool:
    return ".git" in path.parts


def check_output_dir(directory: str | os.PathLike[str], what: str = "output directory",
                     root: str | os.PathLike[str] | None = None) -> Path:
    """Create ``directory`` if needed (no symbolic link on the way) and prove it can be written; returns it
    as given (not resolved)."""
    given = Path(directory)
    absolute = Path(os.path.abspath(given))
    if _inside_git(absolute) or _inside_git(absolute.resolve()):
        raise OutputPathError(
            f"{what} {str(given)!r} is inside a .git directory; generated files there would corrupt or "
            "bypass the repository: choose a directory outside .git"
        )
    writer.check_target(given, root=root, what=what)
    if os.path.lexists(absolute) and not absolute.is_dir():
        raise OutputPathError(f"{what} {str(given)!r} exists and is not a directory: choose another path")
    try:
        writer.make_dirs(given, root=root, what=what)
    except OSError as exc:
        raise OutputPathError(f"cannot create {what} {str(given)!r}: {exc.strerror or exc}") from None
    try:
        writer.probe_directory(given, root=root, what=what)
    except OSError as exc:
        raise OutputPathError(
            f"cannot write into {what} {str(given)!r} ({exc.strerror or exc}): check its permissions, or "
            "choose another directory"
        ) from None
    return given


def refuse_links(paths: Sequence[str | os.PathLike[str]], what: str = "output path",
                 root: str | os.PathLike[str] | None = None) -> None:
    """Refuse (before anything is written) any of ``paths`` that is reached through a symbolic link or is
    one, or is a FIFO, device or socket (:func:`infra.base.writer.check_target`)."""
    for path in paths:
        writer.check_target(path, root=root, what=what)




def synth_writes(outdir: Path, stack: str) -> list[Path]:
    """What synthesizing stack `stack` into `outdir` writes, in cdktf's layout (for `refuse_links`)."""
    stack_dir = outdir / "stacks" / stack
    return [outdir / "manifest.json", outdir / "stacks", stack_dir, stack_dir / STACK_FILE]


def synth_targets(stacks: Sequence[tuple[str, ResolvedStack]], outdir: str | os.PathLike[str]) -> list[Path]:
    """Where each of several configs (file, the stack it resolves to) is synthesized: `outdir/<stack name>`, each in cdktf's
    layout. Everything that would refuse a write is checked for all of them before any is written: two
    configs with one stack name, a state file that would be lost or orphaned (`infra.model.state.StateLayoutError`),
    an output directory that cannot be written, a symbolic link on the way, files in a stack directory that
    Terraform would read and fastscale did not write (`infra.terraform.workdir.ForeignFilesError`)."""
    first: dict[str, str] = {}
    for path, stack in stacks:
        name = stack.name
        if name in first:
            raise OutputPathError(
                f"{first[name]} and {path} both define stack {name!r}: one synthesis would overwrite the other; "
                "give each its own `project`, or synthesize them one at a time")
        first[name] = path
    base = Path(outdir)
    root = writer.root_for(base)
    targets = [base / stack.name for _, stack in stacks]
    for (_, stack), target in zip(stacks, targets, strict=True):
        stack.state_placement(target)
        refuse_foreign_files(target / "stacks" / stack.name)
    check_output_dir(base, root=root)
    for (_, stack), target in zip(stacks, targets, strict=True):
        refuse_links([target, *synth_writes(target, stack.name)], root=root)
    return targets
