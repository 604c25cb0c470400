"""A plan is applied only by the run that showed it: the per-stack lock and the per-run saved plan.

Terraform holds its state lock only while one of its commands runs, so between `terraform plan` and the
`terraform apply` of that plan (while a person reads the plan and answers the prompt) nothing stops a
second run on the same stack. Two things close that gap, and everything about them lives in this module:

- :class:`StackLock`, one per stack directory (``<out>/stacks/<stack>/fastscale.lock``), taken before
  synthesis and held until the apply or destroy has finished. The lock is ``flock(2)`` on that file, so
  the kernel releases it the moment its process ends, however it ends (a crash, SIGKILL, a closed
  terminal): a lock nobody holds can never block a run. The file carries who took it (command, pid, host,
  start time) as JSON, for the message a second run gets, and is emptied on a clean release; a new holder
  that finds it still filled in knows the previous run ended without releasing it, and says so.
- :class:`SavedPlan`, the plan file of one run: a fresh name (``fastscale-<random>.tfplan``) in the run's own
  Terraform directory (:class:`infra.terraform.workdir.RunDirectory`, which the lock holder opens and
  :meth:`StackLock.release` removes), created owner-only and exclusively, its SHA-256 recorded when Terraform
  has written it (before it is shown) and checked again just before it is applied, removed by the run that made
  it. Run directories and plan files left by a run that died (they can hold sensitive values) are removed by
  the next run that takes the lock: only a lock holder creates them, so any found then belongs to a run that
  is gone.

The lock is per output directory, where the synthesized stack and each run's directory live. Runs
with different ``--out`` directories share only the Terraform state, which Terraform guards itself (its
state lock during each command, and a saved plan whose state changed since it was made is refused as
stale). Runs on different machines (CI jobs) do not see each other's lock file: pipelines serialise
per stack (docs/ci-cd.md).

Pure Python, POSIX only (``fcntl``), like the runner.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import os
import socket
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from fastscale.infra.base import writer
from fastscale.infra.model.cutover import TFVARS_FILE
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.terraform.outputs import check_output_dir, refuse_links, synth_writes
from fastscale.infra.terraform.workdir import RunDirectory, refuse_foreign_files, remove_leftover_run_directories

#: The lock file, in the stack directory (``<out>/stacks/<stack>/``).
LOCK_FILE = "fastscale.lock"
#: Every saved plan of a run: ``fastscale-<random>.tfplan`` in the run's Terraform directory (earlier releases: in
#: the stack directory, where leftovers are still looked for).
PLAN_PREFIX = "fastscale-"
PLAN_SUFFIX = ".tfplan"
#: The single shared plan file of earlier releases; removed like any plan a finished run left behind.
LEGACY_PLAN_FILE = "fastscale.tfplan"

_PRIVATE_FILE = 0o600
_PRIVATE_DIR = 0o700
#: What Terraform wrote in the stack directory before it ran in a directory of the run's own (its data directory and
#: provider lock file): never read now, and a link there is still refused.
TERRAFORM_WRITES = (".terraform", ".terraform.lock.hcl")
#: Longest lock file content read back (it is one small JSON object; anything longer is not ours).
_MAX_LOCK_TEXT = 4096


class StackLockError(Exception):
    """The lock could not be taken; ``exit_code`` 1 (the operation failed, the input is fine)."""

    exit_code = 1


@dataclass(frozen=True)
class LockHolder:
    """Who holds (or held) a stack's lock, as written into the lock file."""

    command: str
    pid: int
    host: str
    started_at: str  # ISO 8601, UTC, seconds

    @classmethod
    def this_process(cls, command: str) -> LockHolder:
        now = datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        return cls(command=command, pid=os.getpid(), host=socket.gethostname(), started_at=now)

    @classmethod
    def parse(cls, text: str) -> LockHolder | None:
        """The holder a lock file names, or None when it names none (empty: released cleanly; or not ours)."""
        try:
            doc = json.loads(text)
            return cls(command=str(doc["command"]), pid=int(doc["pid"]), host=str(doc["host"]),
                       started_at=str(doc["started_at"]))
        except (ValueError, TypeError, KeyError):
            return None

    def describe(self) -> str:
        return f"fastscale {self.command} (pid {self.pid} on {self.host}, since {self.started_at})"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class StackLocked(StackLockError):
    """Another run holds the stack's lock."""

    def __init__(self, stack_dir: Path, holder: LockHolder | None):
        self.stack_dir = stack_dir
        self.path = stack_dir / LOCK_FILE
        self.holder = holder
        who = holder.describe() if holder is not None else "another fastscale run (it has not yet written who it is)"
        super().__init__(
            f"stack {stack_dir.name} is in use by {who}, which holds {self.path} while it synthesizes, plans "
            "and applies. Nothing was synthesized, planned or applied. Wait for that run to end (or stop it), "
            "then run this command again."
        )


