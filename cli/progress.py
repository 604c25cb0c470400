"""Progress of the long-running commands: Terraform's events and the waits on AWS, for people or machines.

Two renderings of the same stream, both on stderr so stdout stays free for the final result:

- for people, a rich console: one line per resource Terraform starts or finishes (the text is Terraform's
  own), plus a transient spinner naming what is still in flight and for how long. Without a terminal (CI
  logs) the spinner is off and the periodic "still creating" / "still waiting" news is printed as lines
  instead, so a job log shows that a 15-minute endpoint creation is alive;
- for machines (``--json``), one JSON object per line: ``{"event": "step" | "terraform" | "wait", ...}``.
"""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any

from fastscale.cli.common import console as make_console
from fastscale.cli.output import escape, output_width, wrap_text

if TYPE_CHECKING:  # imported for type hints only: the runtime import stays lazy
    from rich.console import Console
    from rich.status import Status

    from fastscale.infra.terraform.runner import TerraformEvent

#: Terraform message kinds shown as lines for people. Left out on purpose: diagnostics, which the command
#: prints in full (with Terraform's detail text) once the run ended; planned changes, which are the result of a
#: plan and printed on stdout with its counts; and drift ("Drift detected"), which the plan's result shows
#: sorted out into values changed outside Terraform and provider normalisation (cli/plan_view.py), where a
#: line per resource here would repeat the normalisation after every deploy.
_LINE_KINDS = {
    "apply_start",
    "apply_complete",
    "apply_errored",
    "provision_errored",
}
#: Kinds that only say "still working"; a line each only when there is no spinner to show them.
_HEARTBEAT_KINDS = {"apply_progress", "refresh_start"}

_STYLE = {
    "apply_complete": "green",
    "apply_errored": "bold red",
    "provision_errored": "bold red",
}

#: Seconds between two lines repeating an unchanged wait state when there is no spinner.
WAIT_HEARTBEAT = 60.0

_VERB = {"create": "creating", "update": "updating", "delete": "destroying", "replace": "replacing", "read": "reading"}


