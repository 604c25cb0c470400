"""Shared CLI plumbing: loading a config with its findings, printing them, exit codes."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

import click

from fastscale.cli.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, CommandError
from fastscale.cli.output import console, escape, output_width, say, wrap_text
from fastscale.infra.base import writer
from fastscale.infra.base.network import TRUST_FLAG, remote_hint, remote_reason
from fastscale.infra.base.safe_files import SpecialFileError, read_bytes, refuse_special
from fastscale.infra.config import ConfigError, FastscaleConfig, check_endpoint_url, load_config
from fastscale.infra.model.resolved import ResolvedStack, resolve
from fastscale.infra.rules import Finding, Severity, count, has_errors, run_rules, with_lines
from fastscale.infra.rules._common import SAGEMAKER_NAME_RE

if TYPE_CHECKING:  # rich is imported where output is printed, not when a command module loads
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_OK"]



class UserPath(click.Path):
    """A path named on the command line: a FIFO, device or socket is refused at once (exit code 2), before
    anything opens it and blocks (``infra.base.safe_files``)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        converted = super().convert(value, param, ctx)
        try:
            refuse_special(os.fsdecode(converted), "path")
        except SpecialFileError as exc:
            self.fail(str(exc), param, ctx)
        return converted


class OutputPath(UserPath):
    """A path on the command line that fastscale writes (a file, or a directory it writes into): besides a
    FIFO, device or socket, a symbolic link at it or on the way to it is refused at once (exit code 2,
    nothing written), however long the command would have run first. The writes themselves go through
    ``infra.base.writer``, which refuses the same links (and those below an output directory) again."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        try:  # first: Click's own checks (exists, writable) would look through the link
            writer.check_target(os.fsdecode(value), what="path")
        except writer.OutputPathError as exc:
            self.fail(str(exc), param, ctx)
        return super().convert(value, param, ctx)


config_argument = click.argument("config_file", metavar="FILE", type=UserPath(dir_okay=False, path_type=str))
json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")

_ENDPOINT_URL_KEY = "fastscale.endpoint_url"
_TRUST_KEY = "fastscale.send_credentials_to_endpoint_url"


def _remember_endpoint_url(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        try:
            ctx.meta[_ENDPOINT_URL_KEY] = check_endpoint_url(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None


def _remember_trust(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    ctx.meta[_TRUST_KEY] = bool(value)


_url_option = click.option(
    "--endpoint-url",
    metavar="URL",
    envvar="FASTSCALE_ENDPOINT_URL",
    expose_value=False,
    callback=_remember_endpoint_url,
    help="Send every AWS call (Terraform's aws provider and fastscale's own checks) to this AWS emulator "
    "instead of AWS, e.g. http://localhost:4566, signed with the dummy credentials testing/testing. Overrides "
    "`endpoint_url` in the config; also FASTSCALE_ENDPOINT_URL. Never use it with a real account. Only "
    "loopback and private addresses are accepted without --send-credentials-to-endpoint-url; link-local, "
    "metadata and other cloud-internal addresses never.",
)
_trust_option = click.option(
    TRUST_FLAG,
    is_flag=True,
    expose_value=False,
    callback=_remember_trust,
    help="Sign the AWS calls to `endpoint_url` (config or --endpoint-url, and the S3 state's "
    "`state.endpoint_url`) with your real AWS credentials instead of the dummy ones, and allow those URLs to "
    "name a host that is not loopback or private. Only for an emulator or proxy you trust with your "
    "credentials; no config key and no environment variable can turn it on. Default: off.",
)


def _stack_names(_ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    for name in value:
        if not SAGEMAKER_NAME_RE.fullmatch(name):
            raise click.BadParameter(f"{name!r} is not a stack name (letters, digits and hyphens, starting and ending "
                                     "with a letter or digit: the project of the stack that owns the resources)")
    return tuple(dict.fromkeys(value))


#: A deliberate hand-over of resources another stack's tags claim. A command-line flag only, never a config
#: key nor an environment variable: a pull request controls the config and what the pipeline sets.
take_over_option = click.option(
    "--take-over-from",
    "take_over",
    metavar="STACK",
    multiple=True,
    callback=_stack_names,
    help="Adopt resources whose fastscale:stack tag names STACK (repeat for several stacks): a deliberate "
    "hand-over from that stack, which must no longer manage them. Without it, adopting another stack's "
    "resources, or a plan that re-tags them, stops with exit 2.",
)


def endpoint_url_option(command: Any) -> Any:
    """Commands that call AWS (through Terraform or boto3) take --endpoint-url and its opt-in,
    --send-credentials-to-endpoint-url; `load_checked` (or `apply_target`) applies both."""
    return _url_option(_trust_option(command))


def apply_target(config: FastscaleConfig, *, announce: bool = True) -> FastscaleConfig:
    """The config with the command line's --endpoint-url and --send-credentials-to-endpoint-url applied;
    announces an emulator target on stderr (also with --json, whose stdout stays JSON), so nobody mistakes
    an emulator run for a real one, and says which credentials its calls carry. A remote --endpoint-url
    without the opt-in is bad input (exit code 2); a remote `endpoint_url` in the config is left to rule
    FS096, which names its line."""
    ctx = click.get_current_context(silent=True)
    url = ctx.meta.get(_ENDPOINT_URL_KEY) if ctx is not None else None
    send = bool(ctx.meta.get(_TRUST_KEY)) if ctx is not None else False
    if url:
        reason = remote_reason(url, "--endpoint-url")
        if reason and not send:
            raise click.BadParameter(f"{reason}: {remote_hint(url)}", param_hint="'--endpoint-url'")
        config = config.model_copy(update={"endpoint_url": url})
    config = config.sending_credentials_to_endpoint(send)
    if config.endpoint_url and announce:
        signed = ("your own AWS credentials (--send-credentials-to-endpoint-url)" if send
                  else "dummy credentials, never yours")
        say(f"[bold yellow]EMULATOR TARGET:[/] every AWS call goes to {escape(config.endpoint_url)}, not to AWS, "
            f"signed with {escape(signed)}", stderr=True, indent="  ")
    return config


def print_table(table: Table, stderr: bool = False, lead: int = 1) -> None:
    """Print a table so that it fits :func:`output_width`.

    - No width (piped without COLUMNS): as wide as the table needs, every cell on one line, so names
      and image URIs stay whole and greppable in a CI log.
    - A width the table fits once its cells wrap at spaces (no word is ever cut): a table.
    - Narrower than that: stacked, one block per row: the first ``lead`` cells (the verdict and the
      name) on a line, then one indented ``column: value`` line per other non-empty cell, wrapped.
    """
    out = console(stderr=stderr)
    width = output_width(out)
    if width is None:
        for column in table.columns:
            column.no_wrap = True
        out.width = max(out.width, out.measure(table, options=out.options.update_width(10_000)).maximum)
        out.print(table)
        return
    out.width = width
    for column in table.columns:
        column.no_wrap = False
        column.overflow = "fold"
    if _narrowest(out, table) <= width:
        out.print(table, soft_wrap=False)  # the title and caption wrap to the table's width too
        return
    _print_stacked(out, table, width, lead)


def _narrowest(out: Console, table: Table) -> int:
    """Cells the table needs when every cell wraps at spaces and no word is cut: each column as wide
    as its longest word, plus padding and borders."""
    from rich.cells import cell_len

    def longest_word(value: Any) -> int:
        plain = value.plain if hasattr(value, "plain") else out.render_str(str(value)).plain
        return max((cell_len(word) for word in plain.split()), default=0)

    left, right = table.padding[3], table.padding[1]
    edges = (len(table.columns) + 1) if table.box is not None else 0
    return edges + sum(
        max([longest_word(col.header), *(longest_word(c) for c in col._cells)]) + left + right
        for col in table.columns
    )


def _print_stacked(out: Console, table: Table, width: int, lead: int) -> None:
    from rich.text import Text

    def cell(value: Any, style: Any = None) -> Text:
        text = value.copy() if isinstance(value, Text) else out.render_str(str(value))
        if style:
            text.stylize(style)
        return text

    if table.title:
        for line in wrap_text(cell(table.title, table.title_style), width):
            out.print(line)
    columns = table.columns
    for i in range(table.row_count):
        head = Text(" ").join(c for c in (cell(col._cells[i], col.style) for col in columns[:lead]) if c.plain.strip())
        for line in wrap_text(head, width, "    "):
            out.print(line)
        for col in columns[lead:]:
            value = cell(col._cells[i])
            if not value.plain.strip():
                continue
            header = cell(col.header).plain or "value"
            for line in wrap_text(Text(f"    {header}: ") + value, width, "      "):
                out.print(line)
    if table.caption:
        for line in wrap_text(cell(table.caption, table.caption_style), width):
            out.print(line)


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """End the command: one `error:` line (one JSON object with --json) and ``code``; see cli.errors."""
    raise CommandError(message, code)


def write_plot(draw: Callable[..., Any], *args: Any, path: str) -> None:
    """``draw(*args, path)``: a PNG written, or the command ended with exit code 1 when matplotlib is missing or
    the file cannot be written (a path fastscale must not write stays exit code 2, from the writer)."""
    from fastscale.infra.analysis.estimate.plot import (
        PlotUnavailable,  # lazy: keeps the estimate model out of every command's start-up
    )

    try:
        draw(*args, path)
    except PlotUnavailable as exc:
        fail(str(exc), EXIT_FAILED)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}", EXIT_FAILED)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


def validation_document(files: list[dict[str, Any]], exit_code: int) -> dict[str, Any]:
    """`validate --json`'s one shape, for one file or many (and for any command given a bad config)."""
    return {"valid": all(f["valid"] for f in files), "exit_code": exit_code, "files": files}


