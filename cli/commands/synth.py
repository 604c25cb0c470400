"""`fastscale synth`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from fastscale.cli import runtime
from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    OutputPath,
    endpoint_url_option,
    fail,
    json_option,
    load_checked,
    print_json,
    print_table,
    say,
)
from fastscale.cli.output import escape
from fastscale.infra.model.detection import detection_summary
from fastscale.infra.model.state import StateLayoutError
from fastscale.infra.terraform.outputs import synth_targets
from fastscale.infra.terraform.workdir import leftovers_notice, terraform_leftovers

if TYPE_CHECKING:
    from rich.table import Table

    from fastscale.infra.model.detection import DetectionRow
    from fastscale.stacks.app import SynthResult


@click.command("synth")
@click.argument("config_files", metavar="FILE...", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=str))  # a FIFO is reported by load_config
@click.option("--out", "outdir", default="cdktf.out", show_default=True, type=OutputPath(file_okay=False),
              help="Output directory (cdktf layout: manifest.json, stacks/<name>/cdk.tf.json). With several "
              "FILEs, each stack gets DIR/<stack name>/ in that layout.")
@json_option
@endpoint_url_option
def synth_command(config_files: tuple[str, ...], outdir: str, as_json: bool) -> None:
    """Validate each FILE, then synthesize its Terraform JSON stack.

    Nothing is written when a config has errors. The stack directory can then be used with
    `terraform -chdir=DIR init/plan/apply`, or with `fastscale plan/deploy`. A stack directory that holds
    other files Terraform would read there (configuration, overrides, variables, provider plugins) is
    refused; Terraform's data directory and lock file found there are named on stderr, since a Terraform
    run in that directory would trust them (fastscale plan/deploy/destroy never read them). The files are written
    from Python, byte for byte what the installed CDK engine (CDK for Terraform or CDK Terrain) writes
    for the same stack with `cdktf synth`, stamped with its version; Node.js is not needed.

    Several FILEs (a repository of many stacks) are all validated first, then synthesized one after the
    other: DIR/<stack name>/stacks/<stack name>/cdk.tf.json for each. Their stack names must differ. With --json, several FILEs print {"stacks": [...]}, one
    object per FILE in order.

    \b
    Exit codes:
      0  every stack was written
      1  synthesis failed: the selected CDK engine is not installed, or a write
         failed (stacks written before it stay)
      2  bad input: a config has errors, two FILEs have the same stack name,
         --out is inside .git, cannot be created or written, or would write
         through a symbolic link, or a stack directory holds files Terraform
         would read there that fastscale did not write (*.tf, *.tf.json,
         overrides, *.tfvars, terraform.d, each named; nothing was written)
      130  interrupted with Ctrl-C
    With --json a failure still prints one JSON object, with an `error` member.
    """
    checked = [load_checked(path, as_json=as_json) for path in config_files]
    several = len(checked) > 1

    try:
        # several: every output is checked before any is written (one FILE: `synthesize` checks its own)
        targets = synth_targets([(c.source, c.stack) for c in checked], outdir) if several else [Path(outdir)]
    except StateLayoutError as exc:
        # nothing was written: the state would be lost (inside --out) or orphaned (left at its old path)
        fail(str(exc), EXIT_BAD_INPUT)  # with --json: one JSON object with `error` (cli.errors)

    from fastscale.stacks.engine_choice import select_engine  # lazy: loaded only when this runs

    ENGINE = select_engine()  # the engine whose files are written (its version is stamped into them)

    engine = {"module": ENGINE.module, "name": ENGINE.label, "version": ENGINE.version}
    documents = []
    synthesize = runtime.current().synthesize  # fastscale's writer, `stacks.app.synthesize` (loaded when called)
    for c, target in zip(checked, targets, strict=True):
        try:
            result = synthesize(c.stack, str(target))
        except StateLayoutError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
        detection = detection_summary(c.config)
        if result.terraform_leftovers and not as_json:  # in --json: `terraform_leftovers`
            notice = leftovers_notice(result.stack_dir, terraform_leftovers(result.stack_dir))
            say(f"[yellow]{escape(notice)}[/]", stderr=True)
        if as_json:
            documents.append({**result.to_dict(), "engine": engine, "detection": [row.to_dict() for row in detection]})
        else:
            _print_result(result, detection, ENGINE.describe())
    if as_json:
        print_json({"stacks": documents} if several else documents[0])


def _print_result(result: SynthResult, detection: list[DetectionRow], engine: str) -> None:
    from rich.table import Table

    table = Table(title=f"stack {result.stack_name}", title_justify="left")
    table.add_column("resource type")
    table.add_column("count", justify="right")
    for rtype, count in result.resource_counts.items():
        table.add_row(rtype, str(count))
    table.add_row("[bold]total[/]", f"[bold]{sum(result.resource_counts.values())}[/]")
    print_table(table)
    # How fast the chosen metrics notice a spike: the "detect fast" layer, per endpoint / component.
    print_table(detection_table(detection), lead=2)
    say(f"[green]✓[/] wrote {escape(str(result.stack_file))} with {escape(engine)}", indent="  ")
    say(f"  stack directory (terraform -chdir=...): {escape(str(result.stack_dir))}", indent="    ")


def _seconds(value: int | None) -> str:
    if value is None:
        return "-"
    if value < 120:
        return f"~{value} s"
    return f"~{value / 60:g} min"


def detection_table(rows: list[DetectionRow]) -> Table:
    """How fast each workload notices a spike (the "detect fast" layer), as a table."""
    from rich.table import Table

    table = Table(title="Scale-out detection", title_justify="left")
    for header in ("endpoint", "workload", "metric", "resolution", "datapoints", "scale-out detect", "scale-in", "0 → 1"):
        table.add_column(header)
    for r in rows:
        if not r.autoscaling:
            table.add_row(r.endpoint, r.workload, "[yellow]autoscaling disabled[/]", "-", "-", "-", "-", "-")
            continue
        resolution = f"{r.resolution_s} s" + ("" if r.high_resolution else " [yellow](standard)[/]")
        table.add_row(
            r.endpoint,
            r.workload,
            r.metric or "-",
            resolution,
            str(r.datapoints),
            _seconds(r.scale_out_detection_s),
            _seconds(r.scale_in_detection_s),
            _seconds(r.zero_to_one_s),
        )
    return table
