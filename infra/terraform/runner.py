"""Run the real ``terraform`` (or ``tofu``) binary on a synthesized stack directory.

fastscale does not reimplement any part of Terraform: it drives the binary the user already trusts and
reads Terraform's machine-readable UI (``-json``: one JSON message per line) as it streams, turning each
message into a typed :class:`TerraformEvent` for progress display and summing the run up in a
:class:`TerraformResult`. Failures are data, not exceptions: ``result.ok`` is False and
``result.diagnostics`` carry Terraform's own text; :meth:`TerraformResult.raise_for_status` turns that
into :class:`TerraformFailed` for callers that want an exception.

Ctrl-C matters here more than anywhere else in the tool: a Terraform run killed outright can leave the
state locked and resources half-recorded. The child therefore runs in its own process group (so the
terminal's SIGINT reaches only this process, never both), and a KeyboardInterrupt is forwarded to the
child's group exactly once, exactly as the terminal would have done. Terraform then stops gracefully,
writes its state and releases the lock; only after it exited is KeyboardInterrupt re-raised.

Pure Python: no cdktf import, so the CLI can deploy an already synthesized stack without loading jsii.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fastscale.infra.base.process import run_bounded

#: Environment variable naming the binary (path or name) when no ``--terraform-bin`` is given.
ENV_VAR = "FASTSCALE_TERRAFORM"
#: The CLI flag that points at a binary; named in error messages so users know how to fix them.
CLI_FLAG = "--terraform-bin"
#: Looked up on PATH in this order.
BINARY_NAMES = ("terraform", "tofu")

#: How long a graceful stop may take after Ctrl-C before the child is terminated. Generous on purpose:
#: Terraform waits for in-flight API calls (a SageMaker endpoint deletion call, say) before it writes
#: state, and cutting that short is what leaves state out of step with the account.
DEFAULT_INTERRUPT_TIMEOUT = 300.0
#: After SIGTERM, how long to wait before SIGKILL.
TERMINATE_GRACE = 10.0

#: Terraform versions before this have no ``init -json``; OpenTofu is driven in plain mode for init.
_INIT_JSON_SINCE = (1, 9, 0)
#: Oldest Terraform that runs the synthesized stacks: CDK for Terraform's own prerequisite. Every OpenTofu
#: release (1.6 and later) qualifies.
MIN_TERRAFORM_VERSION = (1, 2, 0)
#: Seconds ``terraform version`` may take. It answers in well under a second; a binary that does not is
#: not a working terraform (a wrong file, a wrapper waiting for input or the network).
VERSION_TIMEOUT = 20.0
#: Seconds ``terraform show -json`` of a saved plan may take: it reads local files and provider schemas.
SHOW_TIMEOUT = 300.0

_VERSION_RE = re.compile(r"^(Terraform|OpenTofu) v(\d+)\.(\d+)\.(\d+)", re.MULTILINE)
_DIAG_HEADER_RE = re.compile(r"^(Error|Warning): (.*)$")
_WITH_ADDRESS_RE = re.compile(r"^\s*with (\S+),\s*$")


class TerraformError(Exception):
    """Base class of the runner's errors."""


class TerraformNotFound(TerraformError):
    """No terraform or tofu binary could be found or started."""


class TerraformUnsupported(TerraformError):
    """The binary does not answer ``version`` as terraform/tofu does, in time, or is too old."""


class TerraformFailed(TerraformError):
    """Raised by :meth:`TerraformResult.raise_for_status` for a failed run; keeps the result."""

    def __init__(self, message: str, result: TerraformResult):
        super().__init__(message)
        self.result = result


def _not_found_hint() -> str:
    return (
        f"Install Terraform (`terraform`) or OpenTofu (`tofu`) and put it on PATH, or point fastscale at "
        f"one with {CLI_FLAG} PATH or the {ENV_VAR} environment variable."
    )


def _resolve(candidate: str) -> str | None:
    """An absolute executable path for a name or path, or None.

    Absolute because Terraform runs in the stack directory: a relative ``./tf`` (or a relative PATH
    entry) means the caller's working directory, and only resolving it here keeps that meaning.
    """
    if os.sep in candidate or (os.altsep and os.altsep in candidate):
        path = Path(candidate).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return os.path.abspath(path)
        return None
    found = shutil.which(candidate)
    return os.path.abspath(found) if found else None