def config_error_report(err: ConfigError) -> dict[str, Any]:
    """The `--json` form of a file that could not be read as a config (code FS000)."""
    return {
        "valid": False,
        "file": err.source,
        "findings": [
            {"code": "FS000", "severity": "error", "path": p.path, "line": p.line, "message": p.message,
             "hint": "fix the file so it matches the schema (`fastscale schema` prints it)"}
            for p in err.problems
        ],
    }


def print_config_error(err: ConfigError, as_json: bool = False) -> None:
    if as_json:
        print_json(validation_document([config_error_report(err)], EXIT_BAD_INPUT))
        return
    say(f"[bold red]error:[/] {escape(err.source)} is not a valid fastscale config:", stderr=True)
    for p in err.problems:
        where = f"line {p.line}, " if p.line else ""
        say(f"  - {where}[bold]{escape(p.path or '<file>')}[/]: {escape(p.message)}", stderr=True, indent="    ")


def print_findings(findings: list[Finding], source: str, unchecked: str | None = None, schema_errors: int = 0) -> None:
    """The findings as tables, then the verdict. ``unchecked``: why the AWS check could not be made,
    in which case a file without errors is not called valid; ``schema_errors``: how many schema errors were
    reported before them (the file is invalid whatever the rules found)."""
    from rich.table import Table

    for severity, style, noun in ((Severity.ERROR, "red", "error"), (Severity.WARNING, "yellow", "warning"),
                                  (Severity.INFO, "cyan", "note")):
        group = [f for f in findings if f.severity is severity]
        if not group:
            continue
        table = Table(title=f"{len(group)} {noun}{'s' if len(group) != 1 else ''}", title_style=f"bold {style}",
                      title_justify="left", show_lines=True, expand=False)
        table.add_column("code", style=style, no_wrap=True)
        table.add_column("path", overflow="fold")
        table.add_column("problem", overflow="fold")
        table.add_column("fix", overflow="fold")
        for f in group:
            where = f"line {f.line}, {f.path}" if f.line else f.path
            table.add_row(f.code, escape(where), escape(f.message), escape(f.hint))
        print_table(table, lead=2)
    errors, warnings, notes = (count(findings, s) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO))
    errors += schema_errors
    counts = ", ".join([f"{warnings} warning(s)"] * bool(warnings) + [f"{notes} note(s)"] * bool(notes))
    if errors:
        say(f"[bold red]✗ {escape(source)}: invalid[/] ({errors} error(s), {warnings} warning(s))", indent="  ")
    elif unchecked is not None:
        say(f"[bold red]✗ {escape(source)}: not checked with AWS[/] (no errors in the file itself): "
            f"{escape(unchecked)}", indent="  ")
    else:
        say(f"[bold green]✓ {escape(source)}: valid[/]" + (f" ({counts})" if counts else ""), indent="  ")


