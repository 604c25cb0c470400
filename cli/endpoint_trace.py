"""``--from-endpoint`` for `simulate` and `recommend`: the options, their checks, the read through the runtime,
and ``--write-trace``. The trace is built in ``infra.analysis.endpoint_traffic`` from what
``infra.aws.traffic`` reads; this module only wires them to the command line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

import click

from fastscale.cli import runtime
from fastscale.cli.common import EXIT_FAILED, Checked, OutputPath, fail, say
from fastscale.cli.output import escape
from fastscale.infra.analysis import endpoint_traffic as live
from fastscale.infra.base import writer
from fastscale.infra.base.regions import is_region, is_sagemaker_region, suggest
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.resolved import ResolvedStack

#: The options, in the order `--help` lists them.
OPTIONS = ("from_endpoint", "since", "region", "tokens", "write_trace")


def from_endpoint_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--from-endpoint NAME``, ``--since``, ``--region``, ``--tokens`` and ``--write-trace``."""
    for decorator in reversed([
        click.option("--from-endpoint", "from_endpoint", metavar="NAME",
                     help="Build the trace from this live endpoint's own traffic (its name in AWS, or the name of an "
                     "endpoint of FILE): request by request from its SageMaker data capture in S3 when that is on, "
                     "else from its CloudWatch metrics (Invocations, 10-second concurrency, ModelLatency). Reads "
                     "only; prints what it assumed."),
        click.option("--since", "since", metavar="DURATION",
                     help=f"With --from-endpoint: how far back to read, e.g. 30m, 3h, 2d (default {live.DEFAULT_SINCE}, "
                     "at most 7d; CloudWatch keeps 10-second datapoints for 3 hours, 1-minute ones for 15 days)."),
        click.option("--region", "region", metavar="R",
                     help="With --from-endpoint: the endpoint's region (default: the config's region)."),
        click.option("--tokens", "tokens", metavar="PROMPT:OUTPUT",
                     help="With --from-endpoint: the prompt and output tokens of a request whose captured payload "
                     "does not tell, and of every request rebuilt from metrics (default: the workload's "
                     "serving.request_tokens, else "
                     f"{live.DEFAULT_TOKENS.prompt}:{live.DEFAULT_TOKENS.output}, an assumption)."),
        click.option("--write-trace", "write_trace", type=OutputPath(dir_okay=False), metavar="FILE",
                     help="With --from-endpoint: also save the trace as a CSV (timestamp,input_tokens,output_tokens), "
                     "which --requests / --trace read."),
    ]):
        command = decorator(command)
    return command


@dataclass(frozen=True)
class EndpointOptions:
    from_endpoint: str | None
    since: str | None
    region: str | None
    tokens: str | None
    write_trace: str | None

    @classmethod
    def of(cls, values: dict[str, Any]) -> EndpointOptions:
        return cls(*(values.get(name) for name in OPTIONS))

    def refuse_without_endpoint(self) -> None:
        """The options that only go with --from-endpoint, given without it: a usage error (exit code 2)."""
        if self.from_endpoint:
            return
        given = [f"--{name.replace('_', '-')}" for name in OPTIONS[1:] if getattr(self, name) is not None]
        if given:
            raise click.UsageError(f"{' and '.join(given)} only apply with --from-endpoint")


def _bad(exc: Exception, option: str | None) -> click.BadParameter:
    return click.BadParameter(str(exc), param_hint=f"'{option}'" if option else None)


@dataclass(frozen=True)
class Reading:
    """A checked ``--from-endpoint``: what to read, and the workload of the file to replay it on."""

    target: live.LiveTarget
    since: timedelta
    tokens: live.TokenProfile | None
    #: the resolved stack with --region applied: its clients (region and emulator) read the endpoint
    clients_target: ResolvedStack
    write_trace: str | None

    @property
    def endpoint(self) -> str | None:
        return self.target.config_endpoint

    @property
    def component(self) -> str | None:
        return self.target.config_component

    def read(self, *, as_json: bool) -> live.EndpointTrace:
        """The trace (written to ``--write-trace`` when given); AWS failures and a window without traffic exit 1."""
        from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs
        from fastscale.infra.aws.traffic import read_traffic  # lazy: boto3, loaded only when this runs

        rt = runtime.current()
        target, region = self.target, self.clients_target.region
        try:
            built = read_traffic(target, region=region, since=self.since, now=rt.now(),
                                 clients=rt.aws_clients(self.clients_target), tokens=self.tokens)
        except AwsError as exc:
            fail(f"cannot read the traffic of {target.endpoint} in {region}: {exc}", EXIT_FAILED)
        except live.NoTrafficError as exc:
            fail(f"{exc}: nothing to replay (widen --since, or check the endpoint's name and --region)", EXIT_FAILED)
        if self.write_trace:
            try:
                writer.write_file(self.write_trace, live.trace_csv(built.trace), what="--write-trace file")
            except OSError as exc:
                fail(f"cannot write {self.write_trace}: {exc.strerror or exc}", EXIT_FAILED)
        if not as_json:
            render(built, self.write_trace)
        return built


def check(checked: Checked, opts: EndpointOptions, endpoint: str | None, component: str | None) -> Reading:
    """``--from-endpoint`` and its options checked against the file, before anything is read (exit 2)."""
    assert opts.from_endpoint
    config, stack = checked.config, checked.stack
    try:
        target = live.live_target(stack, opts.from_endpoint, endpoint, component)
        tokens = live.parse_tokens(opts.tokens) if opts.tokens else None
    except live.TrafficInputError as exc:
        raise _bad(exc, exc.option) from None
    try:
        since = live.parse_since(opts.since or live.DEFAULT_SINCE)
    except ValueError as exc:
        raise _bad(exc, "--since") from None
    if opts.region is not None and not (is_sagemaker_region(opts.region)
                                        or (config.endpoint_url and is_region(opts.region))):
        close = suggest(opts.region)
        raise click.BadParameter(f"{opts.region!r} is not a region with SageMaker AI"
                                 + (f" (did you mean {' or '.join(close)}?)" if close else ""), param_hint="'--region'")
    clients_target = replace(stack, region=opts.region) if opts.region else stack
    return Reading(target, since, tokens or _configured_tokens(config, target), clients_target, opts.write_trace)


def _configured_tokens(config: FastscaleConfig, target: live.LiveTarget) -> live.TokenProfile | None:
    """The replayed workload's ``serving.request_tokens``, when it sets them (else the stated default applies)."""
    for i, ep in enumerate(config.endpoints):
        if ep.name != target.config_endpoint:
            continue
        if target.config_component is None:
            return live.configured_tokens(ep.model, f"endpoints[{i}].model") if ep.model is not None else None
        for j, c in enumerate(ep.inference_components):
            if c.name == target.config_component:
                return live.configured_tokens(c, f"endpoints[{i}].inference_components[{j}]")
    return None


def render(built: live.EndpointTrace, written: str | None) -> None:
    """How the trace was built, before what is done with it."""
    what = built.endpoint + (f" / {built.component}" if built.component else "")
    say(f"[bold]trace of {escape(what)}[/] ({escape(built.region)}) from {built.source}: {len(built.trace):,} requests "
        f"over {built.trace.seconds:,} s")
    for note in built.notes:
        say(f"  {escape(note)}", indent="    ")
    for limit in built.limits:
        say(f"  [yellow]{escape(limit)}[/]", indent="    ")
    if written:
        say(f"  trace written to {escape(written)}", indent="    ")