def find_binary(explicit: str | None = None) -> str:
    """Path of the binary to run: ``explicit`` (the CLI flag), then ``$FASTSCALE_TERRAFORM``, then
    ``terraform`` on PATH, then ``tofu`` on PATH.

    A binary the user named explicitly (flag or environment variable) that cannot be found is an error
    of its own rather than a silent fall back to whatever is on PATH: deploying with a different binary
    than the one asked for could use a different state format or provider lock.
    """
    if explicit:
        found = _resolve(explicit)
        if found is None:
            raise TerraformNotFound(
                f"{CLI_FLAG} {explicit!r}: no executable file by that name or path. {_not_found_hint()}"
            )
        return found
    from_env = os.environ.get(ENV_VAR, "").strip()
    if from_env:
        found = _resolve(from_env)
        if found is None:
            raise TerraformNotFound(
                f"{ENV_VAR}={from_env!r}: no executable file by that name or path. {_not_found_hint()}"
            )
        return found
    for name in BINARY_NAMES:
        found = _resolve(name)
        if found:
            return found
    raise TerraformNotFound(f"Neither `terraform` nor `tofu` was found on PATH. {_not_found_hint()}")


@dataclass(frozen=True)
class Diagnostic:
    """One error or warning, in Terraform's own words."""

    severity: str  # "error" or "warning"
    summary: str
    detail: str = ""
    address: str | None = None

    def __str__(self) -> str:
        where = f" ({self.address})" if self.address else ""
        head = f"{self.severity.capitalize()}: {self.summary}{where}"
        if not self.detail:
            return head
        body = "\n".join(f"  {line}" if line else "" for line in self.detail.rstrip().splitlines())
        return f"{head}\n{body}"


@dataclass(frozen=True)
class TerraformEvent:
    """One message of a run, typed for display.

    ``kind`` is Terraform's message ``type`` (``apply_start``, ``apply_complete``, ``planned_change``,
    ``diagnostic``, ``change_summary``, ``outputs``, ...), or ``log`` for a plain-text line.
    """

    kind: str
    message: str
    address: str | None = None
    action: str | None = None
    elapsed: float | None = None
    level: str = "info"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TerraformResult:
    operation: str  # "init", "plan", "apply" or "destroy"
    returncode: int
    ok: bool
    added: int = 0
    changed: int = 0
    destroyed: int = 0
    #: Plan only: whether applying the plan would change anything.
    has_changes: bool = False
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: Output values as Terraform reported them after an apply. Sensitive outputs never carry a value
    #: in Terraform's UI stream, so they are absent here by design.
    outputs: dict[str, Any] = field(default_factory=dict)
    #: True when the run was stopped by Ctrl-C (KeyboardInterrupt was re-raised after it ended).
    interrupted: bool = False

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    @property
    def failed_resources(self) -> list[str]:
        """Addresses of the managed resources Terraform's errors name, once each, in the order named (data
        sources left out: deleting nothing fixes a failed read of one)."""
        named = [d.address for d in self.errors if d.address and not d.address.startswith("data.")]
        return list(dict.fromkeys(a.split("[", 1)[0] if a.endswith("]") else a for a in named if a))

    def raise_for_status(self) -> TerraformResult:
        if self.ok:
            return self
        shown = self.errors or self.diagnostics
        lines = [f"terraform {self.operation} failed (exit code {self.returncode})"]
        lines += [str(d) for d in shown]
        raise TerraformFailed("\n".join(lines), self)


@dataclass(frozen=True)
class VersionInfo:
    product: str  # "terraform", "tofu" or "unknown"
    version: tuple[int, int, int]

    def __str__(self) -> str:
        return f"{self.product} {'.'.join(map(str, self.version))}"


def parse_plain_diagnostics(lines: Iterable[str]) -> list[Diagnostic]:
    """Diagnostics from Terraform's human-readable output (``Error: ...`` / ``Warning: ...`` blocks).

    Needed where there is no JSON UI: ``init`` on binaries without ``init -json``, and anything the
    binary prints to stderr before its JSON view exists. Handles both the boxed (``╷ │ ╵``) and the
    ``-no-color`` layouts.
    """
    found: list[Diagnostic] = []
    head: tuple[str, str] | None = None
    body: list[str] = []

    def close() -> None:
        nonlocal head, body
        if head is not None:
            address = next((m.group(1) for m in map(_WITH_ADDRESS_RE.match, body) if m), None)
            found.append(Diagnostic(head[0], head[1], "\n".join(body).strip("\n"), address))
        head, body = None, []

    for raw in lines:
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        if stripped in ("╷", "╵"):
            close()
            continue
        if line.lstrip().startswith("│"):
            line = line.lstrip()[1:]
            line = line[1:] if line.startswith(" ") else line
        match = _DIAG_HEADER_RE.match(line)
        if match:
            close()
            head = (match.group(1).lower(), match.group(2).strip())
        elif head is not None:
            body.append(line.rstrip())
    close()
    return found


