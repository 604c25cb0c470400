"""`fastscale simulate`: replay a traffic spike against the configured scaling, layer by layer."""

from __future__ import annotations

import sys

import click

from fastscale.cli import endpoint_trace
from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    OutputPath,
    UserPath,
    endpoint_url_option,
    fail,
    json_option,
    load_checked,
    print_json,
    print_table,
    say,
    write_plot,
)
from fastscale.cli.output import escape
from fastscale.infra.analysis import simulate as sim_mod
from fastscale.infra.analysis.simulate import requests as req
from fastscale.infra.analysis.simulate.plot import plot_simulations


def _clock(second: int) -> str:
    return f"{second // 60}:{second % 60:02d}"


def _duration(seconds: int | None, short: bool = False) -> str:
    if seconds is None:
        return "not served"
    if seconds < 120 or short:
        return f"{seconds} s"
    return f"{seconds} s ({seconds / 60:.1f} min)"


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 10 or x == 0 else f"{x:,.1f}"


def _plural(word: str, n: int) -> str:
    if n == 1:
        return word
    return word[:-1] + "ies" if word.endswith("y") else word + "s"


def _usd(x: float | None) -> str:
    return "-" if x is None else f"${x:,.2f}"


def _rows(result, every: int | None) -> list[int]:
    """Seconds to show: every ``every`` seconds, or each second where demand or capacity changed."""
    n = len(result.demand)
    if every:
        return list(range(0, n, every))
    keys = list(zip(result.demand, result.desired, result.copies, result.serving, result.instances, result.instances_serving))
    return [t for t in range(n) if t == 0 or keys[t] != keys[t - 1]]


def render_steps(sim, every: int | None) -> None:
    from rich.table import Table

    r = sim.configured.result
    w = sim.workload
    events: dict[int, list[str]] = {}
    for e in r.events:
        if e.kind in ("alarm", "instance"):
            events.setdefault(e.second, []).append(e.detail)
    caption = "copies and instances: serving/total; failing/s: requests failing each second with no copy in service"
    table = Table(title=f"demand vs serving capacity, as configured ({f'every {every} s' if every else 'each change'})",
                  title_justify="left", title_style="bold", caption=caption, caption_justify="left")
    for name in ("time", "demand", "capacity", "copies" if w.component else "instances"):
        table.add_column(name, justify="right", no_wrap=True)
    if w.component:
        table.add_column("instances", justify="right", no_wrap=True)
    table.add_column("failing/s", justify="right", no_wrap=True)
    table.add_column("events")
    last = -1
    for t in _rows(r, every):
        what = [d for s in range(last + 1, t + 1) for d in events.get(s, [])]
        last = t
        cells = [_clock(t), _num(r.demand[t]), _num(r.capacity[t]), f"{r.serving[t]}/{r.desired[t]}"]
        if w.component:
            cells.append(f"{r.instances_serving[t]}/{r.instances[t]}")
        cells += [_num(r.rejected[t]), escape("; ".join(what))]
        table.add_row(*cells)
    print_table(table, lead=1)


def render_layers(sim) -> None:
    from rich.table import Table

    base = sim.configured.result.summary
    table = Table(title="the same traffic with each layer flipped", title_justify="left", title_style="bold",
                  caption="served after: from the first second demand exceeded capacity until capacity caught up; "
                  "detection: until the first scale-out alarm; queued: request-seconds waiting beyond "
                  "target_concurrency per copy; rejected: requests failed with no copy in service; peak: copies / "
                  "instances.", caption_justify="left")
    table.add_column("variant")
    for name in ("served after", "detection", "queued req·s", "rejected", "peak", "cost"):
        table.add_column(name, justify="right")
    for v in sim.variants:
        if v.result is None:
            table.add_row(f"{v.name.replace('_', ' ')}: {v.label}", *("-" * 6), style="dim")
            continue
        s = v.result.summary
        served = _duration(s.served_after_seconds, short=True) if s.short_at is not None else "at once"
        if v.name != "configured" and s.served_after_seconds is not None and base.served_after_seconds is not None:
            delta = s.served_after_seconds - base.served_after_seconds
            if delta:
                served += f" [{'red' if delta > 0 else 'green'}]({delta:+d} s)[/]"
        table.add_row(
            v.label,
            served,
            "-" if s.detection_seconds is None else f"{s.detection_seconds} s",
            _num(s.queued_request_seconds),
            _num(s.rejected_requests),
            f"{s.peak_copies} / {s.peak_instances}" if sim.workload.component else str(s.peak_instances),
            _usd(s.cost_usd),
            style="bold" if v.name == "configured" else None,
        )
    print_table(table, lead=1)


