"""Virtualenvs the install tests build, kept between runs in a cache directory outside the tree.

Installing fastscale's dependencies into a new virtualenv takes minutes on two cores; what it installs depends
only on a few files (pyproject.toml's ranges, the constraints, the project templates' requirements) and the
Python that runs it. :func:`cached_build` runs a build (one that makes a virtualenv) once for each content of
those files (their hash, with the build's own source, names its directory) and hands the same directory to
every later test and run; a changed file gives a new directory, and the old ones of the same name are
removed. A virtualenv cannot be moved (its scripts name their interpreter by absolute path), so a build makes
it where it stays, inside that directory.

The cache is :data:`CACHE`: ``$FASTSCALE_TEST_CACHE`` when set (.ci/run sets a new one per run, so CI builds
each virtualenv once per run), else ``~/.cache/fastscale-tests/<checkout>`` (``$XDG_CACHE_HOME`` for
``~/.cache``; one directory per checkout, named by a hash of its path). It is outside the tree because a
project kept there must behave as a user's: inside the checkout, the project's pytest would read fastscale's
own settings from pyproject.toml. ``make clean`` removes it.

fastscale itself is never served from the cache: the tests that use one reinstall it from the tree first
(:func:`reinstall_fastscale`, or the README's own `pip install`) unless their build has just installed it from
the tree, so the virtualenv runs the code under test.

Workers of one run (pytest-xdist) and runs of one checkout share the directory: a lock file makes the second
one wait for the first one's build instead of building it again.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import ROOT


def _cache_root() -> Path:
    chosen = os.environ.get("FASTSCALE_TEST_CACHE", "").strip()
    if chosen:
        return Path(chosen).resolve()
    base = Path(os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache")
    return base / "fastscale-tests" / hashlib.sha256(str(ROOT).encode()).hexdigest()[:12]


CACHE = _cache_root()
COMPLETE = ".complete"  # written last: a directory without it is a build that did not finish


def _key(name: str, inputs: list[Path], build: Callable[[Path], None], python: str, salt: str) -> str:
    digest = hashlib.sha256(name.encode() + b"\0" + salt.encode())
    # The running interpreter's version is known; another one is asked (as it prints it).
    version = f"{sys.version}\n" if python == sys.executable else subprocess.run(
        [python, "-c", "import sys; print(sys.version)"], capture_output=True, text=True, check=True).stdout
    digest.update(f"{Path(python).resolve()}\n{version}".encode())
    digest.update(inspect.getsource(build).encode())
    for path in sorted(inputs):
        digest.update(_shown(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


@contextmanager
def locked(name: str) -> Iterator[None]:
    """Exclusive use of ``name`` among the processes of this checkout (pytest-xdist workers, parallel runs)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def cached_build(name: str, inputs: Iterable[Path], build: Callable[[Path], None], *,
                 python: str = sys.executable, salt: str = "") -> Path:
    """The directory ``CACHE/<name>-<hash>``, filled by ``build(directory)`` unless an earlier run filled it
    from the same ``inputs`` (files, usually of the tree), ``build`` source, ``python`` and ``salt`` (any other text the
    build depends on).

    ``build`` gets an empty directory; it runs at most once per key, whoever asks first, and a build that
    raises leaves nothing behind (the next one starts afresh).
    """
    inputs = list(inputs)
    key = _key(name, inputs, build, python, salt)
    built = CACHE / f"{name}-{key}"
    with locked(name):
        if not (built / COMPLETE).is_file():
            for stale in CACHE.iterdir():
                if stale.is_dir() and re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{16}}", stale.name):
                    shutil.rmtree(stale)
            built.mkdir()
            try:
                build(built)
            except BaseException:
                shutil.rmtree(built, ignore_errors=True)
                raise
            sources = f" from {', '.join(_shown(p) for p in inputs)}" if inputs else ""
            (built / COMPLETE).write_text(f"{name}: built{sources}\n")
    return built


def reinstall_fastscale(venv: Path, source: str, env: dict[str, str], timeout: int = 900) -> None:
    """fastscale from ``source`` (a directory or requirement) into ``venv``, replacing whatever version is there,
    without touching its dependencies."""
    args = ["-r", source] if source.endswith(".txt") else [source]
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-deps",
                           "--force-reinstall", "--disable-pip-version-check", *args],
                          env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr


__all__ = ["CACHE", "cached_build", "locked", "reinstall_fastscale"]
