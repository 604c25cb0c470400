"""The :class:`TerraformRunner`: ``init``, ``plan``, ``apply``, ``show`` and ``destroy`` in one stack directory, each
run as a child process whose output is streamed line by line to a :class:`.messages.Collector` (and to the
caller's ``on_event``), and stopped the way the terminal would stop it on Ctrl-C.

:mod:`.binary` says which binary runs and in which environment; :mod:`.messages` turns what it prints into
events and a result.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from fastscale.infra.base.process import run_bounded
from fastscale.infra.terraform.runner.binary import (
    VERSION_TIMEOUT,
    TerraformError,
    VersionInfo,
    cannot_run,
    check_supported,
    child_env,
    read_version,
)
from fastscale.infra.terraform.runner.messages import (
    Collector,
    TerraformEvent,
    TerraformResult,
    parse_plain_diagnostics,
)

#: How long a graceful stop may take after Ctrl-C before the child is terminated. Generous on purpose:
#: Terraform waits for in-flight API calls (a SageMaker endpoint deletion call, say) before it writes
#: state, and cutting that short is what leaves state out of step with the account.
DEFAULT_INTERRUPT_TIMEOUT = 300.0
#: After SIGTERM, how long to wait before SIGKILL.
TERMINATE_GRACE = 10.0

#: Terraform versions before this have no ``init -json``; OpenTofu is driven in plain mode for init.
_INIT_JSON_SINCE = (1, 9, 0)
#: Seconds ``terraform show -json`` of a saved plan may take: it reads local files and provider schemas.
SHOW_TIMEOUT = 300.0


class TerraformRunner:
    """Runs ``init``, ``plan``, ``apply`` and ``destroy`` in one stack directory.

    ``env`` adds to (and overrides) the inherited environment, e.g. ``TF_CLI_CONFIG_FILE`` or
    ``TF_PLUGIN_CACHE_DIR``; a ``None`` value removes an inherited variable. ``on_event`` is called in the
    calling thread for every message as it arrives.
    """

    def __init__(
        self,
        binary: str,
        workdir: str | os.PathLike[str],
        env: Mapping[str, str | None] | None = None,
        on_event: Callable[[TerraformEvent], None] | None = None,
        interrupt_timeout: float = DEFAULT_INTERRUPT_TIMEOUT,
        version_timeout: float = VERSION_TIMEOUT,
    ):
        self.binary = binary
        self.workdir = Path(workdir)
        if not self.workdir.is_dir():
            raise TerraformError(
                f"Stack directory {str(self.workdir)!r} does not exist; synthesize the stack first."
            )
        if not any(self.workdir.glob("*.tf.json")) and not any(self.workdir.glob("*.tf")):
            raise TerraformError(
                f"Stack directory {str(self.workdir)!r} holds no Terraform configuration "
                "(no *.tf.json or *.tf file); synthesize the stack first."
            )
        self.env = dict(env or {})
        self.on_event = on_event
        self.interrupt_timeout = interrupt_timeout
        #: Seconds `binary version` may take before the binary is called broken (a hung wrapper, a wrong file).
        self.version_timeout = version_timeout
        #: The last run's result, also set when the run was interrupted (before KeyboardInterrupt).
        self.last_result: TerraformResult | None = None
        #: Process id of the last child started; lets callers and tests check it has exited.
        self.last_pid: int | None = None
        self._version: VersionInfo | None = None

    def version(self) -> VersionInfo:
        if self._version is None:
            self._version = read_version(self.binary, self.workdir, self._child_env(), self.version_timeout)
        return self._version

    def require_supported(self) -> VersionInfo:
        """The version, or TerraformUnsupported when the binary is not terraform/tofu or is too old."""
        return check_supported(self.binary, self.version())

    def _child_env(self) -> dict[str, str]:
        return child_env(self.env)

    # -- operations ---------------------------------------------------------------------------------

    def init(self) -> TerraformResult:
        info = self.require_supported()
        json_ui = info.product == "terraform" and info.version >= _INIT_JSON_SINCE
        args = ["init", "-input=false", "-no-color"] + (["-json"] if json_ui else [])
        return self._run("init", args)

    def plan(
        self,
        detailed_exitcode: bool = True,
        out: str | os.PathLike[str] | None = None,
        destroy: bool = False,
        targets: Sequence[str] = (),
    ) -> TerraformResult:
        """With ``detailed_exitcode`` the exit code decides: 0 no changes, 2 changes, 1 error. ``targets``: plan only
        these resource addresses (``-target``; in a destroy plan, with what depends on them)."""
        args = ["plan", "-input=false", "-no-color", "-json"]
        if detailed_exitcode:
            args.append("-detailed-exitcode")
        if destroy:
            args.append("-destroy")
        args += [f"-target={t}" for t in targets]
        if out is not None:
            args.append(f"-out={os.fspath(out)}")
        return self._run("plan", args, detailed_exitcode=detailed_exitcode)

    def apply(self, auto_approve: bool = True, plan_file: str | os.PathLike[str] | None = None) -> TerraformResult:
        """Apply the configuration, or a saved plan file (which needs no approval)."""
        args = ["apply", "-input=false", "-no-color", "-json"]
        if plan_file is not None:
            args.append(os.fspath(plan_file))
        elif auto_approve:
            args.append("-auto-approve")
        else:
            # With -input=false nobody can answer the approval prompt; say so rather than hang or fail late.
            raise ValueError("apply without auto_approve needs a saved plan file (plan(out=...))")
        return self._run("apply", args)

    def show_plan(self, plan_file: str | os.PathLike[str], timeout: float = SHOW_TIMEOUT) -> dict[str, Any]:
        """A saved plan as Terraform's JSON representation (``terraform show -json PLANFILE``): every
        resource change with its ``actions``, ``before`` / ``after`` values and ``replace_paths``.

        Raises :class:`TerraformError` when the binary fails, does not finish within ``timeout`` or
        prints something that is not a JSON plan.
        """
        args = [self.binary, "show", "-json", "-no-color", os.fspath(plan_file)]
        try:
            proc = run_bounded(args, timeout, cwd=self.workdir, env=self._child_env())
        except OSError as exc:
            raise cannot_run(self.binary, exc) from exc
        except subprocess.TimeoutExpired:
            raise TerraformError(f"`terraform show -json` did not finish within {timeout:g} s and was stopped") from None
        if proc.returncode != 0:
            detail = "\n".join(str(d) for d in parse_plain_diagnostics(proc.stderr.splitlines())) or proc.stderr.strip()
            raise TerraformError(f"`terraform show -json` failed (exit code {proc.returncode}): {detail}")
        try:
            doc = json.loads(proc.stdout)
        except ValueError as exc:
            raise TerraformError(f"`terraform show -json` printed no JSON plan: {exc}") from None
        if not isinstance(doc, dict):
            raise TerraformError("`terraform show -json` printed no JSON plan object")
        return doc

    def destroy(self, auto_approve: bool = True) -> TerraformResult:
        if not auto_approve:
            raise ValueError("destroy cannot ask for approval without a terminal; pass auto_approve=True")
        return self._run("destroy", ["destroy", "-input=false", "-no-color", "-json", "-auto-approve"])

    # -- process handling ---------------------------------------------------------------------------

    def _emit(self, event: TerraformEvent | None) -> None:
        if event is not None and self.on_event is not None:
            self.on_event(event)

    def _run(self, operation: str, args: list[str], detailed_exitcode: bool = False) -> TerraformResult:
        collector = Collector(operation)
        try:
            proc = subprocess.Popen(
                [self.binary, *args],
                cwd=self.workdir,
                env=self._child_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
                # Own process group: the terminal's Ctrl-C goes to this process only, which forwards it
                # once. Without this Terraform would see SIGINT twice (terminal + forward) and take the
                # second as "exit immediately, data loss may occur".
                process_group=0,
                # Owner-only files: the local state, its backup and saved plans hold every environment
                # value of the stack in plain text; Terraform creates them with 0666 less the umask.
                umask=0o077,
            )
        except OSError as exc:
            raise cannot_run(self.binary, exc) from exc
        self.last_pid = proc.pid

        # Both pipes are drained by threads so a chatty stream can never block the child, and the main
        # thread waits on a queue, where KeyboardInterrupt is delivered promptly.
        lines: queue.Queue[str | None] = queue.Queue()
        stderr_lines: list[str] = []
        readers = [
            threading.Thread(
                target=_pump_lines, args=(proc.stdout, lines.put, lambda: lines.put(None)), daemon=True
            ),
            threading.Thread(target=_pump_lines, args=(proc.stderr, stderr_lines.append), daemon=True),
        ]
        for reader in readers:
            reader.start()

        stopped_by: BaseException | None = None
        at_eof = False
        try:
            while (line := lines.get()) is not None:
                self._emit(collector.take(line))
            at_eof = True
            proc.wait()
        except BaseException as exc:  # KeyboardInterrupt, or on_event failing (e.g. a closed pipe)
            stopped_by = exc
            self._stop_child(proc, None if at_eof else lines, collector)
        finally:
            if proc.poll() is None:  # only when stopping itself failed; never leave it running
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
            for reader in readers:
                reader.join(timeout=5)

        result = collector.result(self.binary, proc.returncode, stderr_lines, detailed_exitcode)
        result.interrupted = isinstance(stopped_by, KeyboardInterrupt)
        self.last_result = result
        if stopped_by is not None:
            raise stopped_by
        for diag in result.diagnostics[len(collector.diagnostics) :]:
            # Diagnostics recovered from plain text were not streamed as events; show them now.
            self._emit(TerraformEvent("diagnostic", str(diag).splitlines()[0], diag.address, level=diag.severity))
        return result

    def _stop_child(
        self, proc: subprocess.Popen[str], lines: queue.Queue[str | None] | None, collector: Collector
    ) -> None:
        """Forward the interrupt and wait for Terraform to finish writing state, escalating if it hangs.

        ``lines`` is None once stdout has reached its end; otherwise it is drained meanwhile, both so the
        child never blocks on a full pipe and so the result records what Terraform stopped.
        """
        _signal_group(proc, signal.SIGINT)
        deadline = time.monotonic() + self.interrupt_timeout
        forwarded_again = False
        while lines is not None or proc.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                if lines is None:
                    proc.wait(timeout=min(remaining, 1.0))
                elif (line := lines.get(timeout=min(remaining, 1.0))) is None:
                    lines = None
                else:
                    # No user callback here: the one that raised may raise again.
                    collector.take(line)
            except (queue.Empty, subprocess.TimeoutExpired):
                continue
            except KeyboardInterrupt:
                # A second Ctrl-C means what it means to Terraform itself: stop now.
                if not forwarded_again:
                    forwarded_again = True
                    _signal_group(proc, signal.SIGINT)
                deadline = min(deadline, time.monotonic() + TERMINATE_GRACE)
        else:
            # Terraform exited within the deadline. A provisioner command that started just after the
            # interrupt was sent can outlive it in the group: end it too. The group id cannot have been
            # reused while a member is still alive, and killpg fails harmlessly once the group is empty.
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            _signal_group(proc, sig)
            try:
                proc.wait(timeout=TERMINATE_GRACE)
                return
            except subprocess.TimeoutExpired:
                continue


def _pump_lines(stream: Any, sink: Callable[[Any], None], end: Callable[[], None] | None = None) -> None:
    try:
        for line in stream:
            sink(line)
    except ValueError:  # stream closed under us while shutting down
        pass
    finally:
        if end is not None:
            end()


def _signal_group(proc: subprocess.Popen[str], sig: int) -> None:
    """Signal the child's whole process group (Terraform, its providers and provisioner commands), as the
    terminal would have; only while the child is unreaped, so the group id cannot belong to anyone else."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass
