"""What a Terraform run says, typed: each line of its machine-readable UI (``-json``) as a :class:`TerraformEvent`,
Terraform's errors and warnings as :class:`Diagnostic` (also recovered from its human-readable text), and the
whole run summed up in a :class:`TerraformResult`.

Pure: :mod:`.commands` feeds the lines of a running child to a :class:`Collector` and asks it for the result.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fastscale.infra.terraform.runner.binary import TerraformError

_DIAG_HEADER_RE = re.compile(r"(Error|Warning): (.*)")
_WITH_ADDRESS_RE = re.compile(r"\s*with (\S+),\s*")


class TerraformFailed(TerraformError):
    """Raised by :meth:`TerraformResult.raise_for_status` for a failed run; keeps the result."""

    def __init__(self, message: str, result: TerraformResult):
        super().__init__(message)
        self.result = result


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
    ``resource_drift``, ``diagnostic``, ``change_summary``, ``outputs``, ...), or ``log`` for a plain-text line.
    ``importing`` is the import ID of a planned change that imports the resource (its ``action`` is then
    ``import``, or what else the plan does to it, e.g. ``update``).
    """

    kind: str
    message: str
    address: str | None = None
    action: str | None = None
    elapsed: float | None = None
    level: str = "info"
    importing: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The event as a JSON object (``importing`` only on a change that imports)."""
        out = asdict(self)
        if self.importing is None:
            del out["importing"]
        return out


@dataclass
class TerraformResult:
    operation: str  # "init", "plan", "apply" or "destroy"
    returncode: int
    ok: bool
    added: int = 0
    changed: int = 0
    destroyed: int = 0
    #: Resources imported (planned to be, for a plan), counted apart from the three above, as Terraform counts them.
    imported: int = 0
    #: Plan only: addresses Terraform reported as changed outside it since the state was saved
    #: (``resource_drift``), in the order reported.
    drifted: list[str] = field(default_factory=list)
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
            address = next((m.group(1) for m in map(_WITH_ADDRESS_RE.fullmatch, body) if m), None)
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
        match = _DIAG_HEADER_RE.fullmatch(line)
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
    importing = hook.get("importing") if isinstance(hook, Mapping) else None
    return TerraformEvent(
        kind=kind,
        message=str(msg.get("@message", "")).strip("\n"),
        address=address,
        action=action,
        elapsed=float(elapsed) if isinstance(elapsed, (int, float)) else None,
        level=str(msg.get("@level", "info")),
        importing=str(importing.get("id", "")) if isinstance(importing, Mapping) else None,
    )


class Collector:
    """Accumulates one run's messages into the pieces of a TerraformResult."""

    def __init__(self, operation: str):
        self.operation = operation
        self.summaries: dict[str, Mapping[str, Any]] = {}
        self.completed: Counter[str] = Counter()
        self.diagnostics: list[Diagnostic] = []
        self.outputs: dict[str, Any] = {}
        self.plain_lines: list[str] = []
        self.drifted: list[str] = []

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
        elif event.kind == "resource_drift" and event.address and event.address not in self.drifted:
            self.drifted.append(event.address)
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

    def counts(self) -> tuple[int, int, int, int]:
        """Added, changed, destroyed and imported, as Terraform's summary counts them."""
        wanted = ("plan",) if self.operation == "plan" else ("apply", "destroy")
        for op in wanted:
            if op in self.summaries:
                s = self.summaries[op]
                return int(s.get("add", 0)), int(s.get("change", 0)), int(s.get("remove", 0)), int(s.get("import", 0))
        # A failed apply prints no final summary; count what Terraform reported as done instead, so a
        # partial apply still says what it created.
        return self.completed["create"], self.completed["update"], self.completed["delete"], 0

    def result(self, binary: str, returncode: int, stderr_lines: list[str], detailed_exitcode: bool) -> TerraformResult:
        """The run's result: the streamed diagnostics, those recovered from plain text and stderr, the counts;
        a failure with no error of its own gets one naming ``binary``, the operation and the exit code."""
        diagnostics = list(self.diagnostics)
        diagnostics += parse_plain_diagnostics(self.plain_lines)
        diagnostics += parse_plain_diagnostics(stderr_lines)
        ok = returncode == 0 or (self.operation == "plan" and detailed_exitcode and returncode == 2)
        if not ok and not any(d.severity == "error" for d in diagnostics):
            tail = "".join(stderr_lines[-20:]).strip() or "\n".join(self.plain_lines[-20:]).strip()
            diagnostics.append(
                Diagnostic("error", f"{Path(binary).name} {self.operation} exited with code {returncode}", tail)
            )
        added, changed, destroyed, imported = self.counts()
        has_changes = False
        if self.operation == "plan":
            if detailed_exitcode:
                has_changes = returncode == 2
            else:
                has_changes = ok and (added + changed + destroyed + imported) > 0
        return TerraformResult(
            operation=self.operation,
            returncode=returncode,
            ok=ok,
            added=added,
            changed=changed,
            destroyed=destroyed,
            imported=imported,
            drifted=list(self.drifted),
            has_changes=has_changes,
            diagnostics=diagnostics,
            outputs=self.outputs,
        )
