"""`fastscale synth`."""

from __future__ import annotations

import click

from fastscale.cli.common import config_argument, console, fail, json_option, load_checked, print_json, print_table


@click.command("synth")
@config_argument
@click.option("--out", "outdir", default="cdktf.out", show_default=True, type=click.Path(file_okay=False),
              help="Output directory (cdktf layout: manifest.json, stacks/<name>/cdk.tf.json).")
@json_option
def synth_command(config_file: str, outdir: str, as_json: bool) -> None:
    """Validate FILE, then synthesize its Terraform JSON stack.

    Nothing is written when the config has errors (exit code 2). The stack directory can then be used
    with `terraform -chdir=DIR init/plan/apply`, or with `fastscale plan/deploy`.
    """
    checked = load_checked(config_file, as_json=as_json)

    from fastscale.infra.detection import detection_summary, format_detection_table
    from fastscale.stacks.engine_choice import EngineUnavailable

    try:
        # imports jsii and node: only once the config is known to be good
        from fastscale.stacks.app import synthesize
        from fastscale.stacks.engine import ENGINE
    except EngineUnavailable as exc:
        fail(str(exc))

    result = synthesize(checked.config, outdir)
    detection = detection_summary(checked.config)
    if as_json:
        engine = {"module": ENGINE.module, "name": ENGINE.label, "version": ENGINE.version}
        print_json({**result.to_dict(), "engine": engine, "detection": [row.to_dict() for row in detection]})
        return

    from rich.table import Table

    table = Table(title=f"stack {result.stack_name}", title_justify="left")
    table.add_column("resource type")
    table.add_column("count", justify="right")
    for rtype, count in result.resource_counts.items():
        table.add_row(rtype, str(count))
    table.add_row("[bold]total[/]", f"[bold]{sum(result.resource_counts.values())}[/]")
    out = console()
    print_table(table)
    # How fast the chosen metrics notice a spike: the "detect fast" layer, per endpoint / component.
    print_table(format_detection_table(detection))
    out.print(f"[green]✓[/] wrote {result.stack_file} with {ENGINE.describe()}")
    out.print(f"  stack directory (terraform -chdir=...): {result.stack_dir}")
