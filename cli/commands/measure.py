"""`fastscale measure-scaleout`: time one real scale-out step on a live endpoint and compare with the estimate."""

from __future__ import annotations

import sys

import click

from fastscale.cli import runtime
from fastscale.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    UserPath,
    console,
    endpoint_url_option,
    fail,
    json_option,
    load_checked,
    print_json,
    print_table,
    say,
)
from fastscale.cli.errors import EXIT_INTERRUPTED
from fastscale.cli.output import escape
from fastscale.infra.analysis.estimate import PHASE_LABELS, SCENARIO_LABELS, estimate_config
from fastscale.infra.model.naming import endpoint_names


def _pick(config, endpoint: str, component: str | None):
    """(endpoint spec, component spec or None) named on the command line; bad names are usage errors."""
    by_name = {ep.name: ep for ep in config.endpoints}
    ep = by_name.get(endpoint)
    if ep is None:
        raise click.BadParameter(f"no endpoint {endpoint!r} in the config (it has: {', '.join(by_name)})",
                                 param_hint="--endpoint")
    names = [c.name for c in ep.inference_components]
    if component is None:
        if names:
            raise click.BadParameter(
                f"endpoint {endpoint!r} hosts inference components; pass --component (one of: {', '.join(names)})",
                param_hint="--component",
            )
        return ep, None
    if not names:
        raise click.BadParameter(f"endpoint {endpoint!r} is a single-model endpoint: it scales by instances, "
                                 "drop --component", param_hint="--component")
    if component not in names:
        raise click.BadParameter(f"endpoint {endpoint!r} has no component {component!r} (it has: {', '.join(names)})",
                                 param_hint="--component")
    return ep, next(c for c in ep.inference_components if c.name == component)


def _matching_scenario(estimate, measurement):
    """The estimated scenario the measured step corresponds to, or None when there is no estimate."""
    if estimate is None or not estimate.scenarios:
        return None
    if measurement.new_instance:
        wanted = ["instance_image_cache", "instance_no_image_cache"]
    else:
        wanted = ["copy_data_cache" if estimate.inputs.data_cache else "copy_no_data_cache"]
    return next((estimate.scenario(n) for n in wanted if estimate.scenario(n)), None)


def comparison(estimate, measurement) -> dict:
    scenario = _matching_scenario(estimate, measurement)
    if scenario is None:
        return {"estimate": None, "difference_percent": None}
    estimated = scenario.after_decision_seconds()
    decision = scenario.phase("scaling_decision")
    after = decision.end if decision else 0.0
    diff = None
    if measurement.seconds is not None and estimated > 0:
        diff = round((measurement.seconds - estimated) / estimated * 100, 1)
    return {
        "estimate": {
            "scenario": scenario.name,
            "seconds": round(estimated, 1),
            "phases": [{"name": p.name, "seconds": round(p.seconds, 1)} for p in scenario.phases if p.start >= after],
        },
        "difference_percent": diff,
    }


def _render(measurement, compared, out) -> None:
    from rich.table import Table

    m = measurement
    what = f"{m.component} (+1 copy)" if m.kind == "copy" else f"{m.endpoint} (+1 instance)"
    estimate = compared["estimate"]
    table = Table(title=f"Scale-out of {what}: measured vs estimated", title_justify="left", title_style="bold")
    table.add_column("measured (as the API showed it)")
    table.add_column("s", justify="right")
    table.add_column("estimated" + (f" ({SCENARIO_LABELS[estimate['scenario']]})" if estimate else ""))
    table.add_column("s", justify="right")
    # States seen for less than one poll (e.g. the request itself) only clutter the table; --json keeps them.
    left = [(p["name"], f"{p['seconds']:.0f}") for p in m.phases() if p["seconds"] > 0]
    right = [(PHASE_LABELS[p["name"]], f"{p['seconds']:.0f}") for p in estimate["phases"]] if estimate else []
    for i in range(max(len(left), len(right))):
        a = left[i] if i < len(left) else ("", "")
        b = right[i] if i < len(right) else ("", "")
        table.add_row(*a, *b)
    measured = "-" if m.seconds is None else f"{m.seconds:.0f}"
    table.add_row("total", measured, "total (parallel phases overlap)" if estimate else "",
                  f"{estimate['seconds']:.0f}" if estimate else "", style="bold")
    print_table(table)
    if compared["difference_percent"] is not None:
        out.print(f"measured is {compared['difference_percent']:+.1f}% against the estimate")
    new = "a new instance came up for it" if m.kind == "copy" and m.new_instance else None
    if new:
        say(f"note: {new}, so it is compared with the new-instance scenario", indent="  ")


@click.command("measure-scaleout")
@click.argument("config_file", metavar="FILE", type=UserPath(dir_okay=False))
@click.option("--endpoint", "endpoint_name", required=True, help="Endpoint name as in the config.")
@click.option("--component", "component_name", help="Inference component to add a copy of (IC endpoints).")
@click.option("--timeout", type=click.FloatRange(min=1), default=1800.0, show_default=True,
              help="Seconds to wait for the new capacity to be in service.")
@click.option("--poll-interval", type=click.FloatRange(min=1), default=10.0, show_default=True,
              help="Seconds between two describe calls.")
