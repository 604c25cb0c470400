"""Run a short helper command (``terraform version``, ``node --version``) with a deadline that holds.

``subprocess.run(timeout=...)`` kills only the direct child and then waits for its pipes to close; a
wrapper script whose own child hangs keeps the pipes open, and the "timeout" never ends. Here the
command runs in its own process group, and the whole group is killed when the deadline passes.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence


def run_bounded(
    args: Sequence[str],
    timeout: float,
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``args`` capturing text output; raises ``subprocess.TimeoutExpired`` (after killing the
    command's whole process group) when it has not finished within ``timeout`` seconds, and OSError
    when it cannot be started."""
    proc = subprocess.Popen(
        list(args),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        process_group=0,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise subprocess.TimeoutExpired(list(args), timeout) from None
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        raise
    return subprocess.CompletedProcess(list(args), proc.returncode, stdout, stderr)
