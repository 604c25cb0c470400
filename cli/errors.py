"""How a command ends when something goes wrong: one line, a documented exit code, never a traceback.

Every command's callback runs inside :func:`guard` (the command group wraps them all), so a failure
anywhere below it — AWS, Terraform, the CDK engine, the file system — is reported the same way:

- for people, one ``error: ...`` line on stderr;
- with ``--json``, exactly one JSON object on stdout with an ``error`` member (so a CI ``report.json``
  is never empty), and nothing else on stdout;
- the exit code: 2 for bad input (the config, an argument, an output path that must not be written),
  1 for an operation that failed, 130 for Ctrl-C.

Commands raise :class:`CommandError` (or call :func:`fastscale.cli.common.fail`) for failures they
detect themselves; everything else is explained by :func:`explain`. Only modules already imported are
consulted, so this module costs nothing at start-up. ``FASTSCALE_DEBUG=1`` re-raises unexpected errors
with their traceback, for bug reports.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from fastscale.cli.output import escape, say

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
#: Exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

#: Longest error line printed; beyond this the text is cut (the whole text is rarely more useful).
MAX_LINE = 2000
DEBUG_ENV = "FASTSCALE_DEBUG"


class CommandError(Exception):
    """A failure a command detected itself; ``message`` is shown as is (on one line)."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED):
        super().__init__(message)
        self.exit_code = exit_code


def one_line(text: str) -> str:
    """Collapse whitespace and line breaks: an error is one greppable line, however long."""
    line = " ".join(str(text).split())
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def _instance_of(exc: BaseException, module: str, name: str) -> bool:
    """isinstance against a class of a module only if that module is already loaded (if it is not, the
    exception cannot be one of its classes, and importing it here would cost start-up time)."""
    cls = getattr(sys.modules.get(module), name, None)
    return isinstance(cls, type) and isinstance(exc, cls)


def explain(exc: BaseException) -> tuple[str, int]:
    """The one-line message and the exit code for an exception that ended a command."""
    code = getattr(exc, "exit_code", None)
    if isinstance(exc, CommandError) or (isinstance(code, int) and not isinstance(exc, click.ClickException)):
        return one_line(str(exc)), int(code) if isinstance(code, int) else EXIT_FAILED
    if _instance_of(exc, "botocore.exceptions", "ClientError") or _instance_of(
        exc, "botocore.exceptions", "BotoCoreError"
    ):
        from fastscale.infra.aws.clients import describe_failure  # lazy: boto3, loaded only when this runs

        return one_line(describe_failure(exc)), EXIT_FAILED
    if _instance_of(exc, "jsii.errors", "JSIIError") or _instance_of(exc, "jsii.errors", "JavaScriptError"):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return one_line(f"the CDK engine (jsii, running on node) failed: {first}"), EXIT_FAILED
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return one_line(f"{where}{exc.strerror or exc}"), EXIT_FAILED
    if _instance_of(exc, "subprocess", "TimeoutExpired"):
        cmd = getattr(exc, "cmd", "")
        cmd = " ".join(map(str, cmd)) if isinstance(cmd, (list, tuple)) else str(cmd)
        return one_line(f"`{cmd}` did not finish within {getattr(exc, 'timeout', '?')} s and was stopped"), EXIT_FAILED
    # Known failures of the other layers carry a message meant for users.
    for module, name in (
        ("fastscale.infra.aws.clients", "AwsError"),
        ("fastscale.infra.terraform.runner", "TerraformError"),
        ("fastscale.stacks.engine_choice", "EngineUnavailable"),
    ):
        if _instance_of(exc, module, name):
            return one_line(str(exc)), EXIT_FAILED
    text = f": {exc}" if str(exc) else ""
    return (
        one_line(f"unexpected {type(exc).__name__}{text} (this is a bug in fastscale; {DEBUG_ENV}=1 shows the "
                 "traceback to report)"),
        EXIT_FAILED,
    )


def report(
    message: str, exit_code: int, *, as_json: bool, command: str | None = None, file: str | None = None
) -> NoReturn:
    """End the command with one error line (or one JSON object with ``error``) and ``exit_code``."""
    line = one_line(message)
    if as_json:
        doc: dict[str, Any] = {"command": command, "file": file, "ok": False, "error": line, "exit_code": exit_code}
        doc = {k: v for k, v in doc.items() if v is not None}
        click.echo(json.dumps(doc, indent=2))
    else:
        # One line in a log; on a terminal (or with COLUMNS) wrapped to its width like every message.
        say(f"[bold red]error:[/] {escape(line)}", stderr=True, indent="  ")
    sys.exit(exit_code)


def guard(command: str, callback: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command's callback so that nothing ends it with a traceback."""
    if getattr(callback, "__fastscale_guarded__", False):
        return callback

    @functools.wraps(callback)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        as_json = bool(kwargs.get("as_json"))
        file = kwargs.get("config_file")
        files = kwargs.get("config_files")
        if file is None and isinstance(files, tuple) and len(files) == 1:
            file = files[0]  # a command taking FILE... given one
        file = file if isinstance(file, str) else None
        try:
            return callback(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, click.Abort, BrokenPipeError):
            raise  # Click reports these itself (usage errors exit 2); the group handles a closed pipe
        except KeyboardInterrupt:
            report(f"interrupted: fastscale {command} was stopped", EXIT_INTERRUPTED, as_json=as_json,
                   command=command, file=file)
        except Exception as exc:
            if os.environ.get(DEBUG_ENV):
                raise
            message, code = explain(exc)
            report(message, code, as_json=as_json, command=command, file=file)

    guarded.__fastscale_guarded__ = True  # type: ignore[attr-defined]
    return guarded
