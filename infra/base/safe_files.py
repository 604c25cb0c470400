"""Files fastscale opens because a user named them, and the one file the config names: the local state.

Two promises, checked here and nowhere else:

- **Opening never blocks.** A path from the command line or the config (the config file, ``--out``,
  ``--trace`` and ``--requests`` CSVs, ``--profile``, ``--write``, ``schema --out``, ``init DIR``) is
  looked at with ``lstat``/``stat`` before it is opened, and opened with ``O_NONBLOCK``: a FIFO, a
  character or block device or a socket is refused at once (exit code 2) instead of hanging the command
  until someone writes to the pipe.
- **The kernel's own files are not input.** Nothing under ``/proc``, ``/sys`` or ``/dev`` is read or
  written, however it is reached: named directly, through a symbolic link a pull request committed
  (``trace.csv -> /proc/self/environ``), or on another mount of the same file system. ``/proc/self/environ``
  holds the job's credentials; such files are never a config, a trace or a place for output.
- **The state stays inside the project.** ``state.path`` is relative, has no ``..`` and reaches its file
  through no symbolic link; the state file, its ``.backup`` and Terraform's lock-info file next to it are
  regular files owned by the user running fastscale, or do not exist yet. fastscale changes the mode only
  of such files, and Terraform is only given such a path.

Pure Python; no config import (``infra.config`` uses the form check while it validates).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

#: What a refused special file is called in messages.
_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class SpecialFileError(ValueError):
    """A path the user gave names a FIFO, device or socket, or a file under /proc, /sys or /dev: bad input
    (exit code 2), never opened."""

    exit_code = 2


#: File systems of the kernel's own files: never input or output of fastscale.
SYSTEM_DIRECTORIES = ("/proc", "/sys", "/dev")


def _system_devices() -> set[int]:
    devices = set()
    for directory in SYSTEM_DIRECTORIES:
        try:
            devices.add(os.stat(directory).st_dev)
        except OSError:
            pass
    return devices


def system_directory(path: str | os.PathLike[str], device: int | None = None) -> str | None:
    """The system directory (``/proc``, ``/sys``, ``/dev``) ``path`` is in once every link is followed, or
    whose file system holds it (``device``: the file's ``st_dev``, for a mount elsewhere); None otherwise."""
    real = os.path.realpath(path)
    for directory in SYSTEM_DIRECTORIES:
        if real == directory or real.startswith(directory + "/"):
            return directory
    if device is not None and device in _system_devices():
        return "a kernel file system (/proc, /sys or /dev)"
    return None


def refuse_system(path: str | os.PathLike[str], what: str = "file", device: int | None = None) -> None:
    """Raise :class:`SpecialFileError` when ``path`` is under /proc, /sys or /dev (see :func:`system_directory`).
    The message never shows what the file holds."""
    where = system_directory(path, device)
    if where is not None:
        shown = f"is in {where}" if where.startswith("/") else f"is on {where}"
        raise SpecialFileError(
            f"{what} {os.fspath(path)!r} {shown}: fastscale does not read or write the kernel's own files (they "
            "can hold the environment and its credentials); give the path of a regular file in your project")


def special_kind(mode: int) -> str | None:
    """'a FIFO (named pipe)', 'a character device', ... for a special file's mode; None otherwise."""
    return next((name for test, name in _KINDS if test(mode)), None)


def refuse_special(path: str | os.PathLike[str], what: str = "file") -> None:
    """Raise :class:`SpecialFileError` when ``path`` is under /proc, /sys or /dev, or exists and is (or
    links to) a FIFO, device or socket."""
    refuse_system(path, what)
    try:
        info = os.stat(path)
    except OSError:
        return  # missing or unreadable: the caller's own open reports it
    refuse_system(path, what, info.st_dev)
    kind = special_kind(info.st_mode)
    if kind is not None:
        raise SpecialFileError(
            f"{what} {os.fspath(path)!r} is {kind}, not a regular file: fastscale does not read from or write "
            "to it (it could block for ever); give the path of a regular file")


def open_regular_for_reading(path: str | os.PathLike[str], what: str = "file") -> int:
    """A read-only descriptor of ``path``, opened without blocking; refuses a special file.

    The file type is checked on the descriptor itself (no window between check and open)."""
    refuse_special(path, what)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        refuse_system(path, what, info.st_dev)  # a link swapped in after the checks above
        kind = special_kind(info.st_mode)
        if kind is not None:  # swapped in after the stat above
            raise SpecialFileError(f"{what} {os.fspath(path)!r} is {kind}, not a regular file")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str | os.PathLike[str], limit: int, what: str = "file") -> bytes:
    """At most ``limit`` bytes of a regular file (or a directory's error), never blocking on a FIFO."""
    fd = open_regular_for_reading(path, what)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(limit)