def rule_findings(config: FastscaleConfig, path: str, stack: ResolvedStack | None = None) -> list[Finding]:
    """Every rule's findings on ``config`` (``stack``: the config resolved, when the caller has it), each with the
    line of its path in the file at ``path``."""
    return with_file_lines(run_rules(config, stack), path)


def with_file_lines(findings: list[Finding], path: str) -> list[Finding]:
    """``findings``, each with the line of its path in the file at ``path``."""
    from pathlib import Path

    try:
        text = read_bytes(Path(path), 1 << 24, "config file").decode("utf-8")
    except (OSError, ValueError):  # it was read a moment ago; without it, findings keep their paths
        return findings
    return with_lines(findings, text)


@dataclass
class Checked:
    config: FastscaleConfig
    findings: list[Finding]
    source: str
    #: The config resolved (`infra.model.resolved`), once: what the rules checked, the analyses and the stacks read.
    stack: ResolvedStack


def load_checked(path: str, *, quiet_if_clean: bool = False, as_json: bool = False) -> Checked:
    """Load + validate a config for a command that goes on to do something.

    Bad input exits with code 2 before anything is written, deployed or deleted.
    """
    try:
        config = load_config(path)
    except ConfigError as err:
        print_config_error(err, as_json=as_json)
        sys.exit(EXIT_BAD_INPUT)
    config = apply_target(config)
    stack = resolve(config)
    findings = rule_findings(config, path, stack)
    if has_errors(findings):
        if as_json:
            entry = {"file": path, "valid": False, "findings": [f.to_dict() for f in findings]}
            print_json(validation_document([entry], EXIT_BAD_INPUT))
        else:
            print_findings(findings, path)
            say("[red]Nothing was done: fix the errors above first.[/]", stderr=True)
        sys.exit(EXIT_BAD_INPUT)
    # Notes are for `validate`: a command that goes on to act shows what needs attention, not what AWS does.
    shown = [f for f in findings if f.severity is not Severity.INFO]
    if shown and not quiet_if_clean and not as_json:
        print_findings(shown, path)
    return Checked(config, findings, path, stack)
