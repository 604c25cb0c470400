"""Shared CLI plumbing: loading a config with its findings, printing them, exit codes."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any, NoReturn

import click

from fastscale.infra.config import ConfigError, FastscaleConfig, load_config
from fastscale.infra.rules import Finding, Severity, has_errors, run_rules

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2

config_argument = click.argument("config_file", metavar="FILE", type=click.Path(dir_okay=False, path_type=str))
json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON on stdout.")


def console(stderr: bool = False):
    from rich.console import Console

    # emoji off: hints quote ARNs like `arn:aws:secretsmanager:...:secret:name`, which rich would turn into ㊙.
    return Console(stderr=stderr, highlight=False, soft_wrap=False, emoji=False)


def print_table(table: Any, stderr: bool = False) -> None:
    """Print a table on stdout. Without a terminal (CI logs, pipes) rich would assume 80 columns and
    fold names and image URIs mid-word; nothing limits a log's width, so the page is made as wide as
    the table needs and every cell stays on one line (greppable)."""
    out = console(stderr=stderr)
    if not out.is_terminal:
        for column in table.columns:
            column.no_wrap = True
        out.width = max(out.width, out.measure(table, options=out.options.update_width(10_000)).maximum)
    out.print(table)


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    console(stderr=True).print(f"[bold red]error:[/] {message}")
    sys.exit(code)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=False, default=str))


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
    from rich.markup import escape

    if as_json:
        print_json(config_error_report(err))
        return
    out = console(stderr=True)
    out.print(f"[bold red]error:[/] {err.source} is not a valid fastscale config:")
    for p in err.problems:
        where = f"line {p.line}, " if p.line else ""
        out.print(f"  - {where}[bold]{escape(p.path or '<file>')}[/]: {escape(p.message)}")


def print_findings(findings: list[Finding], source: str) -> None:
    from rich.markup import escape
    from rich.table import Table

    out = console()
    for severity, style in ((Severity.ERROR, "red"), (Severity.WARNING, "yellow")):
        group = [f for f in findings if f.severity is severity]
        if not group:
            continue
        table = Table(title=f"{len(group)} {severity.value}{'s' if len(group) != 1 else ''}", title_style=f"bold {style}",
                      title_justify="left", show_lines=True, expand=False)
        table.add_column("code", style=style, no_wrap=True)
        table.add_column("path", overflow="fold")
        table.add_column("problem", overflow="fold")
        table.add_column("fix", overflow="fold")
        for f in group:
            table.add_row(f.code, escape(f.path), escape(f.message), escape(f.hint))
        print_table(table)
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warnings = len(findings) - errors
    if errors:
        out.print(f"[bold red]✗ {source}: invalid[/] ({errors} error(s), {warnings} warning(s))")
    else:
        out.print(f"[bold green]✓ {source}: valid[/]" + (f" ({warnings} warning(s))" if warnings else ""))


@dataclass
class Checked:
    config: FastscaleConfig
    findings: list[Finding]
    source: str


def load_checked(path: str, *, quiet_if_clean: bool = False, as_json: bool = False) -> Checked:
    """Load + validate a config for a command that goes on to do something.

    Bad input exits with code 2 before anything is written, deployed or deleted.
    """
    try:
        config = load_config(path)
    except ConfigError as err:
        print_config_error(err, as_json=as_json)
        sys.exit(EXIT_BAD_INPUT)
    findings = run_rules(config)
    if has_errors(findings):
        if as_json:
            print_json({"valid": False, "file": path, "findings": [f.to_dict() for f in findings]})
        else:
            print_findings(findings, path)
            console(stderr=True).print("[red]Nothing was done: fix the errors above first.[/]")
        sys.exit(EXIT_BAD_INPUT)
    if findings and not quiet_if_clean and not as_json:
        print_findings(findings, path)
    return Checked(config, findings, path)