def _event_from_message(msg: Mapping[str, Any]) -> TerraformEvent:
    kind = str(msg.get("type") or "log")
    hook = msg.get("hook") or msg.get("change") or {}
    resource = hook.get("resource") if isinstance(hook, Mapping) else None
    address = resource.get("addr") if isinstance(resource, Mapping) else None
    action = hook.get("action") if isinstance(hook, Mapping) else None
    elapsed = hook.get("elapsed_seconds") if isinstance(hook, Mapping) else None
    if kind == "diagnostic":
        address = (msg.get("diagnostic") or {}).get("address")
    return TerraformEvent(
        kind=kind,
        message=str(msg.get("@message", "")).strip("\n"),
        address=address,
        action=action,
        elapsed=float(elapsed) if isinstance(elapsed, (int, float)) else None,
        level=str(msg.get("@level", "info")),
    )


class _Collector:
    """Accumulates one run's messages into the pieces of a TerraformResult."""

    def __init__(self, operation: str):
        self.operation = operation
        self.summaries: dict[str, Mapping[str, Any]] = {}
        self.completed: Counter[str] = Counter()
        self.diagnostics: list[Diagnostic] = []
        self.outputs: dict[str, Any] = {}
        self.plain_lines: list[str] = []

    def take(self, line: str) -> TerraformEvent | None:
        text = line.rstrip("\r\n")
        if not text.strip():
            return None
        msg: Any = None
        if text.lstrip().startswith("{"):
            try:
                msg = json.loads(text)
            except ValueError:
                msg = None
        if not isinstance(msg, dict):
            self.plain_lines.append(text)
            return TerraformEvent(kind="log", message=text.strip())
        event = _event_from_message(msg)
        if event.kind == "change_summary":
            changes = msg.get("changes") or {}
            self.summaries[str(changes.get("operation", ""))] = changes
        elif event.kind == "apply_complete" and event.action:
            self.completed[event.action] += 1
        elif event.kind == "diagnostic":
            d = msg.get("diagnostic") or {}
            self.diagnostics.append(
                Diagnostic(
                    severity=str(d.get("severity", "error")),
                    summary=str(d.get("summary", "")),
                    detail=str(d.get("detail", "") or ""),
                    address=d.get("address"),
                )
            )
        elif event.kind == "outputs":
            values = msg.get("outputs") or {}
            # A plan's outputs message lists actions only; values appear after an apply.
            self.outputs = {k: v["value"] for k, v in values.items() if isinstance(v, dict) and "value" in v}
        return event

    def counts(self) -> tuple[int, int, int]:
        wanted = ("plan",) if self.operation == "plan" else ("apply", "destroy")
        for op in wanted:
            if op in self.summaries:
                s = self.summaries[op]
                return int(s.get("add", 0)), int(s.get("change", 0)), int(s.get("remove", 0))
        # A failed apply prints no final summary; count what Terraform reported as done instead, so a
        # partial apply still says what it created.
        return self.completed["create"], self.completed["update"], self.completed["delete"]


