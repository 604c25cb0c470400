"""`fastscale estimate`: scale-out timeline per scenario, and the cost of the configured capacity."""

from __future__ import annotations

import sys

import click

from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    OutputPath,
    UserPath,
    console,
    json_option,
    load_checked,
    print_json,
    print_table,
    say,
    write_plot,
)
from fastscale.infra.analysis.estimate import (
    PHASE_LABELS,
    EstimateInputError,
    cost_config,
    cost_what_if,
    estimate_config,
    what_if,
)
from fastscale.infra.analysis.estimate.plot import plot_timelines

#: Options that describe a workload without a config file; they make no sense next to a FILE.
_WHAT_IF_OPTIONS = ("model_size_gb", "image_size_gb", "accelerators", "metric", "data_cache", "max_instances")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _seconds(x: float) -> str:
    return f"{x:.0f} s"


def _usd(x: float | None) -> str:
    return "-" if x is None else f"${x:,.2f}"


#: Short column headings for the scenarios (the full wording is in the table caption).
_SHORT = {
    "copy_data_cache": "copy\ndata cache",
    "copy_no_data_cache": "copy\nno cache",
    "instance_image_cache": "instance\nimage cache",
    "instance_no_image_cache": "instance\nimage pull",
    "from_zero": "from\nzero",
    "capacity_fallback": "capacity\nfallback",
}


def render_estimates(estimates, out) -> None:
    """One table per workload: phases down, scenarios across (fits an 80-column terminal)."""
    from rich.table import Table

    for est in estimates:
        where = est.endpoint + (f" / {est.component}" if est.component else "")
        if not est.scenarios:
            out.print(f"[bold]{where}[/] ({est.instance_type})")
            for note in est.notes:
                say(f"  [yellow]{note}[/]", indent="    ")
            out.print()
            continue
        i = est.inputs
        title = (
            f"{where}: {i.instance_type}, model {i.model_size_gb:g} GB, image {i.image_size_gb:g} GB, "
            f"{i.accelerators} accelerator{'s' if i.accelerators != 1 else ''}, {i.network_gbps:g} Gbps"
        )
        table = Table(title=title, title_justify="left", title_style="bold", caption_justify="left",
                      caption="copy: a new copy on a running instance (with / without data caching); instance: a new "
                      "instance with container image caching / pulling the image; from zero: alarm, instance, "
                      "copy; capacity fallback: the first instance pool has no capacity and a new instance of the "
                      "next pool serves. Image pull and model download run in parallel: the total counts the "
                      "longer one. First capacity: the first new copy serves; full capacity: every copy the "
                      "step policy adds, one per cooldown, serves; P90: the slower cold-start values.")
        table.add_column("phase", min_width=12)
        for sc in est.scenarios:
            table.add_column(_SHORT[sc.name], justify="right", no_wrap=True)
        for name, label in PHASE_LABELS.items():
            cells = [sc.phase(name) for sc in est.scenarios]
            if all(p is None for p in cells):
                continue
            table.add_row(label, *("-" if p is None else _seconds(p.seconds) for p in cells))
        table.add_row("first capacity", *(_seconds(sc.total_seconds) for sc in est.scenarios), style="bold")
        table.add_row("  in minutes", *(f"{sc.total_seconds / 60:.1f}" for sc in est.scenarios), style="dim")
        if any(sc.full_capacity is not None for sc in est.scenarios):
            table.add_row("full capacity", *(_seconds(sc.full_capacity_seconds) for sc in est.scenarios), style="bold")
        if est.scenarios_p90:
            table.add_row("first capacity, P90", *(_seconds(sc.total_seconds) for sc in est.scenarios_p90), style="dim")
        print_table(table)
        for note in est.notes:
            say(f"  [yellow]note:[/] {note}", indent="    ")
        out.print()


def render_cost(report, out) -> None:
    """Rows are figures, columns endpoints (and a total when there are several)."""
    from rich.table import Table

    say(
        f"[bold]On-demand cost[/]: {report.hours_at_max_per_day:g} h/day at max capacity, the rest at min, "
        f"{report.hours_per_month:g} h/month"
    )
    table = Table()
    table.add_column("", no_wrap=True)
    lines = report.endpoints
    for e in lines:
        table.add_column(e.endpoint, justify="right")
    several = len(lines) > 1
    if several:
        table.add_column("total", justify="right", style="bold")

    def row(label, values, total=""):
        table.add_row(label, *values, *((total,) if several else ()))

    row("instance type", [e.instance_type for e in lines])
    row("$ per instance-hour", [_usd(e.price_per_hour_usd) + (" (est.)" if e.price_is_estimate else "") for e in lines])
    total = report.total_hourly()
    for key in ("min", "initial", "max"):
        row(
            f"$/h at {key} capacity",
            [f"{_usd((e.hourly_usd or {}).get(key))} ({getattr(e.instances, key)})" for e in lines],
            _usd(total[key]),
        )
    row("$ per month", [_usd(e.monthly_usd) for e in lines], _usd(report.total_monthly()))
    row("idle month at min 1", [_usd((e.idle_monthly_usd or {}).get("min_1")) for e in lines])
    saves = []
    for e in lines:
        if e.scales_to_zero:
            saves.append(f"{_usd(e.scale_to_zero_saves_monthly_usd)} (on)")
        elif e.scale_to_zero_available:
            saves.append(f"{_usd(e.scale_to_zero_saves_monthly_usd)} (off)")
        else:
            saves.append("n/a")
    row("scale to zero saves / idle month", saves)
    if any(e.idle_tail for e in lines):
        row("idle tail per scale-down", [
            f"{e.idle_tail.minutes:.0f} min (default {e.idle_tail.default_minutes:.0f})" if e.idle_tail else "-" for e in lines])
        row("idle tail / month", [
            f"{_usd(e.idle_tail.monthly_usd)} (default {_usd(e.idle_tail.default_monthly_usd)})" if e.idle_tail else "-"
            for e in lines])
    if any(e.pools for e in lines):
        depth = max(len(e.pools) for e in lines)
        for i in range(depth):
            row(f"$ per month on pool {i + 1}", [
                f"{_usd(e.pools[i].monthly_usd)} ({e.pools[i].instance_type})" if i < len(e.pools) else "-" for e in lines])
    print_table(table)
    if any(e.idle_tail for e in lines):
        say("  [dim]idle tail: instances above the minimum billing after each scale-down until released "
            "(scale-in detection, then the scale-in policy's cooldown); not in $ per month[/]", indent="    ")
    if any(not e.scale_to_zero_available for e in lines):
        say("  [dim]n/a: scale to zero needs inference components (single-model endpoints keep one instance)[/]", indent="    ")
    if any(e.scale_to_zero_available and not e.scales_to_zero for e in lines):
        say("  [dim]off: set instances.min and the components' copies.min to 0 to get it[/]", indent="    ")
    for note in report.notes:
        say(f"  [dim]{note}[/]", indent="    ")