def render(sim, every: int | None) -> None:
    w = sim.workload
    layers = w.layers
    unit = "copy" if w.component else "instance"
    scaling = (
        f"{'10-second' if layers.high_resolution else '60-second'} metrics, "
        + ("data caching, " if layers.data_cache else "no data caching, " if layers.data_cache is False else "")
        + ("container image caching" if layers.image_cache else "no container image caching")
    )
    bounds = f"{unit} count {w.units[0]}-{w.units[1]}"
    if w.component:
        bounds += f", instances {w.instances[0]}-{w.instances[1]} ({w.copies_per_instance} copies each)"
    t = sim.traffic
    per_minute = w.spec().invocations_target
    target = (f"target {w.target:g} concurrent requests per {unit}" if per_minute is None else
              f"target {per_minute:g} invocations per minute per {unit} "
              f"({per_minute / 60 * t.service_time_seconds:g} concurrent requests at {t.service_time_seconds:g} s each)")
    say(f"[bold]{escape(w.name)}[/]: {w.instance_type}, {target}, {bounds}, {scaling}")
    say(f"traffic: {escape(t.description)}; window {t.seconds} s; mean service time {t.service_time_seconds:g} s")
    render_steps(sim, every)
    s = sim.configured.result.summary
    if s.short_at is None:
        say("[green]capacity covered the demand throughout the window[/]")
    else:
        served = (f"served {_duration(s.served_after_seconds)} after demand first exceeded capacity at "
                  f"{_clock(s.short_at)}" if s.served_after_seconds is not None
                  else f"[red]never served within the window[/] (demand first exceeded capacity at {_clock(s.short_at)})")
        detect = "" if s.detection_seconds is None else f"; first scale-out alarm after {s.detection_seconds} s"
        say(f"summary: {served}{detect}", indent="  ")
        say(f"  first capacity after {_duration(s.first_capacity_seconds)}, full capacity after "
            f"{_duration(s.full_capacity_seconds)}", indent="    ")
    say(f"  {_num(s.queued_request_seconds)} request-seconds queued, {_num(s.rejected_requests)} requests rejected "
              f"with no capacity, peak {s.peak_copies} {_plural(unit, s.peak_copies)} on "
              f"{s.peak_instances} {_plural('instance', s.peak_instances)}, {_usd(s.cost_usd)} for the window", indent="  ")
    render_layers(sim)
    for note in w.notes:
        say(f"  [yellow]note:[/] {escape(note)}", indent="    ")
    say("")


def _secs(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.2f} s" if x < 10 else f"{x:,.1f} s"


