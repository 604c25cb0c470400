"""Where a stack's local Terraform state lives, decided once for synth, plan, deploy and destroy.

The default is ``terraform.<stack>.<region>.tfstate`` in the **project root**: the directory fastscale is
run from, as for cdktf and Terraform themselves. It never depends on the synth output directory, so
``--out cdktf.out/<name>`` (the layout of ``make demo``) and ``make clean`` never touch it, and the same
project synthesized for two regions keeps two states. ``state.path`` counts from the project root too, and
must stay inside it: relative, no ``..``, no symbolic link on the way, and the file (with its backup and
lock-info file) a regular file of the current user or not there yet (``infra.base.safe_files``). Anything else
stops synthesis before Terraform or a chmod touches it.

The synthesized backend path is relative to the stack directory whenever the output directory lies inside
the project root, so the JSON is the same on every machine for the same layout.

Older releases put the default state (named without the region) next to the output directory. When such
a file exists and the new one does not, synthesis stops and says how to move it, instead of letting
Terraform start from empty state and create everything a second time.

State files hold every environment value and output of the stack in plain text: they are kept at mode
0600 (owner only).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from fastscale.infra.base.safe_files import make_owner_only, state_file_problem, state_path_form_problem
from fastscale.infra.config import FastscaleConfig, LocalState
from fastscale.infra.model.naming import stack_name

#: Owner read/write only: for state files, plans and the synthesized JSON, which may hold environment values.
PRIVATE_FILE_MODE = 0o600
PRIVATE_DIR_MODE = 0o700


class StateLayoutError(Exception):
    """The local state would be lost or orphaned: inside the output directory, or left at an old path."""


def default_state_file(config: FastscaleConfig) -> str:
    return default_state_name(stack_name(config), config.region)


def default_state_name(stack: str, region: str) -> str:
    return f"terraform.{stack}.{region}.tfstate"


def legacy_state_name(stack: str) -> str:
    """The default file name before the region was part of it."""
    return f"terraform.{stack}.tfstate"


@dataclass(frozen=True)
class LocalStatePlacement:
    file: Path  # absolute location of the state file
    backend_path: str  # what the synthesized `terraform.backend.local.path` says (relative to the stack dir)


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def local_state_placement(
    config: FastscaleConfig, outdir: str | Path, project_root: str | Path | None = None
) -> LocalStatePlacement | None:
    """The state file of `config` when synthesized into `outdir`; None for a remote backend (`local_placement`)."""
    state = config.state
    if not isinstance(state, LocalState):
        return None
    return local_placement(stack_name(config), config.region, state.path, outdir, project_root)


def local_placement(
    stack: str, region: str, configured: str | None, outdir: str | Path, project_root: str | Path | None = None
) -> LocalStatePlacement:
    """The local state file of stack ``stack`` in ``region`` (at ``configured``, the config's `state.path`, or
    the default name) when synthesized into `outdir`.

    Raises StateLayoutError when the state would lie inside the output directory, or when an old-path
    state file exists that the new path would silently replace with empty state."""
    root = Path(os.path.abspath(project_root if project_root is not None else Path.cwd()))
    out = Path(os.path.abspath(outdir))
    stack_dir = out / "stacks" / stack
    relative = configured or default_state_name(stack, region)
    problem = state_path_form_problem(relative) or state_file_problem(root, relative)
    if problem is not None:
        raise StateLayoutError(f"{'state.path' if configured else 'the local Terraform state'}: {problem}; use a "
                               "relative path inside the project directory without links (e.g. state/prod.tfstate)")
    target = Path(os.path.normpath(root / relative))
    if _inside(target, out):
        how = "set state.path outside it" if configured else "use an --out directory that does not contain the project root"
        raise StateLayoutError(
            f"the local Terraform state {target} would lie inside the output directory {out}, which is "
            f"regenerated and cleaned up: {how}"
        )
    _refuse_orphaning(configured or legacy_state_name(stack), bool(configured), target, out, root)
    if _inside(out, root) and _same_physically(out, root):
        backend_path = posixpath.normpath(Path(os.path.relpath(target, stack_dir)).as_posix())
    else:
        backend_path = target.as_posix()
    return LocalStatePlacement(file=target, backend_path=backend_path)


def _same_physically(out: Path, root: Path) -> bool:
    """Whether ``out`` lies under ``root`` on disk as it does in its spelling: a relative backend path is
    resolved by Terraform through the real directories, so a linked output directory would carry it away."""
    return os.path.relpath(os.path.realpath(out), os.path.realpath(root)) == os.path.relpath(out, root)


def _refuse_orphaning(old_name: str, configured: bool, target: Path, out: Path, root: Path) -> None:
    if target.exists():
        return
    # the old default anchored at the directory holding the output directory; its name had no region
    candidates = {Path(os.path.normpath(out.parent / old_name))}
    if not configured:
        candidates.add(root / old_name)
    for old in sorted(candidates):
        if old != target and old.is_file() and old.stat().st_size > 0:
            raise StateLayoutError(
                f"Terraform state of this stack exists at {old}, but it now belongs at {target} (the default "
                f"state file is named with the region and kept in the project root). Move it, with its backup "
                f"if there is one, before anything else: mv {old} {target}"
                + (f"; or set state.path to {old} in the config" if not configured else "")
            )


def protect_state_files(placement: LocalStatePlacement | None) -> list[Path]:
    """Make an existing state file and its backup owner-only (state written by older releases was 0644)."""
    if placement is None:
        return []
    # Only regular files of the current user, never through a link (infra.base.safe_files.make_owner_only).
    paths = (placement.file, placement.file.with_name(placement.file.name + ".backup"))
    return [path for path in paths if make_owner_only(path, PRIVATE_FILE_MODE)]