@json_option
@endpoint_url_option
def measure_scaleout_command(config_file, endpoint_name, component_name, timeout, poll_interval, as_json) -> None:
    """Add one copy (or one instance) to a live endpoint, time it until it serves, then restore the capacity.

    An inference component gets one more copy (its DesiredCopyCount + 1); a single-model endpoint one more
    instance. Prints the phases the API showed next to the estimate for the same scenario.

    Auto scaling cannot race the measurement: it does not start while a scaling activity of the target is
    Pending or InProgress, and dynamic scale-in and scale-out of the target are suspended for its duration
    (scheduled scaling keeps its state). Afterwards, also after a failure, a timeout or Ctrl-C, the previous
    capacity is requested again, never below what auto scaling asked for meanwhile or the target's minimum,
    then the target's previous suspended state is put back.

    Every run ends by saying what it leaves behind: nothing, or an extra copy or instance still billed
    (the restore failed or Ctrl-C stopped its wait) and dynamic scaling still suspended (the resume
    failed), each with the exact `aws` command that undoes it. While the restore waits for a busy resource
    it prints each wait; Ctrl-C there stops waiting and says what is left.

    \b
    Exit codes:
      0  measured, the capacity restored and dynamic scaling resumed
      1  the measurement, the restore or the resume failed, AWS could not be
         used (throttled, a server error, no credentials: one `error:` line
         says which), or it could not start (a scaling activity in progress,
         the resource busy: no capacity was changed)
      2  bad input: the config has errors, or no such endpoint/component
      130  interrupted with Ctrl-C, at any point (after trying to restore)
    With --json a failure still prints one JSON object, with an `error` member
    and `left_behind` (`[{what, undo}]`).
    """
    from fastscale.infra.aws.clients import AwsError, resolve  # lazy: boto3, loaded only when this runs
    from fastscale.infra.aws.measure import (  # lazy: boto3, loaded only when this runs
        MeasureError,
        count,
        measure_scaleout,
    )
    from fastscale.infra.aws.waiters import Clock  # lazy: boto3, loaded only when this runs

    checked = load_checked(config_file, quiet_if_clean=True, as_json=as_json)
    config = checked.config
    ep, comp = _pick(config, endpoint_name, component_name)
    names = endpoint_names(config, ep)
    live_component = next((c.name for c in names.components if c.spec is comp), None) if comp else None
    estimate = next(
        (e for e in estimate_config(checked.stack)
         if e.endpoint == ep.name and e.component == (comp.name if comp else None)),
        None,
    )

    err = console(stderr=True)

    def show(event) -> None:
        if not as_json:
            err.print(f"[dim]{event.seconds:6.0f} s[/]  {escape(event.what)}")

    def show_restore_wait(progress) -> None:
        # The restore can wait minutes for a busy resource: say so, and what Ctrl-C would leave.
        if not as_json:
            err.print(f"[dim]restore:[/] waiting for {escape(progress.what)}: {escape(progress.state)} "
                      f"({progress.elapsed:.0f} s of {progress.timeout:.0f} s; Ctrl-C stops waiting and leaves "
                      "the extra capacity running)")

    rt = runtime.current()
    try:
        # The SageMaker client adds the copy or instance; Application Auto Scaling's suspends and resumes scaling.
        clients = resolve(rt.aws_clients(checked.stack), checked.stack)
        m = measure_scaleout(
            clients.sagemaker,
            endpoint=names.endpoint,
            component=live_component,
            variant=names.variant,
            autoscaling=clients.autoscaling,
            timeout=timeout,
            poll_interval=poll_interval,
            clock=Clock(now=rt.monotonic, sleep=rt.sleep),
            on_event=show,
            on_restore_wait=show_restore_wait,
        )
    except MeasureError as exc:
        _not_started(exc, as_json, endpoint_name, component_name)
    except AwsError as exc:
        fail(str(exc), EXIT_FAILED)

    compared = comparison(estimate, m)
    left = m.left_behind()
    if as_json:
        print_json({"endpoint": ep.name, "component": comp.name if comp else None, "measurement": m.to_dict(),
                    **compared})
    else:
        _render(m, compared, console())
        if m.error:
            say(f"[bold red]measurement {m.outcome}:[/] {escape(m.error)}", stderr=True, indent="  ")
        if m.restored:
            restored_to = m.before if m.restored_to is None else m.restored_to
            again = "again" if restored_to == m.before else f"({m.restore_reason})"
            say(f"restored: requested {count(restored_to, m.kind)} {escape(again)}", stderr=True, indent="  ")
        if m.scalable_target:
            say(f"auto scaling: dynamic scale-in and scale-out of {escape(m.scalable_target)} were suspended for "
                "the measurement; " + ("its previous suspended state is back" if m.scaling_resumed
                                       else "[bold red]resuming failed[/]"), stderr=True, indent="  ")
        _say_left_behind(left)
    sys.exit(EXIT_INTERRUPTED if m.interrupted else EXIT_OK if m.ok else EXIT_FAILED)


def _say_left_behind(left) -> None:
    """Every run ends by saying what it leaves behind, with the command that undoes each thing."""
    if not left:
        say("left behind: nothing (capacity and auto scaling are as they were)", stderr=True, indent="  ")
        return
    for item in left:
        say(f"[bold red]left behind:[/] {escape(item.what)}. Undo: `{escape(item.undo)}`", stderr=True, indent="  ")


def _not_started(exc, as_json: bool, endpoint: str, component: str | None):
    """The measurement never changed capacity; scaling may still be suspended (its resume failed)."""
    code = EXIT_INTERRUPTED if exc.interrupted else EXIT_FAILED
    if as_json:
        print_json({"endpoint": endpoint, "component": component, "ok": False, "error": str(exc),
                    "interrupted": exc.interrupted, "left_behind": [x.to_dict() for x in exc.left_behind],
                    "exit_code": code})
        sys.exit(code)
    if not exc.left_behind:
        fail(f"{exc} (nothing was changed)", code)
    say(f"[bold red]error:[/] {exc}: no capacity was changed, but not everything is back", stderr=True, indent="  ")
    _say_left_behind(exc.left_behind)
    sys.exit(code)