def render_requests(w, rs, trace) -> None:
    """One workload replayed request by request: latency percentiles, failures, copies, cost."""
    from rich.table import Table

    unit = "copy" if w.component else "instance"
    st, summary, rates = rs.stats, rs.result.summary, rs.rates
    say(f"[bold]{escape(w.name)}[/]: {w.instance_type}, target {w.target:g} concurrent requests per {unit}, "
        f"{unit} count {w.units[0]}-{w.units[1]}, routing {rs.routing.replace('_', ' ')}")
    say(f"requests: {escape(trace.description)}")
    say(f"a {unit} serves {rates.slots} requests at once; prefill {rates.prefill_tokens_per_second:,.0f} tokens/s; "
        f"decode {rates.decode_tokens_per_second:.1f} tokens/s per request alone, "
        f"{rates.per_sequence_decode(rates.slots):.1f} with {rates.slots} ({escape('; '.join(rates.sources))})",
        indent="  ")
    table = Table(title="latency of served requests", title_justify="left", title_style="bold",
                  caption="time to first token and end to end from arrival; queue: waiting for a slot on the copy",
                  caption_justify="left")
    table.add_column("")
    for name in ("p50", "p90", "p99", "mean"):
        table.add_column(name, justify="right")
    for label, lat in (("time to first token", st.ttft), ("end to end", st.e2e), ("queue", st.queue)):
        table.add_row(label, _secs(lat.p50), _secs(lat.p90), _secs(lat.p99), _secs(lat.mean))
    print_table(table, lead=1)
    say(f"{st.served:,} of {st.requests:,} requests served; {st.rejected:,} rejected ({st.rejected_fraction:.2%}): "
        f"{st.no_capacity:,} with no {unit} in service, {st.timed_out:,} without a first token within "
        f"{st.timeout_seconds:g} s", indent="  ")
    if st.over_timeout_end_to_end:
        say(f"{st.over_timeout_end_to_end:,} served requests took longer than {st.timeout_seconds:g} s end to end: "
            "they time out with InvokeEndpoint unless the response streams", indent="  ")
    say(f"peak {summary.peak_copies} {_plural(unit, summary.peak_copies)} on {summary.peak_instances} "
        f"{_plural('instance', summary.peak_instances)}, {_usd(summary.cost_usd)} for the {trace.seconds} s window",
        indent="  ")
    for note in w.notes:
        say(f"  [yellow]note:[/] {escape(note)}", indent="    ")
    say("")


def _simulate_requests(checked, selection, trace, profile, timeout, as_json, live=None) -> None:
    params = sim_mod.load_params()
    runs, skipped = [], list(selection.skipped)
    for w in selection.workloads:
        try:
            runs.append((w, req.simulate_workload_requests(checked.stack, w, trace, params, profile=profile,
                                                           timeout=timeout)))
        except req.RequestInputError as exc:
            skipped.append(str(exc))
    if not runs:
        for reason in skipped:
            say(f"[bold red]error:[/] {escape(reason)}", stderr=True, indent="  ")
        sys.exit(EXIT_BAD_INPUT)
    if as_json:
        doc = {"simulations": [{**w.to_dict(), "trace": trace.to_dict(), "requests": rs.to_dict()} for w, rs in runs],
               "skipped": skipped}
        if live is not None:
            doc["endpoint_trace"] = live.to_dict()
        print_json(doc)
        return
    for w, rs in runs:
        render_requests(w, rs, trace)
    for reason in skipped:
        say(f"[yellow]not simulated:[/] {escape(reason)}", indent="  ")


@click.command("simulate")
@click.argument("config_file", metavar="FILE", type=UserPath(dir_okay=False))
@click.option("--endpoint", "endpoint", metavar="E", help="Only this endpoint (its config name).")
@click.option("--component", "component", metavar="C", help="Only this inference component.")
@click.option("--spike", metavar="BASE:PEAK@T[+HOLD]",
              help="Concurrent requests: BASE until second T, then PEAK (for HOLD seconds, then BASE again). "
              "Default: idle, then 75% of what the maximum serves at 60 s for 20 minutes.")
@click.option("--ramp", metavar="BASE:PEAK@START-END", help="Concurrent requests rising linearly from START to END.")
@click.option("--trace", "trace_path", type=UserPath(dir_okay=False), metavar="CSV",
              help="Per-second traffic: a header `concurrency` or `rps` (requests per second, needs --service-time), "
              "optionally `second`.")
@click.option("--duration", type=click.IntRange(min=1), metavar="SECONDS",
              help="Length of the simulated window (default: 3600, or the trace's length).")