@click.command("estimate")
@click.argument("config_file", metavar="[FILE]", required=False, type=UserPath(dir_okay=False))
@click.option("--instance-type", help="What-if instead of a FILE: the instance type, e.g. ml.g6.2xlarge.")
@click.option("--model-size-gb", type=click.FloatRange(min=0), help="What-if: model weights in GB (required).")
@click.option("--image-size-gb", type=click.FloatRange(min=0),
              help="What-if: compressed container image in GB (default from the estimate parameters).")
@click.option("--accelerators", type=click.IntRange(min=1),
              help="What-if: accelerators per copy (default: all of the instance's).")
@click.option("--metric", type=click.Choice(["high_resolution", "invocations"]),
              help="What-if: scaling metric (default high_resolution).")
@click.option("--data-cache/--no-data-cache", default=None, help="What-if: inference-component data caching (default on).")
@click.option("--max-instances", type=click.IntRange(min=1), help="What-if: instances at peak, for the cost (default 1).")
@click.option("--hours-at-max", type=click.FloatRange(0, 24), default=None,
              help="Hours per day at max capacity for the monthly cost, the rest at min (default 2).")
@click.option("--plot", "plot_path", type=OutputPath(dir_okay=False),
              help="Also draw the timelines to this PNG (needs matplotlib: pip install 'fastscale[plot]').")
@json_option
def estimate_command(config_file, instance_type, hours_at_max, plot_path, as_json, **what_if_options) -> None:
    """Estimate the time from a traffic spike to new capacity serving, and the cost.

    For every endpoint / inference component of FILE, or for a what-if given with --instance-type and
    --model-size-gb, a phase-by-phase timeline per scenario: a new copy on a running instance with and
    without data caching, a new instance with and without container image caching, and scale from zero.
    Then the on-demand cost per hour at min / initial / max capacity, a monthly figure, and what scale to
    zero saves on an idle endpoint. Every model parameter and its source is in infra/analysis/estimate_params.json.

    \b
    Exit codes:
      0  estimated
      1  the --plot file could not be written (or matplotlib is missing)
      2  bad input: the config has errors, wrong options, or nothing could be
         estimated (every workload lacks what the model needs)
    With --json a failure still prints one JSON object.
    """
    if config_file and instance_type:
        raise click.UsageError("give either FILE or --instance-type (a what-if), not both")
    if not config_file and not instance_type:
        raise click.UsageError("give a config FILE, or --instance-type and --model-size-gb for a what-if")
    if config_file:
        given = [_flag(k) for k in _WHAT_IF_OPTIONS if what_if_options[k] is not None]
        if given:
            raise click.UsageError(f"{', '.join(given)}: what-if options need --instance-type; a FILE sets these itself")
        checked = load_checked(config_file, quiet_if_clean=True, as_json=as_json)
        estimates = estimate_config(checked.config)
        cost = cost_config(checked.config, hours_at_max)
    else:
        opts = what_if_options
        if opts["model_size_gb"] is None:
            raise click.UsageError("--model-size-gb is required with --instance-type")
        try:
            estimates = [
                what_if(
                    instance_type,
                    opts["model_size_gb"],
                    opts["image_size_gb"],
                    accelerators=opts["accelerators"],
                    metric=opts["metric"],
                    data_cache=True if opts["data_cache"] is None else opts["data_cache"],
                )
            ]
        except EstimateInputError as exc:
            raise click.BadParameter(str(exc), param_hint="--instance-type") from None
        cost = cost_what_if(instance_type, opts["max_instances"] or 1, hours_at_max)

    nothing = not any(e.scenarios for e in estimates)
    if plot_path and not nothing:
        write_plot(plot_timelines, estimates, path=plot_path)

    if as_json:
        print_json({"estimates": [e.to_dict() for e in estimates], "cost": cost.to_dict()})
    else:
        out = console()
        render_estimates(estimates, out)
        render_cost(cost, out)
        if plot_path and not nothing:
            out.print(f"timeline plot written to {plot_path}")
    if nothing:
        # Every workload lacked what the model needs (a size, an accelerator type): fixable input.
        say("[bold red]error:[/] nothing could be estimated; see the notes above", stderr=True)
        sys.exit(EXIT_BAD_INPUT)