# --------------------------------------------------------------------------------------------- state path


def state_path_form_problem(value: str) -> str | None:
    """Why ``state.path`` is not a relative path inside the project, judged from its text alone; None if it is."""
    if not value.strip():
        return "is empty"
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        return "contains a control character"
    if value.startswith(("/", "\\")) or (len(value) > 1 and value[1] == ":"):
        return (f"'{value}' is an absolute path: fastscale writes the state (and changes its mode to 0600) only "
                "inside the project directory")
    parts = PurePosixPath(value.replace("\\", "/")).parts
    if ".." in parts:
        return f"'{value}' climbs out of the project directory with '..'"
    if value.endswith(("/", "\\")) or not parts or parts == (".",):
        return f"'{value}' names a directory, not a file"
    return None


def _companions(file: Path) -> list[Path]:
    """The state file, its backup, and the lock-info file Terraform's local backend writes beside it."""
    return [file, file.with_name(file.name + ".backup"), file.with_name(f".{file.name}.lock.info")]


def state_file_problem(root: str | os.PathLike[str], relative: str) -> str | None:
    """Why the state at ``relative`` under the project directory ``root`` must not be used; None if it may.

    Every directory on the way must be a real directory (not a symbolic link), and the state file, its
    ``.backup`` and Terraform's lock-info file each either do not exist or are regular files owned by the
    current user (not links, FIFOs, devices or sockets, nor someone else's file)."""
    base = Path(os.path.abspath(root))
    here = base
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    for i, part in enumerate(parts):
        if part == ".":
            continue
        here = here / part
        try:
            info = os.lstat(here)
        except FileNotFoundError:
            break  # created later by Terraform, as a plain directory or file
        except OSError as exc:
            return f"'{here}' cannot be inspected ({exc.strerror or exc})"
        shown = os.path.relpath(here, base)
        if stat.S_ISLNK(info.st_mode):
            return (f"'{shown}' is a symbolic link (to {os.readlink(here)!r}): the state would be written, and its "
                    "mode changed, wherever the link points; remove the link or choose another state.path")
        if i < len(parts) - 1 and not stat.S_ISDIR(info.st_mode):
            return f"'{shown}' is not a directory, so the state cannot be placed below it"
    target = base / Path(*[p for p in parts if p != "."]) if parts else base
    for path in _companions(target):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            return f"'{path}' cannot be inspected ({exc.strerror or exc})"
        shown = os.path.relpath(path, base)
        if stat.S_ISLNK(info.st_mode):
            return (f"'{shown}' is a symbolic link (to {os.readlink(path)!r}): Terraform would write the state through "
                    "it; remove the link")
        if not stat.S_ISREG(info.st_mode):
            kind = special_kind(info.st_mode) or ("a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file")
            return f"'{shown}' is {kind}: the state must be a regular file; remove it or choose another state.path"
        if info.st_uid != os.geteuid():
            return (f"'{shown}' belongs to another user (uid {info.st_uid}): fastscale only writes and changes the "
                    "mode of state files it owns; choose another state.path")
    return None


def make_owner_only(path: Path, mode: int) -> bool:
    """Set ``path`` to ``mode`` if it is a regular file owned by the current user whose mode allows more;
    True when changed. Never follows a symbolic link, never blocks on a FIFO, leaves anything else alone."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # missing, a link (ELOOP), unreadable: not a file fastscale may change
        return False
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or not stat.S_IMODE(info.st_mode) & ~mode:
            return False
        os.fchmod(fd, mode)
        return True
    finally:
        os.close(fd)