@click.option("--service-time", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Mean seconds one request takes at full speed: turns requests per second into concurrency and "
              "counts rejected requests (default 10).")
@click.option("--cold-start", type=click.Choice(["p50", "p90"]), default="p50", show_default=True,
              help="Cold-start values new copies and instances start on: the typical (p50) or the slower p90 ones "
              "from infra/analysis/estimate_params.json.")
@click.option("--requests", "requests_path", type=UserPath(dir_okay=False), metavar="CSV",
              help="Replay individual requests instead: a CSV with the header TIMESTAMP,ContextTokens,GeneratedTokens "
              "(Azure LLM inference traces) or timestamp,input_tokens,output_tokens (seconds). Prints TTFT, end-to-end "
              "and queue p50/p90/p99, rejected requests and cost.")
@click.option("--profile", "profile_path", type=UserPath(dir_okay=False), metavar="FILE",
              help="With --requests: measured rates of one copy (YAML: max_concurrency, prefill_tokens_per_second, "
              "decode_tokens_per_second; docs/simulate.md). Default: serving.* of the config, else an estimate "
              "from the accelerator.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="With --requests: a request without its first token this long after it arrived fails "
              "(default 60, SageMaker's invocation timeout).")
@endpoint_trace.from_endpoint_options
@click.option("--every", type=click.IntRange(min=1), metavar="SECONDS",
              help="Print the demand/capacity table every SECONDS instead of at each change.")
@click.option("--plot", "plot_path", type=OutputPath(dir_okay=False),
              help="Also draw demand and capacity over time, one line per variant, to this PNG (needs matplotlib).")