class PlanChanged(Exception):
    """The saved plan is no longer the file that was shown; ``exit_code`` 1, nothing applied."""

    exit_code = 1


def _read(fd: int) -> str:
    return os.pread(fd, _MAX_LOCK_TEXT, 0).decode("utf-8", errors="replace").strip()


def leftover_plans(stack_dir: Path) -> list[Path]:
    """Plan files in ``stack_dir``: this module's names, and the shared name of earlier releases."""
    found = set(stack_dir.glob(f"{PLAN_PREFIX}*{PLAN_SUFFIX}"))
    legacy = stack_dir / LEGACY_PLAN_FILE
    if legacy.exists() or legacy.is_symlink():
        found.add(legacy)
    return sorted(found)


class StackLock:
    """The lock of one stack directory, held by this process. Use :meth:`acquire`, then :meth:`release`
    (or ``with``); it is released at interpreter exit too, and by the kernel when the process dies."""

    def __init__(self, stack_dir: Path, fd: int, holder: LockHolder, previous: LockHolder | None,
                 removed_plans: list[Path], root: Path | None = None,
                 removed_run_directories: list[Path] | None = None):
        self.stack_dir = stack_dir
        #: Where the paths below the stack directory are checked from for links (infra.base.writer).
        self.root = root if root is not None else writer.root_for(stack_dir)
        self.path = stack_dir / LOCK_FILE
        self.holder = holder
        #: The holder named in the file when this run took the lock: a run that ended without releasing it.
        self.previous = previous
        #: Plan files that run left behind, removed when this run took the lock.
        self.removed_plans = removed_plans
        #: Run directories (Terraform's working directory of a run) left behind, removed when this run took the lock.
        self.removed_run_directories = removed_run_directories or []
        #: This run's Terraform working directory, once :meth:`open_run_directory` made it.
        self.run_directory: RunDirectory | None = None
        self._fd: int | None = fd
        atexit.register(self.release)

    @classmethod
    def acquire(cls, stack_dir: str | os.PathLike[str], command: str,
                root: str | os.PathLike[str] | None = None) -> StackLock:
        """Take the lock of ``stack_dir`` (created owner-only if missing) for ``command``, without waiting.

        Raises :class:`StackLocked` naming the holder when another run has it, :class:`StackLockError`
        when the file cannot be opened or locked, :class:`infra.base.writer.OutputPathError` when a
        symbolic link is on the way (checked from ``root``, default :func:`infra.base.writer.root_for`)."""
        directory = Path(stack_dir)
        path = directory / LOCK_FILE
        base = Path(root) if root is not None else writer.root_for(directory)
        try:
            writer.make_dirs(directory, root=base, mode=_PRIVATE_DIR, what="stack directory")
        except OSError as exc:
            raise StackLockError(f"cannot create the stack directory {directory}: {exc.strerror or exc}") from None
        flags = os.O_RDWR | os.O_CREAT
        for _ in range(5):
            try:
                fd = writer.open_file(path, flags, root=base, mode=_PRIVATE_FILE, what="lock file")
            except OSError as exc:
                raise StackLockError(f"cannot open the lock file {path}: {exc.strerror or exc}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = LockHolder.parse(_read(fd))
                os.close(fd)
                raise StackLocked(directory, holder) from None
            except OSError as exc:
                os.close(fd)
                raise StackLockError(f"cannot lock {path}: {exc.strerror or exc}") from None
            # The file locked must still be the one at the path: a run that found the directory removed
            # and made anew between our open and our flock would otherwise hold a different file.
            try:
                same = os.path.samestat(os.fstat(fd), os.lstat(path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        else:
            raise StackLockError(f"cannot lock {path}: it was replaced again and again while being locked")
        previous = LockHolder.parse(_read(fd))
        holder = LockHolder.this_process(command)
        text = json.dumps(holder.to_dict()).encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, text, 0)
        os.fsync(fd)
        removed = []
        for plan in leftover_plans(directory):
            plan.unlink(missing_ok=True)
            removed.append(plan)
        return cls(directory, fd, holder, previous, removed, base, remove_leftover_run_directories(directory))

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Remove this run's Terraform directory, then empty the file (a clean release, so the next holder has
        nothing to report) and unlock it. Idempotent."""
        run, self.run_directory = self.run_directory, None
        if run is not None:
            run.remove()
        fd, self._fd = self._fd, None
        if fd is None:
            return
        atexit.unregister(self.release)
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the last descriptor of the open file releases the flock

    def open_run_directory(self, endpoint_url: str | None = None) -> RunDirectory:
        """This run's Terraform working directory, made from the stack file just synthesized into the stack
        directory (:meth:`RunDirectory.create`, ``endpoint_url`` the emulator the run's Terraform is pointed at);
        removed by :meth:`release`. Opened once."""
        if not self.held:
            raise RuntimeError("a run directory is made only while the stack's lock is held")
        if self.run_directory is None:
            self.run_directory = RunDirectory.create(self.stack_dir, self.root, endpoint_url)
        return self.run_directory

    def new_plan(self) -> SavedPlan:
        """A fresh plan file for this run, in its run directory (in the stack directory before one is open)."""
        if not self.held:
            raise RuntimeError("a plan is made only while the stack's lock is held")
        return SavedPlan.create(self.run_directory.path if self.run_directory is not None else self.stack_dir, self.root)

    def __enter__(self) -> StackLock:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.release()


class SavedPlan:
    """One run's saved plan: ``path`` is handed to ``terraform plan -out`` and ``terraform apply``."""

    def __init__(self, path: Path):
        self.path = path
        #: SHA-256 of the file as Terraform wrote it, recorded by :meth:`seal` before the plan is shown.
        self.digest: str | None = None

    @classmethod
    def create(cls, stack_dir: Path, root: str | os.PathLike[str] | None = None) -> SavedPlan:
        # A name nobody else has, created exclusively (O_EXCL) and owner-only (0600), with no link on the way.
        name = writer.create_unique_file(stack_dir, PLAN_PREFIX, PLAN_SUFFIX, root=root, mode=_PRIVATE_FILE,
                                         what="plan file")
        return cls(name.resolve())

    def _sha256(self) -> str | None:
        try:
            with self.path.open("rb") as handle:
                return hashlib.file_digest(handle, "sha256").hexdigest()
        except FileNotFoundError:
            return None

    def seal(self) -> str:
        """Record what Terraform wrote: the plan that is about to be shown."""
        digest = self._sha256()
        if digest is None:
            raise PlanChanged(f"the saved plan {self.path} is missing: Terraform did not write it. Nothing was applied.")
        self.digest = digest
        return digest

    def verify(self) -> None:
        """Just before the apply: the file must be exactly the one that was shown."""
        if self.digest is None:
            raise RuntimeError("verify() before seal(): the plan was never shown")
        now = self._sha256()
        if now != self.digest:
            what = "was removed" if now is None else f"changed (sha256 {now[:12]}…, shown {self.digest[:12]}…)"
            raise PlanChanged(
                f"the saved plan {self.path} {what} after it was shown: something other than this run wrote "
                "to the stack directory. Nothing was applied; run the command again to plan afresh."
            )

    def discard(self) -> None:
        """Remove the file (it can hold sensitive values, and only this one apply needed it)."""
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> SavedPlan:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.discard()


def lock_stack(stack: ResolvedStack, outdir: str | os.PathLike[str], command: str) -> StackLock:
    """Take the lock of ``stack`` in ``outdir`` before anything is synthesized into it.

    What synthesis would refuse is refused first, before the directory or the lock file is written:
    a local state that would be lost or orphaned (:class:`infra.model.state.StateLayoutError`), an output
    directory inside ``.git`` or not writable, a symbolic link on the way to anything the run writes (the
    lock file included) or earlier releases wrote beside the stack (the cut-over tfvars, ``.terraform/`` and
    its lock file) (:class:`infra.terraform.outputs.OutputPathError`), files in the stack directory that
    Terraform would read and fastscale did not write (:class:`infra.terraform.workdir.ForeignFilesError`); all
    are bad input (exit code 2)."""
    out = Path(outdir)
    root = writer.root_for(out)
    name = stack.name
    stack.state_placement(out)
    stack_dir = out / "stacks" / name
    refuse_foreign_files(stack_dir)
    check_output_dir(out, root=root)
    refuse_links([*synth_writes(out, name), *(stack_dir / f for f in (LOCK_FILE, TFVARS_FILE, *TERRAFORM_WRITES))],
                 root=root)
    return StackLock.acquire(stack_dir, command, root)
