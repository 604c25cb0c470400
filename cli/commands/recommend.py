"""`fastscale recommend`: the cheapest scaling settings that meet a time-to-first-token SLO on a request trace."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from fastscale.cli import endpoint_trace
from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    OutputPath,
    UserPath,
    endpoint_url_option,
    fail,
    json_option,
    load_checked,
    print_findings,
    print_json,
    print_table,
    rule_findings,
    say,
    write_plot,
)
from fastscale.cli.output import console, escape
from fastscale.infra.analysis import recommend as rec_mod
from fastscale.infra.analysis.recommend import window as rec_window
from fastscale.infra.analysis.recommend.baseline import monthly_scaling
from fastscale.infra.analysis.recommend.plot import plot_front
from fastscale.infra.analysis.simulate import requests as req
from fastscale.infra.base import writer
from fastscale.infra.base.safe_files import read_bytes
from fastscale.infra.config import ConfigError, load_config, safe_yaml
from fastscale.infra.rules import has_errors


def _types(ctx: click.Context, param: click.Parameter, value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise click.BadParameter("give at least one instance type, e.g. ml.g5.xlarge,ml.g6e.xlarge")
    return names


def _short(settings: dict, suffix: str):
    return next((v for k, v in settings.items() if k.endswith(suffix)), None)


def _describe(o) -> list[str]:
    s = o.candidate.settings
    copies = "copies" if _short(s, ".copies.min") is not None else "instances"
    lo = _short(s, f".{copies}.min")
    hi = _short(s, f".{copies}.max")
    acc = _short(s, ".resources.accelerators")
    shape = o.candidate.instance_type + (f" x{acc}" if acc is not None else "")
    cool = f"{_short(s, '.scale_in_cooldown')}/{_short(s, '.scale_out_cooldown')}"
    metric = "10 s" if _short(s, ".autoscaling.metric") == "high_resolution" else "60 s"
    return [shape, f"{lo}-{hi}", f"{_short(s, '.target_concurrency'):g}", metric, cool]


def _money(x: float) -> str:
    return "-" if x != x or x in (float("inf"), float("-inf")) else f"${x:,.2f}"


def _row(rec, o, label: str, style: str | None):
    met = (o.error is None and o.ttft_p99_s is not None and o.ttft_p99_s <= rec.ttft_p99_slo
           and o.rejected_fraction <= rec.max_rejected)
    return [label, _money(rec.monthly(o)),
            "-" if o.ttft_p99_s is None else f"{o.ttft_p99_s:.2f} s",
            "-" if o.e2e_p99_s is None else f"{o.e2e_p99_s:.1f} s", f"{o.rejected_fraction:.2%}",
            "met" if met else "missed", *_describe(o)], style


def render(rec) -> None:
    from rich.table import Table

    search = rec.search
    say(f"[bold]{escape(search.endpoint + (' / ' + search.component if search.component else ''))}[/]: "
        f"{len(rec.outcomes)} candidates on {escape(search.trace.description)}")
    for note in search.notes:
        say(f"  {escape(note)}", indent="    ")
    table = Table(title=f"cost against TTFT p99: the current config, then the Pareto front (rejected <= "
                  f"{rec.max_rejected:.2%})", title_justify="left", title_style="bold",
                  caption="now: the current config; ✓: chosen. per month: cost over the trace "
                  f"{monthly_scaling(search.trace.seconds)}; type xN: accelerators per copy; min-max: copies "
                  "(instances for a single-model endpoint); target: concurrent requests per copy; metric: 10 s "
                  "high-resolution or 60 s; cooldowns: scale-in/scale-out seconds", caption_justify="left")
    for name, right in (("", False), ("per month", True), ("TTFT p99", True), ("e2e p99", True),
                        ("rejected", True), ("SLO", False), ("type", False), ("min-max", True), ("target", True),
                        ("metric", True), ("cooldowns", True)):
        table.add_column(name, justify="right" if right else "left")
    b = rec.baseline
    if b is not None and b.outcome is not None:
        cells, style = _row(rec, b.outcome, "now ✓" if rec.keep_current else "now", "bold yellow")
        table.add_row(*cells, style=style)
    for o in rec.pareto:
        chosen = rec.choice is not None and o is rec.choice and not rec.keep_current
        cells, style = _row(rec, o, "✓" if chosen else "", "bold green" if chosen else None)
        table.add_row(*cells, style=style)
    print_table(table, lead=1)
    if b is not None and b.outcome is None:
        say(f"[yellow]the current config could not be simulated:[/] {escape(b.error or '')}")
    if rec.choice is None:
        say(f"[bold red]no candidate meets the SLO[/] (TTFT p99 <= {rec.ttft_p99_slo:g} s): {escape(rec.reason or '')}")
        if rec.why:
            say(f"[bold green]{escape(rec.why)}[/]")
        return
    c = rec.choice
    say(f"[bold green]{escape(rec.why or '')}[/]")
    say(f"{'the cheapest candidate' if rec.keep_current else 'chosen'}: ${c.cost_usd:,.2f} over the trace, TTFT p99 "
        f"{c.ttft_p99_s:.2f} s, end-to-end p99 "
        f"{c.e2e_p99_s:.1f} s, {c.rejected_fraction:.2%} rejected; settings:")
    for path, value in c.candidate.settings.items():
        say(f"  {escape(path)}: {escape(str(value))}", indent="    ")


@click.command("recommend")
@click.argument("config_file", metavar="FILE", type=UserPath(dir_okay=False))
@click.option("--trace", "trace_path", type=UserPath(dir_okay=False), metavar="CSV",
              help="Requests to serve: TIMESTAMP,ContextTokens,GeneratedTokens (Azure LLM inference traces) or "
              "timestamp,input_tokens,output_tokens (seconds). Or --from-endpoint.")
@click.option("--ttft-p99", "ttft_p99", required=True, type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="The SLO: 99th percentile of time to first token of the served requests.")
@click.option("--max-rejected", type=click.FloatRange(min=0, max=1), default=0.0, show_default=True,
              metavar="FRACTION", help="Share of requests that may fail (no capacity, or no first token within "
              "the timeout). A candidate's replay stops once more have failed: it can no longer be chosen.")
@click.option("--instance-types", callback=_types, metavar="T1,T2,...",
              help="Search these instance types. Default: the catalog's types of the configured accelerator kind "
              "that hold the model, the 5 cheapest shapes for the trace's busiest minute, and the configured one.")
@click.option("--endpoint", "endpoint", metavar="E", help="The endpoint to tune (needed when the file has several).")
@click.option("--component", "component", metavar="C", help="The inference component to tune.")
@click.option("--profile", "profile_path", type=UserPath(dir_okay=False), metavar="FILE",
              help="Measured rates of one copy (YAML, see docs/simulate.md); default serving.*, else an estimate "
              "from the accelerator.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="A request without its first token this long after it arrived fails (default 60).")
@click.option("--workers", type=click.IntRange(min=1), metavar="N",
              help="Processes to simulate on (default: every core). The result does not depend on it.")
@click.option("--write", "write_path", type=OutputPath(dir_okay=False), metavar="FILE",
              help="Write the whole config with the chosen settings to FILE (comments kept where the values can be "
              "edited in place). Never the input file; an existing file only with --force.")
@click.option("--force", is_flag=True, help="Let --write replace an existing file (never the input).")
@click.option("--plot", "plot_path", type=OutputPath(dir_okay=False), metavar="PNG",
              help="Also draw monthly cost against TTFT p99 (the candidates, the front, the choice, the SLO and the "
              "current config) to this PNG (needs matplotlib).")
@click.option("--whole-trace", is_flag=True,
              help=f"Search on every request even when the trace holds more than "
              f"{rec_window.WHOLE_TRACE_MAX_REQUESTS:,} (a week of traffic: hours). Default: such a trace is "
              f"searched on a sample of {rec_window.SAMPLE_SLICES} of its hours (its hours ranked by load and cut "
              f"into {rec_window.SAMPLE_SLICES} groups, the middle hour of each, quietest first), and the chosen "
              "settings are then replayed on the whole trace, with the error of the shortcut printed.")
@endpoint_trace.from_endpoint_options
@json_option
@endpoint_url_option
def recommend_command(config_file, trace_path, ttft_p99, max_rejected, instance_types, endpoint, component,
                      profile_path, timeout, workers, write_path, force, plot_path, whole_trace, as_json,
                      **live) -> None:
    """Find the cheapest settings that keep the TTFT p99 of a request trace within an SLO.

    For one workload of FILE (choose it with --endpoint / --component when there are several), every
    combination of instance type and accelerators per copy, minimum (0: scale to zero, inference components
    only), maximum, target as a fraction of a copy's capacity, cooldowns and metric resolution is applied to
    the config and replayed request by request, as `fastscale simulate --requests` does, on every core.
    It prints the current config on the same trace first (SLO met or not, rejected share, p99s, cost), then
    the Pareto front of cost against TTFT p99 among candidates within --max-rejected, every cost also per
    month (the trace's cost x 730 h / trace hours), and one sentence on why the chosen settings win: the
    cheapest that meet the SLO, against what the current config costs and misses. --write FILE writes the
    config with its settings (not when the current config already meets the SLO for no more). --json:
    {"baseline": C, "choice": C or null (with "reason"), "why": ..., "keep_current": ..., "pareto": [C, ...],
    "monthly": ...}, each C with settings (config path -> value), cost_usd, monthly_cost_usd, ttft_p99_s,
    e2e_p99_s, rejected_fraction and meets_slo. A progress bar goes to stderr.

    The trace is --trace CSV, or with --from-endpoint NAME the live endpoint's own traffic over the last
    --since (read only: Describe, List and Get calls), from its SageMaker data capture when it is on, else
    rebuilt from its CloudWatch metrics; what was assumed is printed (--json: "endpoint_trace").

    \b
    Exit codes:
      0  a candidate meets the SLO (and was written with --write, unless the
         current config meets it for no more), or only the current config does
      1  nothing meets the SLO, --write / --write-trace / --plot could not
         write (or --write validate) the file, AWS could not be read, or the
         endpoint recorded no request in the window
      2  bad input: the config has errors, no trace or both --trace and
         --from-endpoint, a missing or malformed trace or profile, an unknown
         instance type, an SLO <= 0, an --endpoint / --component not in the
         file or not naming one workload, a bad --since, --region or
         --tokens, or a --write path that is the input or exists without
         --force
      130  interrupted with Ctrl-C (the search stops; nothing is written)
    """
    opts = endpoint_trace.EndpointOptions.of(live)
    opts.refuse_without_endpoint()
    if bool(trace_path) == bool(opts.from_endpoint):
        raise click.UsageError("give --trace CSV or --from-endpoint NAME" if not trace_path
                               else "give --trace or --from-endpoint, not both")
    if write_path is not None:
        target = Path(write_path)
        if target.exists() and target.resolve() == Path(config_file).resolve():
            raise click.BadParameter("refusing to overwrite the input file: give another path", param_hint="--write")
        if target.exists() and not force:
            raise click.BadParameter(f"{write_path} exists: give --force to replace it", param_hint="--write")
    checked = load_checked(config_file, quiet_if_clean=True, as_json=as_json)
    reading = None
    if opts.from_endpoint:
        reading = endpoint_trace.check(checked, opts, endpoint, component)
        endpoint, component = reading.endpoint or endpoint, reading.component or component
    try:
        trace = req.read_request_trace(trace_path) if trace_path else None
        profile = req.read_profile(profile_path) if profile_path else None
    except req.RequestInputError as exc:
        fail(str(exc), EXIT_BAD_INPUT)
    try:  # read as load_checked read it a moment ago (never a FIFO, never /proc); its YAML was valid then
        text = read_bytes(Path(config_file), safe_yaml.MAX_BYTES, "config file").decode("utf-8")
        data = safe_yaml.load(text).data
    except (OSError, ValueError, safe_yaml.UnsafeYamlError) as exc:
        fail(f"{config_file} changed while it was read ({exc.__class__.__name__}): run the command again", EXIT_BAD_INPUT)
    built = reading.read(as_json=as_json) if reading is not None else None
    if built is not None:
        trace = built.trace
    assert trace is not None  # --trace or --from-endpoint: checked above
    window = None if whole_trace else rec_mod.sample_window(trace)
    if window is not None:
        trace = window.trace
    try:
        search = rec_mod.build_search(checked.stack, data, trace, endpoint=endpoint, component=component,
                                      instance_types=instance_types, profile=profile, timeout=timeout)
    except rec_mod.RecommendInputError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.option) from None

    outcomes = _run(search, workers, max_rejected)
    baseline = rec_mod.evaluate_baseline(search, checked.config, profile)
    result = rec_mod.recommend(search, outcomes, ttft_p99, max_rejected, baseline)
    check = None
    if window is not None and (result.choice is not None or result.keep_current):
        check = rec_mod.on_whole_trace(search, window, result, checked.config, profile)

    written = None
    if write_path is not None and result.choice is not None and not result.keep_current:
        written = rec_mod.apply_to_text(text, result.choice.candidate.settings, config_file)
        _write(write_path, written.text, force)
    if plot_path:
        write_plot(plot_front, result, path=plot_path)
    if as_json:
        doc = result.to_dict()
        if write_path is not None:
            doc["written"] = None if written is None else {"path": write_path, "comments_kept": written.comments_kept}
        if built is not None:
            doc["endpoint_trace"] = built.to_dict()
        if window is not None:
            doc["search_window"] = (check.to_dict(ttft_p99, max_rejected) if check is not None
                                    else {"window": window.to_dict()})
        print_json(doc)
    else:
        if window is not None:
            render_window(window)
        render(result)
        if check is not None:
            render_check(check, ttft_p99, max_rejected)
        if written is not None:
            kept = "comments kept" if written.comments_kept else "comments could not be kept"
            say(f"written to {escape(write_path)} ({kept}); check it with `fastscale validate {escape(write_path)}`")
        elif write_path is not None and result.keep_current:
            say(f"nothing written to {escape(write_path)}: the current config is the one to keep")
        if plot_path:
            say(f"plot written to {escape(plot_path)}")
    if written is not None:
        _validate_written(write_path, as_json)
    if result.choice is None and not result.keep_current:
        sys.exit(EXIT_FAILED)


def _span(window) -> str:
    """``8 sampled hours``, or the slices' length when the trace was too short for hours."""
    n = len(window.starts)
    if window.slice_seconds == 3600:
        return f"{n} sampled hours"
    return f"{n} sampled slices of {window.slice_seconds // 60} min"


def render_window(window) -> None:
    w = window.to_dict()
    starts = ", ".join(f"{start:,}" for start in window.starts)
    say(f"[bold]searched on {_span(window)}[/] of the trace: its {w['whole_trace_slices']} whole slices ranked by the "
        f"prompt and output tokens arriving, cut into {len(window.starts)} equal groups, the middle one of each, "
        f"replayed quietest first (starting at seconds {starts}): {w['requests']:,} of its "
        f"{w['whole_trace_requests']:,} requests; every figure below is theirs, costs scaled to a month from "
        f"{w['seconds']:,} s. --whole-trace searches on every request.")


def render_check(check, ttft_p99: float, max_rejected: float) -> None:
    """The chosen settings on the whole trace beside the window's figures: the shortcut's error."""
    window_month, whole_month = check.monthly()
    err = check.errors()
    o, s = check.whole, check.searched
    sampled = _span(check.window)

    def pct(value):
        return "-" if value is None else f"{value:+.1%}"

    def p99(value):
        return "-" if value is None else f"{value:.2f} s"

    say("[bold]on the whole trace[/] (the chosen settings replayed on every request, as simulate --requests does):")
    say(f"  monthly cost {_usd(whole_month)} ({sampled}: {_usd(window_month)}, error {pct(err['monthly_cost'])}); "
        f"TTFT p99 {p99(o.ttft_p99_s)} ({sampled}: {p99(s.ttft_p99_s)}, error {pct(err['ttft_p99'])}); "
        f"end-to-end p99 {p99(o.e2e_p99_s)} ({sampled}: {p99(s.e2e_p99_s)}, error {pct(err['e2e_p99'])}); "
        f"rejected {o.rejected_fraction:.2%} ({sampled}: {s.rejected_fraction:.2%})", indent="    ")
    if check.meets(ttft_p99, max_rejected):
        say("  [green]the SLO holds on the whole trace[/]", indent="    ")
    else:
        say("  [bold red]the SLO does not hold on the whole trace[/]: check with --whole-trace", indent="    ")


def _usd(x: float) -> str:
    return f"${x:,.2f}"


def _run(search, workers, max_rejected):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("simulating candidates"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console(stderr=True), transient=True) as progress:
        task = progress.add_task("candidates", total=len(search.candidates))
        return rec_mod.evaluate_all(search, workers or os.cpu_count(), lambda n: progress.advance(task, n),
                                    max_rejected=max_rejected)


def _write(path: str, text: str, force: bool) -> None:
    try:
        writer.write_file(path, text, exclusive=not force, what="--write file")
    except FileExistsError:
        fail(f"{path} appeared while the search ran: give --force to replace it", EXIT_BAD_INPUT)
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}", EXIT_FAILED)


def _validate_written(path: str, as_json: bool) -> None:
    try:
        findings = rule_findings(load_config(path), path)
    except ConfigError as err:
        fail(f"the written file {path} does not load: {err}", EXIT_FAILED)
    if has_errors(findings):
        if not as_json:
            print_findings(findings, path)
        fail(f"the written file {path} has validation errors", EXIT_FAILED)