@json_option
@endpoint_url_option
def simulate_command(config_file, endpoint, component, spike, ramp, trace_path, duration, service_time, cold_start,
                     requests_path, profile_path, timeout, every, plot_path, as_json, **live) -> None:
    """Replay a traffic spike against the configured scaling, second by second, layer by layer.

    For every endpoint / inference component of FILE (or the one chosen with --endpoint / --component), the
    model publishes the scaling metric at the configured resolution, evaluates the target-tracking alarms and
    the scale-from-zero alarm and step policy as AWS documents them, applies cooldowns and maximums, adds
    instances as copies need them, and starts every new copy or instance on the phase timeline of
    `fastscale estimate` (--cold-start p90: its slower values). Each copy serves serving.max_concurrency
    requests at full speed (default: what its KV cache holds); more wait in a queue; with no copy in service
    requests fail.

    It prints demand against serving capacity, a summary (first and full capacity after the spike, request-seconds
    queued, requests rejected at zero, peak copies and instances, cost of the window) and the same traffic
    replayed with each layer flipped: 60-second metrics, no data caching, no container image caching, no warm
    minimum (or, where the config has a layer off, with it on). Parameters and sources:
    infra/analysis/simulate_params.json and infra/analysis/estimate_params.json.

    With --requests CSV, every request of the trace is routed to a copy (the endpoint's routing), waits for
    one of its serving.max_concurrency slots, and is served by continuous batching: its prompt in chunks that
    share the server's steps with the decoding sequences, then one token a step, at the copy's rates (--profile,
    else serving.*, else the accelerator's roofline and the server's overheads, checked against published
    benchmarks); it fails without a first token within --timeout or with no copy in service. The scaling is the
    same model, on the concurrency the requests make. It prints time-to-first-token, end-to-end and queue
    percentiles, rejected requests, peak copies and cost.

    With --from-endpoint NAME instead of --requests, the trace is the live endpoint's own traffic over the
    last --since (read only: Describe, List and Get calls): its requests from SageMaker data capture when it
    is on, else rebuilt from its CloudWatch metrics; what was assumed is printed (--json: "endpoint_trace").

    \b
    Exit codes:
      0  simulated
      1  the --plot or --write-trace file could not be written (or matplotlib
         is missing), AWS could not be read, or the endpoint recorded no
         request in the window
      2  bad input: the config has errors, a malformed traffic profile or trace,
         an --endpoint / --component not in the file, a bad --since, --region
         or --tokens, or nothing could be simulated (every workload lacks what
         the model needs)
    """
    opts = endpoint_trace.EndpointOptions.of(live)
    opts.refuse_without_endpoint()
    profiles = [name for name, given in (("--spike", spike), ("--ramp", ramp), ("--trace", trace_path),
                                         ("--requests", requests_path), ("--from-endpoint", opts.from_endpoint))
                if given]
    if len(profiles) > 1:
        raise click.UsageError(f"give one traffic profile, not {' and '.join(profiles)}")
    request_level = bool(requests_path or opts.from_endpoint)
    if request_level:
        clash = [name for name, given in (("--service-time", service_time), ("--duration", duration),
                                          ("--every", every), ("--plot", plot_path)) if given]
        if clash:
            source = "--requests" if requests_path else "--from-endpoint"
            raise click.UsageError(f"{' and '.join(clash)} do not apply to {source} (the trace sets the window "
                                   "and each request's service time)")
    else:
        unused = [name for name, given in (("--profile", profile_path), ("--timeout", timeout)) if given]
        if unused:
            raise click.UsageError(f"{' and '.join(unused)} only apply with --requests or --from-endpoint")
    checked = load_checked(config_file, quiet_if_clean=True, as_json=as_json)
    params = sim_mod.load_params()
    reading = None
    if opts.from_endpoint:
        reading = endpoint_trace.check(checked, opts, endpoint, component)
        endpoint, component = reading.endpoint or endpoint, reading.component or component
    try:
        selection = sim_mod.select_workloads(checked.stack, endpoint, component, cold_start=cold_start)
    except sim_mod.SimulateInputError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.option) from None
    if not selection.workloads:
        for reason in selection.skipped:
            say(f"[bold red]error:[/] {escape(reason)}", stderr=True, indent="  ")
        if not selection.skipped:
            say("[bold red]error:[/] nothing to simulate in the selection", stderr=True)
        sys.exit(EXIT_BAD_INPUT)

    if request_level:
        try:
            profile = req.read_profile(profile_path) if profile_path else None
            trace = req.read_request_trace(requests_path) if requests_path else None
        except req.RequestInputError as exc:
            fail(str(exc), EXIT_BAD_INPUT)
        built = reading.read(as_json=as_json) if reading is not None else None
        _simulate_requests(checked, selection, trace if built is None else built.trace, profile, timeout, as_json,
                           built)
        return

    default_window = int(params.default_traffic.window_seconds.value)
    default_service = params.default_service_time_seconds.value
    service = service_time if service_time is not None else default_service
    try:
        if spike:
            shared = sim_mod.spike(spike, duration=duration, default_window=default_window, service_time=service)
        elif ramp:
            shared = sim_mod.ramp(ramp, duration=duration, default_window=default_window, service_time=service)
        elif trace_path:
            shared = sim_mod.read_trace(trace_path, duration=duration, service_time=service_time,
                                        default_service_time=default_service)
        else:
            shared = None
    except sim_mod.TrafficError as exc:
        fail(str(exc), EXIT_BAD_INPUT)

    sims = []
    for w in selection.workloads:
        traffic = shared
        if traffic is None:
            try:
                traffic = sim_mod.default_traffic(w, params, service, window=duration)
            except sim_mod.TrafficError as exc:
                fail(f"the default spike does not fit: {exc}; give a longer --duration or your own --spike",
                     EXIT_BAD_INPUT)
        sims.append(sim_mod.simulate_workload(w, traffic))

    if plot_path:
        write_plot(plot_simulations, sims, path=plot_path)

    if as_json:
        print_json({"simulations": [s.to_dict() for s in sims], "skipped": list(selection.skipped)})
        return
    for s in sims:
        render(s, every)
    for reason in selection.skipped:
        say(f"[yellow]not simulated:[/] {escape(reason)}", indent="  ")
    if plot_path:
        say(f"plot written to {escape(plot_path)}")