class TerraformRunner:
    """Runs ``init``, ``plan``, ``apply`` and ``destroy`` in one stack directory.

    ``env`` adds to (and overrides) the inherited environment, e.g. ``TF_CLI_CONFIG_FILE`` or
    ``TF_PLUGIN_CACHE_DIR``. ``on_event`` is called in the calling thread for every message as it
    arrives.
    """

    def __init__(
        self,
        binary: str,
        workdir: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        on_event: Callable[[TerraformEvent], None] | None = None,
        interrupt_timeout: float = DEFAULT_INTERRUPT_TIMEOUT,
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
        #: The last run's result, also set when the run was interrupted (before KeyboardInterrupt).
        self.last_result: TerraformResult | None = None
        #: Process id of the last child started; lets callers and tests check it has exited.
        self.last_pid: int | None = None
        self._version: VersionInfo | None = None

    # -- environment and version ------------------------------------------------------------------

    def _child_env(self) -> dict[str, str]:
        env = dict(os.environ)
        # TF_IN_AUTOMATION trims advice meant for humans at a prompt; CHECKPOINT_DISABLE stops the
        # binary phoning home for update checks (deploys must not depend on network beyond AWS).
        env["TF_IN_AUTOMATION"] = "1"
        env["CHECKPOINT_DISABLE"] = "1"
        env.update(self.env)
        return env

    def _cannot_run(self, exc: OSError) -> TerraformNotFound:
        return TerraformNotFound(f"Cannot run {self.binary!r}: {exc.strerror}. {_not_found_hint()}")

    def version(self) -> VersionInfo:
        if self._version is None:
            try:
                proc = run_bounded([self.binary, "version"], VERSION_TIMEOUT, cwd=self.workdir, env=self._child_env())
            except OSError as exc:
                raise self._cannot_run(exc) from exc
            except subprocess.TimeoutExpired:
                raise TerraformUnsupported(
                    f"`{self.binary} version` did not answer within {VERSION_TIMEOUT:g} s and was stopped; "
                    f"check that it is a working terraform or tofu binary. {_not_found_hint()}"
                ) from None
            match = _VERSION_RE.search(proc.stdout)
            if match:
                product = "terraform" if match.group(1) == "Terraform" else "tofu"
                numbers = (int(match.group(2)), int(match.group(3)), int(match.group(4)))
                self._version = VersionInfo(product, numbers)
            else:
                self._version = VersionInfo("unknown", (0, 0, 0))
        return self._version

    def require_supported(self) -> VersionInfo:
        """The version, or TerraformUnsupported when the binary is not terraform/tofu or is too old."""
        info = self.version()
        if info.product == "unknown":
            raise TerraformUnsupported(
                f"{self.binary!r} does not answer `version` as terraform or tofu does; {_not_found_hint()}"
            )
        if info.product == "terraform" and info.version < MIN_TERRAFORM_VERSION:
            wanted = ".".join(map(str, MIN_TERRAFORM_VERSION))
            raise TerraformUnsupported(
                f"{self.binary} is {info}, older than the {wanted} fastscale's stacks need: install Terraform "
                f"{wanted} or later (or OpenTofu), or point {CLI_FLAG} at it"
            )
        return info

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
    ) -> TerraformResult:
        """With ``detailed_exitcode`` the exit code decides: 0 no changes, 2 changes, 1 error."""
        args = ["plan", "-input=false", "-no-color", "-json"]
        if detailed_exitcode:
            args.append("-detailed-exitcode")
        if destroy:
            args.append("-destroy")
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
            raise self._cannot_run(exc) from exc
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
        collector = _Collector(operation)
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
            raise self._cannot_run(exc) from exc
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

        result = self._result(operation, proc.returncode, collector, stderr_lines, detailed_exitcode)
        result.interrupted = isinstance(stopped_by, KeyboardInterrupt)
        self.last_result = result
        if stopped_by is not None:
            raise stopped_by
        for diag in result.diagnostics[len(collector.diagnostics) :]:
            # Diagnostics recovered from plain text were not streamed as events; show them now.
            self._emit(TerraformEvent("diagnostic", str(diag).splitlines()[0], diag.address, level=diag.severity))
        return result

    def _stop_child(
        self, proc: subprocess.Popen[str], lines: queue.Queue[str | None] | None, collector: _Collector
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

    def _result(
        self,
        operation: str,
        returncode: int,
        collector: _Collector,
        stderr_lines: list[str],
        detailed_exitcode: bool,
    ) -> TerraformResult:
        diagnostics = list(collector.diagnostics)
        diagnostics += parse_plain_diagnostics(collector.plain_lines)
        diagnostics += parse_plain_diagnostics(stderr_lines)
        ok = returncode == 0 or (operation == "plan" and detailed_exitcode and returncode == 2)
        if not ok and not any(d.severity == "error" for d in diagnostics):
            tail = "".join(stderr_lines[-20:]).strip() or "\n".join(collector.plain_lines[-20:]).strip()
            diagnostics.append(
                Diagnostic("error", f"{Path(self.binary).name} {operation} exited with code {returncode}", tail)
            )
        added, changed, destroyed = collector.counts()
        has_changes = False
        if operation == "plan":
            if detailed_exitcode:
                has_changes = returncode == 2
            else:
                has_changes = ok and (added + changed + destroyed) > 0
        return TerraformResult(
            operation=operation,
            returncode=returncode,
            ok=ok,
            added=added,
            changed=changed,
            destroyed=destroyed,
            has_changes=has_changes,
            diagnostics=diagnostics,
            outputs=collector.outputs,
        )


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