class Reporter:
    """Renders the steps of one command; its methods are the callbacks handed to the runner and the waits.

    Use as a context manager so the spinner is always stopped, even when the command fails.
    """

    def __init__(self, as_json: bool = False, console: Console | None = None):
        self.as_json = as_json
        if console is None:
            console = make_console(stderr=True)
        self.console = console
        self.live = console.is_terminal and not as_json
        self.operation: str | None = None
        self._status: Status | None = None
        self._in_flight: dict[str, tuple[str, float]] = {}  # address -> (verb, started at)
        self._last_wait: tuple[str, str] | None = None
        self._last_wait_line = 0.0

    # -- lifecycle ------------------------------------------------------------------------------------

    def __enter__(self) -> Reporter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def _emit_json(self, payload: dict[str, Any]) -> None:
        # Plain writes, not rich: a JSON line must never be wrapped or styled.
        sys.stderr.write(json.dumps(payload, default=str) + "\n")
        sys.stderr.flush()

    def _spin(self, text: str) -> None:
        if not self.live:
            return
        if self._status is None:
            self._status = self.console.status(text, spinner="dots")
            self._status.start()
        else:
            self._status.update(text)

    # -- steps ----------------------------------------------------------------------------------------

    def step(self, name: str, detail: str = "") -> None:
        """A stage of the command begins (validate, synth, init, plan, apply, verify, ...)."""
        if self.as_json:
            self._emit_json({"event": "step", "step": name, "detail": detail})
            return
        self._say(f"[bold cyan]→ {name}[/]" + (f" [dim]{escape(detail)}[/]" if detail else ""))
        self._spin(f"{name} {detail}".strip())

    def note(self, message: str, style: str = "dim") -> None:
        if self.as_json:
            self._emit_json({"event": "note", "message": message})
            return
        self._say(f"[{style}]{escape(message)}[/]")

    def _say(self, markup: str, indent: str = "    ") -> None:
        """One message, wrapped at spaces to the output's width (see :func:`cli.common.say`)."""
        for line in wrap_text(self.console.render_str(markup), output_width(self.console), indent):
            self.console.print(line, highlight=False, soft_wrap=True)

    # -- terraform ------------------------------------------------------------------------------------

    def terraform_event(self, event: TerraformEvent) -> None:
        """``on_event`` for :class:`infra.terraform.runner.TerraformRunner`."""
        if self.as_json:
            self._emit_json({"event": "terraform", "operation": self.operation, **event.to_dict()})
            return
        if event.address and event.kind == "apply_start":
            self._in_flight[event.address] = (_VERB.get(event.action or "", "working on"), time.monotonic())
        elif event.address and event.kind in ("apply_complete", "apply_errored"):
            self._in_flight.pop(event.address, None)

        if event.kind in _LINE_KINDS and event.message:
            style = _STYLE.get(event.kind)
            text = escape(event.message)
            self._say(f"  [{style}]{text}[/]" if style else f"  {text}")
        elif event.kind in _HEARTBEAT_KINDS and event.message and not self.live:
            self._say(f"  [dim]{escape(event.message)}[/]")
        self._spin(self._terraform_status())

    def _terraform_status(self) -> str:
        op = self.operation or "terraform"
        if not self._in_flight:
            return f"terraform {op}"
        now = time.monotonic()
        parts = [f"{addr} ({verb}, {now - started:.0f}s)" for addr, (verb, started) in self._in_flight.items()]
        shown = ", ".join(parts[:3]) + (f" and {len(parts) - 3} more" if len(parts) > 3 else "")
        return f"terraform {op}: {shown}"

    # -- waits on AWS ---------------------------------------------------------------------------------

    def wait_progress(self, progress: Any) -> None:
        """``on_progress`` for the AWS waits (:class:`infra.aws.waiters.Progress`: what, state, elapsed,
        timeout). A line when what is awaited or its state changes; the spinner shows the clock."""
        what = str(getattr(progress, "what", progress))
        state = str(getattr(progress, "state", ""))
        elapsed = float(getattr(progress, "elapsed", 0.0) or 0.0)
        timeout = getattr(progress, "timeout", None)
        if self.as_json:
            self._emit_json(
                {"event": "wait", "what": what, "state": state, "elapsed": round(elapsed, 1), "timeout": timeout}
            )
            return
        clock = f"{elapsed:.0f}s" + (f" of {float(timeout):.0f}s" if timeout else "")
        changed = (what, state) != self._last_wait
        # Without a spinner, repeat an unchanged state now and then: some CI systems stop a job whose log
        # stays silent for ten minutes, and an endpoint can sit in "Creating" for longer than that.
        heartbeat = not self.live and elapsed - self._last_wait_line >= WAIT_HEARTBEAT
        if changed or heartbeat:
            self._last_wait = (what, state)
            self._last_wait_line = elapsed
            self._say(f"  [dim]{escape(what)}: {escape(state)} ({clock})[/]")
        self._spin(f"waiting for {what}: {state} ({clock})")

    # -- sweep ----------------------------------------------------------------------------------------

    def sweep_progress(self, item: Any) -> None:
        """``on_progress`` for :func:`infra.aws.sweep.sweep`: a wait observation, or a resource dealt with
        (:class:`infra.aws.sweep.SweepAction`: kind, name, status, detail)."""
        if not hasattr(item, "status") or not hasattr(item, "kind"):
            self.wait_progress(item)
            return
        if self.as_json:
            self._emit_json(
                {"event": "sweep", "kind": item.kind, "name": item.name, "status": item.status, "detail": item.detail}
            )
            return
        if item.status == "would-delete":
            return  # a dry run happens in an instant; its list is the command's result, printed once
        style = _SWEEP_STYLE.get(item.status, "")
        text = escape(f"{item.status}: {item.kind} {item.name}" + (f" ({item.detail})" if item.detail else ""))
        self._say(f"  [{style}]{text}[/]" if style else f"  {text}")


_SWEEP_STYLE = {"deleted": "green", "failed": "bold red", "skipped": "yellow", "would-delete": "cyan"}


