"""The one writer: every file and directory fastscale creates or replaces goes through this module.

A repository is input a pull request controls, symbolic links included. Writing through a committed link
(``cdktf.out`` pointing at ``/etc``, a tfvars file pointing at a shell profile) would change a file outside
the project. What this module promises, checked here and nowhere else:

- **No write through a symbolic link.** A path is walked from its *root* one directory at a time, each
  opened with ``O_NOFOLLOW | O_DIRECTORY`` relative to the one before (``dir_fd``), and the file itself is
  looked at with ``lstat`` relative to its directory. A link in any component (the file, its directory, the
  output directory, a directory between them) is refused with :class:`OutputPathError` (exit code 2)
  before anything is written, naming the link. The root is the project, the directory fastscale runs in,
  for a path inside it; for a path outside it (a place the command line named, such as ``--out
  /tmp/out``) it is the directory that path is in: the directories above a place the user chose are the
  user's, every component from that place down is checked.
- **Replaced atomically.** A file is written to a new temporary file in its own directory and renamed over
  the target, which never follows a link: a reader sees the old file or the new one, never half of it, and
  a hard link to the old file keeps the old content.
- **Never blocks.** Nothing is opened that could be a FIFO: a FIFO, device or socket where a file is to be
  written is refused (exit code 2), and so is a directory.
- **Modes.** A new file gets ``mode`` less the umask. An owner-only mode (``0600``, ``0700``: plans, the
  stack file, the lock) is set exactly, whatever the umask or the file replaced; otherwise a replaced file
  keeps its permission bits.

Checks and writes share one walk, so a place that :func:`check_target` accepts is the place the write goes.
Pure Python, POSIX only (``dir_fd``, ``O_NOFOLLOW``).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from fastscale.infra.base.safe_files import special_kind

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_OWNER_ONLY = 0o077  # no bit of these: owner-only


class OutputPathError(ValueError):
    """A path fastscale must not or cannot write; bad input (exit code 2), nothing was written."""

    exit_code = 2


def _project_spellings(project: str | os.PathLike[str] | None) -> list[str]:
    """The absolute spellings of the project directory: the one given, else the working directory (and the
    shell's $PWD when it names the same directory through a link above the project)."""
    if project is not None:
        return [os.path.abspath(project)]
    here = os.getcwd()
    spellings = [here]
    logical = os.environ.get("PWD", "")
    if os.path.isabs(logical) and logical != here:
        try:
            if os.path.samestat(os.stat(logical), os.stat(here)):
                spellings.append(os.path.normpath(logical))
        except OSError:
            pass
    return spellings


def _within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def root_for(path: str | os.PathLike[str], project: str | os.PathLike[str] | None = None) -> Path:
    """Where the walk to ``path`` starts: the project directory (``project``, default the working directory)
    when ``path`` lies inside it, else the directory ``path`` is in."""
    absolute = os.path.abspath(path)
    for base in _project_spellings(project):
        if _within(absolute, base):
            return Path(base)
    return Path(os.path.dirname(absolute))


@dataclass(frozen=True)
class _Route:
    """A path as a root (opened following links: the project, or the place named) and the components below."""

    root: str
    parts: tuple[str, ...]
    given: str  # the path as the caller spelled it, for messages
    relative: bool  # shown relative to the working directory

    @classmethod
    def of(cls, path: str | os.PathLike[str], root: str | os.PathLike[str] | None) -> _Route:
        given = os.fspath(path)
        absolute = os.path.abspath(given)
        base = os.path.abspath(root) if root is not None else str(root_for(absolute))
        rel = os.path.relpath(absolute, base)
        parts = () if rel == os.curdir else tuple(rel.split(os.sep))
        if parts and parts[0] == os.pardir:
            raise ValueError(f"{given!r} is not below the directory it is written from, {base!r}")
        return cls(base, parts, given, not os.path.isabs(given))

    def shown(self, n: int) -> str:
        """The first ``n`` components, spelled as the user would: relative when they gave a relative path."""
        full = os.path.join(self.root, *self.parts[:n])
        return os.path.relpath(full) if self.relative else full

    def parent(self) -> _Route:
        return _Route(self.root, self.parts[:-1], self.given, self.relative)


def _lstat_at(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _refuse_link(route: _Route, n: int, dir_fd: int, what: str) -> OutputPathError:
    """The refusal of the link at component ``n`` (1-based) of ``route``."""
    shown = route.shown(n)
    try:
        target = os.readlink(route.parts[n - 1], dir_fd=dir_fd)
    except OSError:
        target = "?"
    head = f"{what} {shown!r}" if shown == route.given else f"cannot write {what} {route.given!r}: {shown!r}"
    real = "a real directory" if n < len(route.parts) else "a regular file or directory"
    return OutputPathError(
        f"{head} is a symbolic link (to {target!r}): fastscale never writes through a symbolic link, which "
        f"could change files outside the project. Remove the link (`git rm` it if the repository holds it) or "
        f"replace it with {real}, or choose a path without a link.")


def _open_dir_at(dir_fd: int, route: _Route, n: int, what: str) -> int:
    """Open component ``n`` of ``route`` in ``dir_fd`` as a directory, never following a link."""
    name = route.parts[n - 1]
    try:
        return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        info = _lstat_at(dir_fd, name)
        if info is not None and stat.S_ISLNK(info.st_mode):
            raise _refuse_link(route, n, dir_fd, what) from None
        raise OSError(exc.errno, exc.strerror, route.shown(n)) from None


def _walk(route: _Route, *, create: bool, mode: int, what: str) -> int | None:
    """A descriptor of the directory ``route`` names, reached with no link on the way; missing directories are
    created (the last with ``mode``) when ``create``, else None is returned for a missing one. A missing
    root (the directory a place outside the project is named in) is created as the user's paths are."""
    try:
        fd = os.open(route.root, _DIR_FLAGS)
    except FileNotFoundError:
        if not create:
            return None
        try:
            os.makedirs(route.root, exist_ok=True)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, route.root) from None
        fd = os.open(route.root, _DIR_FLAGS)
    try:
        for n in range(1, len(route.parts) + 1):
            try:
                below = _open_dir_at(fd, route, n, what)
            except FileNotFoundError:
                if not create:
                    os.close(fd)
                    return None
                try:
                    os.mkdir(route.parts[n - 1], mode if n == len(route.parts) else 0o777, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile (or a link put there: the open below refuses it)
                except OSError as exc:
                    raise OSError(exc.errno, exc.strerror, route.shown(n)) from None
                below = _open_dir_at(fd, route, n, what)
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def _owner_only(mode: int) -> bool:
    return not mode & _OWNER_ONLY


def _refuse_existing(info: os.stat_result | None, route: _Route, dir_fd: int, what: str,
                     directory_ok: bool = False) -> None:
    """Refuse to write where ``info`` (the target's lstat) says a link, a FIFO, device or socket is, or a
    directory unless ``directory_ok``."""
    if info is None:
        return
    n = len(route.parts)
    if stat.S_ISLNK(info.st_mode):
        raise _refuse_link(route, n, dir_fd, what)
    kind = special_kind(info.st_mode)
    if kind is not None:
        raise OutputPathError(f"{what} {route.shown(n)!r} is {kind}, not a regular file: fastscale does not write "
                              "to it (it could block for ever); remove it, or choose another path")
    if stat.S_ISDIR(info.st_mode) and not directory_ok:
        raise IsADirectoryError(errno.EISDIR, "Is a directory", route.shown(n))


def check_target(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None,
                 what: str = "output path") -> None:
    """Refuse (:class:`OutputPathError`) a path fastscale is about to write when any of its components that
    exist is a symbolic link, or it is a FIFO, device or socket. Missing components are fine (they are
    created later); a file in the way of a directory is left for the write to report. Writes nothing."""
    route = _Route.of(path, root)
    if not route.parts:
        return
    try:
        fd = _walk(route.parent(), create=False, mode=0o777, what=what)
    except OSError:  # a file where a directory should be, no permission: for the write to report
        return
    if fd is None:
        return
    try:
        _refuse_existing(_lstat_at(fd, route.parts[-1]), route, fd, what, directory_ok=True)
    finally:
        os.close(fd)


def make_dirs(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None, mode: int = 0o777,
              what: str = "directory") -> Path:
    """Create ``path`` and the directories above it that are missing (below its root), never through a
    link; the last gets ``mode``, set exactly on an existing directory too when it is owner-only."""
    route = _Route.of(path, root)
    fd = _walk(route, create=True, mode=mode, what=what)
    assert fd is not None
    try:
        if _owner_only(mode) and route.parts and stat.S_IMODE(os.fstat(fd).st_mode) != mode:
            os.fchmod(fd, mode)
    finally:
        os.close(fd)
    return Path(path)


def _parent_fd(route: _Route, parents: bool, what: str) -> int:
    if not route.parts:
        raise IsADirectoryError(errno.EISDIR, "Is a directory", route.given)
    fd = _walk(route.parent(), create=parents, mode=0o777, what=what)
    if fd is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", route.shown(len(route.parts) - 1))
    return fd


def write_file(path: str | os.PathLike[str], data: str | bytes, *, root: str | os.PathLike[str] | None = None,
               mode: int = 0o644, exclusive: bool = False, parents: bool = False, what: str = "file") -> Path:
    """Write ``data`` (text as UTF-8) to ``path``: into a new temporary file beside it, then renamed over it.

    ``exclusive``: fail with :class:`FileExistsError` when something is already there (the check and the
    creation are one step: a hard link of the finished file). ``parents``: create missing directories.
    Refused (:class:`OutputPathError`, nothing written): a symbolic link anywhere below the root, a FIFO,
    device or socket at ``path``. A directory at ``path`` is :class:`IsADirectoryError`."""
    route = _Route.of(path, root)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    dir_fd = _parent_fd(route, parents, what)
    try:
        name = route.parts[-1]
        existing = _lstat_at(dir_fd, name)
        _refuse_existing(existing, route, dir_fd, what)
        if exclusive and existing is not None:
            raise FileExistsError(errno.EEXIST, "File exists", route.shown(len(route.parts)))
        if _owner_only(mode):
            final_mode: int | None = mode
        elif existing is not None:
            final_mode = stat.S_IMODE(existing.st_mode)
        else:
            final_mode = None  # `mode` less the umask, as the kernel creates it
        temp, fd = _create_unique(dir_fd, f".{name}.", ".tmp", mode if final_mode is None else 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                if final_mode is not None:
                    os.fchmod(handle.fileno(), final_mode)
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            if exclusive:
                _link_new(dir_fd, temp, name, route)
            else:
                os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        finally:
            try:
                os.unlink(temp, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
    finally:
        os.close(dir_fd)
    return Path(path)


def _link_new(dir_fd: int, temp: str, name: str, route: _Route) -> None:
    """Give the finished ``temp`` its name only if nothing has it (atomic where hard links work)."""
    try:
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except FileExistsError:
        raise FileExistsError(errno.EEXIST, "File exists", route.shown(len(route.parts))) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        if _lstat_at(dir_fd, name) is not None:  # a file system without hard links: check, then rename
            raise FileExistsError(errno.EEXIST, "File exists", route.shown(len(route.parts))) from None
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _create_unique(dir_fd: int, prefix: str, suffix: str, mode: int) -> tuple[str, int]:
    """Create a new empty file with a name nobody has (O_EXCL) in ``dir_fd``: its name and a write descriptor."""
    for _ in range(100):
        name = f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                         dir_fd=dir_fd)
        except FileExistsError:
            continue
        try:
            if _owner_only(mode):
                os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            raise
        return name, fd
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", prefix)


def create_unique_file(directory: str | os.PathLike[str], prefix: str, suffix: str, *,
                       root: str | os.PathLike[str] | None = None, mode: int = 0o600,
                       what: str = "file") -> Path:
    """A new, empty file ``<prefix><random><suffix>`` in ``directory`` (which must exist), created
    exclusively with ``mode`` (owner-only by default), the directory reached with no link on the way."""
    route = _Route.of(directory, root)
    fd = _walk(route, create=False, mode=0o777, what=what)
    if fd is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", route.given)
    try:
        name, created = _create_unique(fd, prefix, suffix, mode)
        os.close(created)
    finally:
        os.close(fd)
    return Path(directory) / name


def create_unique_directory(directory: str | os.PathLike[str], prefix: str, *,
                            root: str | os.PathLike[str] | None = None, mode: int = 0o700,
                            what: str = "directory") -> Path:
    """A new, empty directory ``<prefix><random>`` in ``directory`` (which must exist), made by this call alone
    (``mkdir`` fails on any name already taken, a link included) with exactly ``mode`` (owner-only by default),
    ``directory`` reached with no link on the way."""
    route = _Route.of(directory, root)
    fd = _walk(route, create=False, mode=0o777, what=what)
    if fd is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", route.given)
    try:
        for _ in range(100):
            name = f"{prefix}{secrets.token_hex(6)}"
            try:
                os.mkdir(name, 0o700, dir_fd=fd)
            except FileExistsError:
                continue
            made = os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            try:
                os.fchmod(made, mode)  # exactly, whatever the umask
            finally:
                os.close(made)
            return Path(directory) / name
        raise FileExistsError(errno.EEXIST, "no unused directory name", prefix)
    finally:
        os.close(fd)


def probe_directory(directory: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None,
                    what: str = "directory") -> None:
    """Prove files can be created in ``directory``: create one and remove it again (OSError when not)."""
    route = _Route.of(directory, root)
    fd = _walk(route, create=False, mode=0o777, what=what)
    if fd is None:
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", route.given)
    try:
        name, created = _create_unique(fd, ".fastscale-write-test-", "", 0o600)
        os.close(created)
        os.unlink(name, dir_fd=fd)
    finally:
        os.close(fd)


def open_file(path: str | os.PathLike[str], flags: int, *, root: str | os.PathLike[str] | None = None,
              mode: int = 0o600, what: str = "file") -> int:
    """A descriptor of ``path`` opened with ``flags`` (e.g. ``O_RDWR | O_CREAT`` for a lock file that is
    written in place), its directory reached with no link on the way, the file itself never followed and
    never blocking: a link, a FIFO, device or socket is refused (:class:`OutputPathError`)."""
    route = _Route.of(path, root)
    dir_fd = _parent_fd(route, False, what)
    try:
        name = route.parts[-1]
        try:
            fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
        except OSError as exc:
            _refuse_existing(_lstat_at(dir_fd, name), route, dir_fd, what)
            raise OSError(exc.errno, exc.strerror, route.given) from None
        try:
            _refuse_existing(os.fstat(fd), route, dir_fd, what)
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
    finally:
        os.close(dir_fd)
    return fd
