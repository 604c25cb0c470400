"""`fastscale explain`: why a live endpoint did or did not scale, from what AWS recorded."""

from __future__ import annotations

import sys
from datetime import UTC

import click

from fastscale.cli import runtime
from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    config_argument,
    console,
    endpoint_url_option,
    fail,
    json_option,
    load_checked,
    print_json,
    print_table,
    say,
)
from fastscale.cli.output import escape
from fastscale.cli.stack import AWS_ENV_HELP, EXIT_INTERRUPTED

#: A scaling problem was found (the diagnosis itself worked): distinct from 1 so CI can tell them apart.
EXIT_FINDINGS = 3


def _since(ctx: click.Context, param: click.Parameter, value: str):
    from fastscale.infra.aws.explain import parse_duration  # lazy: boto3, loaded only when this runs

    try:
        return parse_duration(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _render(explanation, file: str) -> None:
    from rich.table import Table

    w = explanation.window
    say(f"Scaling of {escape(file)} from {w.start:%Y-%m-%d %H:%M:%S} to {w.end:%Y-%m-%d %H:%M:%S} UTC "
        f"(metrics read at {w.metric_period} s)")
    for report in explanation.targets:
        ev, spec = report.evidence, report.evidence.spec
        say("")
        say(f"[bold]{escape(spec.what)}[/] ({escape(spec.label)}, {escape(spec.resource_id)})")
        if report.timeline:
            table = Table(show_edge=False, box=None, pad_edge=False)
            table.add_column("time (UTC)", no_wrap=True)
            table.add_column("source", no_wrap=True)
            table.add_column("event")
            for e in report.timeline:
                table.add_row(f"{e.at.astimezone(UTC):%H:%M:%S}", e.source, escape(e.event))
            print_table(table, lead=2)
        else:
            say("  nothing recorded in the window")
        for m in (ev.scaling_metric, ev.no_capacity, ev.invocations):
            if m is None:
                continue
            res = f", every {m.resolution:g} s" if m.resolution is not None else ""
            peak = f", peak {m.peak:g}" if m.peak is not None else ""
            say(f"  metric {m.name} ({m.stat}): {len(m.points)} datapoint(s){res}{peak}", indent="    ")
        paths = report.paths
        if paths:
            say("  scaling paths: " + ", ".join(
                f"{escape(p.name)} " + ("ok" if p.ok else "[bold red]BROKEN[/]") for p in paths), indent="    ")
        if not report.findings and all(p.ok for p in paths):
            say("  [green]no problem found[/]")
        for f in report.findings:
            say(f"  [bold red]✗ {escape(f.code)}[/]: {escape(f.title)}", indent="    ")
            for line in f.evidence:
                say(f"      evidence: {escape(line)}", indent="        ")
            say(f"      [bold]fix[/]: {escape(f.fix)}", indent="        ")
    say("")
    n = len(explanation.findings)
    if n or not explanation.ok:
        say(f"[bold red]{n} problem(s) found[/] in {len(explanation.targets)} scalable target(s)")
    else:
        say(f"[bold green]no problem found[/] in {len(explanation.targets)} scalable target(s)")


@click.command("explain", epilog=AWS_ENV_HELP)
@config_argument
@click.option("--endpoint", "endpoint_name", help="Only this endpoint (name as in the config).")
@click.option("--component", "component_name", help="Only this inference component (name as in the config).")
@click.option("--since", "since", default="3h", show_default=True, callback=_since, metavar="DURATION",
              help="How far back to look: e.g. 30m, 3h, 1h30m, 2d (at most 15 days).")
@json_option
@endpoint_url_option
def explain_command(config_file, endpoint_name, component_name, since, as_json) -> None:
    """Explain why a live endpoint did (or did not) scale, and what to change.

    For each scalable target of the stack (every inference component, or the variant of a single-model
    endpoint), one timeline of the window: Application Auto Scaling activities with their status messages
    (decisions not taken included, e.g. "already at max capacity"), state changes of the target-tracking
    alarms AWS made for the policies, of the scale-from-zero alarm and of the operational alarms, the
    concurrency and NoCapacityInvocationFailures metrics at the resolution CloudWatch stored them (read at
    10 s within the last 3 hours, at 60 s beyond), and the endpoint / inference component status and failure
    reasons. Then the problems found, each with its evidence and a fix: maximum reached, insufficient
    capacity, quota reached, metric missing or too coarse, cooldown holding, scale-out paced by the cooldown
    while an alarm stayed in ALARM (CloudWatch re-invokes Auto Scaling actions while an alarm stays in
    ALARM), an alarm that cannot fire, copies waiting for instances, model download or health-check
    failures, dynamic scaling suspended. Every scaling path the config expects (target tracking scale-out
    and scale-in, scale from zero, managed instance scaling) is checked to exist and be wired: a missing
    step policy, an alarm without its policy action or with actions disabled, DisableScaleIn or managed
    instance scaling turned off is a problem, never "no problem found".

    Reads only (Describe* and GetMetricData calls); changes nothing.

    \b
    Exit codes:
      0    no problem found
      3    problems found (listed, each with evidence and a fix)
      1    AWS could not be read (credentials, permissions, network)
      2    bad input: the config has errors, or a bad --endpoint, --component
           or --since
      130  interrupted
    """
    from botocore.exceptions import ClientError

    from fastscale.infra.aws.clients import AwsError, describe_error  # lazy: boto3, loaded only when this runs
    from fastscale.infra.aws.explain import (  # lazy: boto3, loaded only when this runs
        TargetSelectionError,
        collect,
        explain,
        targets_of,
    )

    checked = load_checked(config_file, quiet_if_clean=True, as_json=as_json)
    try:
        if not targets_of(checked.stack, endpoint_name, component_name):
            raise TargetSelectionError("nothing to explain: auto scaling is disabled for everything selected")
    except TargetSelectionError as exc:
        if as_json:
            print_json({"command": "explain", "file": config_file, "ok": False, "error": str(exc),
                        "exit_code": EXIT_BAD_INPUT})
            sys.exit(EXIT_BAD_INPUT)
        fail(str(exc), EXIT_BAD_INPUT)
    try:
        rt = runtime.current()
        evidence = collect(checked.stack, rt.aws_clients(checked.stack), since=since, now=rt.now(),
                           endpoint=endpoint_name, component=component_name)
    except KeyboardInterrupt:
        # Only reads were made: nothing to undo.
        console(stderr=True).print("interrupted: nothing was changed")
        sys.exit(EXIT_INTERRUPTED)
    except (AwsError, ClientError) as exc:
        message = describe_error(exc) if isinstance(exc, ClientError) else str(exc)
        if as_json:
            print_json({"command": "explain", "file": config_file, "ok": False, "error": message,
                        "exit_code": EXIT_FAILED})
            sys.exit(EXIT_FAILED)
        fail(f"cannot read the scaling history: {message}", EXIT_FAILED)
    result = explain(evidence)
    code = EXIT_OK if result.ok else EXIT_FINDINGS
    if as_json:
        print_json({"command": "explain", "file": config_file, "exit_code": code, **result.to_dict()})
    else:
        _render(result, config_file)
    sys.exit(code)
