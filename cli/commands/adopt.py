"""`fastscale adopt`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from fastscale.cli import runtime
from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_OK,
    OutputPath,
    apply_target,
    endpoint_url_option,
    fail,
    json_option,
    print_findings,
    print_json,
    print_table,
    say,
    take_over_option,
)
from fastscale.cli.output import escape
from fastscale.infra.base import writer
from fastscale.infra.base.regions import is_sagemaker_region, suggest
from fastscale.infra.config import ConfigError, FastscaleConfig, parse_config, safe_yaml
from fastscale.infra.model.naming import TAG_STACK
from fastscale.infra.rules import has_errors, run_rules, with_lines
from fastscale.infra.rules._common import SAGEMAKER_NAME_RE

HEADER = (
    "# Written by `fastscale adopt` from the live endpoint {endpoint} ({region}).\n"
    "# The `adopted` blocks keep the live names; the next deploy imports those resources instead of creating\n"
    "# new ones (docs/adopt.md). Run `fastscale plan` first: it must show no replacement.\n"
)


@click.command("adopt")
@click.argument("endpoint", metavar="ENDPOINT")
@click.option("--region", required=True, help="AWS region of the endpoint, e.g. us-east-1.")
@click.option("--out", "out", default="fastscale.yaml", show_default=True, type=OutputPath(dir_okay=False, path_type=str),
              help="Config file to write. An existing file is never overwritten without --force.")
@click.option("--force", is_flag=True, help="Overwrite --out when it exists (a regular file only).")
@click.option("--project", default=None,
              help="Project (stack) name of the config. Default: the first 20 characters of ENDPOINT.")
@take_over_option
@json_option
@endpoint_url_option
def adopt_command(endpoint: str, region: str, out: str, force: bool, project: str | None, take_over: tuple[str, ...],
                  as_json: bool) -> None:
    """Write a config that takes over the live endpoint ENDPOINT, made elsewhere (the SageMaker Python SDK,
    the console, another tool), instead of creating a new one.

    Reads (describe and list calls only) the endpoint, its configuration, its models, its inference
    components, their scalable targets and scaling policies and the alarms of those policies, and writes
    --out: the same instance type, counts, routing, model, components and scaling, with `adopted` blocks
    that keep the live names and make the next `deploy` import those resources into the Terraform state.
    The config is validated (schema and rules) before it is written; findings are shown. What the first
    deploy will change in place (fastscale's tags, its alarms) or leave alone is listed. An endpoint
    with settings the config cannot reproduce without replacing it (several or shadow variants, data
    capture, asynchronous or serverless inference, network isolation, several containers, adapters ...)
    is refused with every reason. Nothing in AWS is changed. With --json: one document with `written`,
    `config`, `imports`, `notes`, `findings` (or `refused`, `owned_by_another_stack`, or `error`).

    Never another team's resources: an endpoint, configuration, model, component or scalable target whose
    `fastscale:stack` tag names another stack is refused (exit 2) unless --take-over-from names that stack
    (a deliberate hand-over; `plan` and `deploy` then need the same flag). An endpoint configuration or model
    that another endpoint, component or configuration also uses is not adopted: the config makes the stack
    create its own, and the notes say so.

    \b
    Exit codes:
      0  the config was written
      1  AWS could not be read (unknown endpoint, no credentials, access denied:
         one line with AWS's error)
      2  bad input: --out exists (without --force), is not a regular file or is
         reached through a symbolic link, the endpoint has settings fastscale
         cannot reproduce, something of it belongs to another stack (not handed
         over with --take-over-from), or the written config would have errors
         (nothing was written)
      130  interrupted with Ctrl-C
    """
    target = Path(out)
    if (target.exists() or target.is_symlink()) and not force:
        fail(f"{out} exists: adopt never overwrites a file; choose another --out, or --force to replace it", EXIT_BAD_INPUT)

    if not is_sagemaker_region(region):
        close = suggest(region)
        raise click.BadParameter(f"'{region}' is not a region with SageMaker AI"
                                 + (f" (did you mean {' or '.join(close)}?)" if close else ""), param_hint="'--region'")
    if project is not None:
        if not SAGEMAKER_NAME_RE.fullmatch(project):
            raise click.BadParameter("letters, digits and hyphens, starting and ending with a letter or digit",
                                     param_hint="'--project'")

    from fastscale.infra.aws.adopt import (  # lazy: boto3
        AdoptRefused,
        OwnedByAnotherStack,
        build_config,
        default_project,
        read_live,
    )
    from fastscale.infra.aws.clients import AwsError  # lazy: boto3

    # The command line's --endpoint-url (and its opt-in) checked as for every command, on a stand-in config.
    probe = apply_target(FastscaleConfig.model_construct(project="adopt", region=region, endpoints=[], endpoint_url=None))
    try:
        live = read_live(endpoint, region, clients=runtime.current().aws_clients(probe))
    except AwsError as exc:
        fail(str(exc))
    try:
        adoption = build_config(live, region, project or default_project(endpoint), take_over)
    except OwnedByAnotherStack as exc:
        _owned_elsewhere(exc, endpoint, region, as_json)
    except AdoptRefused as exc:
        _refused(exc, as_json)
    if probe.endpoint_url:
        adoption.data["endpoint_url"] = probe.endpoint_url

    text = _yaml(adoption.data, endpoint, region, take_over)
    config, findings = _validate(text, out)
    if has_errors(findings):
        if as_json:
            print_json({"written": None, "config": adoption.data, "findings": [f.to_dict() for f in findings],
                        "notes": [n.to_dict() for n in adoption.notes], "exit_code": EXIT_BAD_INPUT})
        else:
            print_findings(findings, out)
            say("[red]Nothing was written: the config that reproduces this endpoint has the errors above.[/]",
                stderr=True)
        sys.exit(EXIT_BAD_INPUT)

    from fastscale.stacks.app import import_blocks  # lazy: the CDK engine

    imports = import_blocks(config)
    _write(target, text, force)
    if as_json:
        print_json({"written": out, "config": adoption.data, "imports": imports,
                    "notes": [n.to_dict() for n in adoption.notes], "findings": [f.to_dict() for f in findings],
                    "exit_code": EXIT_OK})
        return
    if findings:
        print_findings(findings, out)
    _print(adoption.notes, imports)
    say(f"[green]✓[/] wrote {out}: run `fastscale plan {out}` and check that it replaces nothing", indent="  ")


def _refused(exc: Any, as_json: bool) -> None:
    if as_json:
        print_json({"written": None, "refused": exc.reasons, "exit_code": EXIT_BAD_INPUT})
    else:
        say(f"[red]✗ {exc.endpoint} cannot be adopted without replacing it; nothing was written:[/]", stderr=True)
        for reason in exc.reasons:
            say(f"- {reason}", stderr=True, indent="  ")
    sys.exit(EXIT_BAD_INPUT)


def _owned_elsewhere(exc: Any, endpoint: str, region: str, as_json: bool) -> NoReturn:
    """Exit 2 naming each resource another stack's tag claims, its stack, and how to hand it over."""
    flags = " ".join(f"--take-over-from {s}" for s in exc.stacks)
    how = (f"To hand it over deliberately: take it out of stack {' and '.join(exc.stacks)} first (remove it from that "
           "config and from that stack's Terraform state, so its destroy no longer deletes it), then run "
           f"`fastscale adopt {endpoint} --region {region} {flags}` and plan and deploy with {flags}.")
    if as_json:
        print_json({"written": None, "owned_by_another_stack": [o.to_dict() for o in exc.owned], "how_to_hand_over": how,
                    "exit_code": EXIT_BAD_INPUT})
    else:
        say(f"[red]✗ {escape(exc.endpoint)} belongs to another fastscale stack; nothing was written:[/]", stderr=True)
        for o in exc.owned:
            say(f"- {escape(o.kind)} {escape(o.name)} is tagged {TAG_STACK}={escape(o.stack)}: it belongs to stack "
                f"{escape(o.stack)}, and adopting it would let this stack re-tag it and its destroy delete it",
                stderr=True, indent="  ")
        say(escape(how), stderr=True)
    sys.exit(EXIT_BAD_INPUT)


def _yaml(data: dict[str, Any], endpoint: str, region: str, take_over: tuple[str, ...] = ()) -> str:
    import yaml

    header = HEADER.format(endpoint=endpoint, region=region)
    if take_over:
        flags = " ".join(f"--take-over-from {s}" for s in take_over)
        header += f"# Handed over from another stack: run `fastscale plan` and `fastscale deploy` with {flags}.\n"
    return header + yaml.safe_dump(data, sort_keys=False, width=120)


def _validate(text: str, source: str) -> tuple[Any, list[Any]]:
    """The written text read back as `fastscale validate` reads a file: schema, then every rule."""

    loaded = safe_yaml.load(text)
    try:
        config = parse_config(loaded.data, source, text, loaded.lines)
    except ConfigError as err:  # what adopt writes must always load: a bug, not the user's input
        fail(f"the config adopt built does not load ({err}); please report it")
    return config, with_lines(run_rules(config), text)


def _write(target: Path, text: str, force: bool) -> None:
    """Create `target` (never through a symbolic link: infra.base.writer); replace it only with --force."""
    try:
        writer.write_file(target, text, exclusive=not force, what="--out file")
    except FileExistsError:
        fail(f"{target} exists: adopt never overwrites a file; choose another --out, or --force to replace it",
             EXIT_BAD_INPUT)
    except OSError as exc:
        fail(f"cannot write {target}: {exc.strerror or exc}", EXIT_BAD_INPUT)


def _print(notes: list[Any], imports: list[dict[str, str]]) -> None:
    from rich.table import Table

    table = Table(title="Imported by the next deploy", title_justify="left")
    table.add_column("resource")
    table.add_column("live id")
    for block in imports:
        table.add_row(block["to"], block["id"])
    print_table(table)
    changes = Table(title="What the first deploy does beyond importing", title_justify="left")
    changes.add_column("config path")
    changes.add_column("effect")
    changes.add_column("what")
    for note in notes:
        changes.add_row(note.path, note.effect, note.message)
    print_table(changes, lead=2)
