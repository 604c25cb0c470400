"""The `fastscale` command group.

Subcommands are loaded lazily: `fastscale --help` and `fastscale validate` must not pay for importing
cdktf/jsii (seconds) or boto3 (hundreds of milliseconds). The short help of each command lives here, so
listing commands imports nothing.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
from typing import Any

import click

from fastscale.cli.errors import guard, one_line
from fastscale.cli.output import closed_pipe
from fastscale.infra import __version__
from fastscale.infra.base.printable import printable

#: name -> (module under cli.commands, short help shown by `fastscale --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "Check a config file and report every problem at once."),
    "schema": ("schema", "Print the JSON Schema of the config file (for editors)."),
    "synth": ("synth", "Validate, then synthesize the Terraform JSON stack."),
    "estimate": ("estimate", "Estimate scale-out time per scenario and the hourly/monthly cost."),
    "simulate": ("simulate", "Replay a traffic spike against the configured scaling, layer by layer."),
    "recommend": ("recommend", "Find the cheapest scaling settings that meet a TTFT SLO on a request trace."),
    "plan": ("deploy", "Validate, synthesize and show the Terraform plan."),
    "deploy": ("deploy", "Validate, synthesize, apply, then verify the live endpoints."),
    "status": ("deploy", "Verify what is live against the config, without changing anything."),
    "destroy": ("destroy", "Destroy the stack, then prove nothing (and no cache owner) is left."),
    "verify-cleanup": ("destroy", "Only prove that nothing of the stack is left in the account."),
    "sweep": ("destroy", "Delete leftovers in a safe order when a destroy failed half-way."),
    "measure-scaleout": ("measure", "Add one copy or instance on a live endpoint and time it."),
    "explain": ("explain", "Explain why a live endpoint did or did not scale, with fixes."),
    "init": ("init", "Create a new fastscale project (config, cdktf app, CI workflow)."),
    "emulator": ("emulator", "Run a local AWS emulator to rehearse deploy and destroy without an account."),
    "adopt": ("adopt", "Write a config that takes over a live endpoint made elsewhere (imports it)."),
}


class LazyGroup(click.Group):
    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            try:
                return super().main(*args, **kwargs)
            finally:
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
        except BrokenPipeError:
            closed_pipe()


    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module_name, _ = COMMANDS[name]
        try:
            module = importlib.import_module(f"fastscale.cli.commands.{module_name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"fastscale.cli.commands.{module_name}":
                return None
            raise
        command = getattr(module, name.replace("-", "_") + "_command", None)
        if command is not None and command.callback is not None:
            # One place turns every failure into one line and an exit code (and one JSON object with --json).
            command.callback = guard(name, command.callback)
        return command

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["fastscale.argv"] = list(args)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # Caught here, before click's own handler turns a closed pipe into exit code 1.
            closed_pipe()
        except click.UsageError as exc:
            # Bad arguments are reported by Click on stderr (exit 2); with --json, stdout still gets the
            # one JSON object a pipeline expects.
            if "--json" in ctx.meta.get("fastscale.argv", ()):
                name = exc.ctx.command.name if exc.ctx is not None and exc.ctx.command is not ctx.command else None
                click.echo(json.dumps({"command": name, "ok": False, "error": one_line(exc.format_message()),
                                       "exit_code": exc.exit_code}, indent=2))
            _make_printable(exc)
            raise
        except click.ClickException as exc:
            _make_printable(exc)
            raise

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx) if self._available(name)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    @staticmethod
    def _available(name: str) -> bool:
        spec = importlib.util.find_spec(f"fastscale.cli.commands.{COMMANDS[name][0]}")
        return spec is not None


def _make_printable(exc: click.ClickException) -> None:
    """Click prints its errors as they are, and one may quote a file name or value holding ESC: shown as
    visible escapes instead, like everything fastscale prints (``cli.output``)."""
    vars(exc)["message"] = printable(exc.message)  # typed Final by Click, but a plain instance attribute


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from fastscale.stacks.engine_choice import (
        engine_summary,  # lazy: only --version needs it; --help loads no stacks code
    )

    click.echo(f"fastscale, version {__version__}")
    click.echo(f"engine: {engine_summary()}")
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show fastscale's version and the CDK engine it synthesizes with, then exit.")
def cli() -> None:
    """Fast-scaling generative-AI endpoints on Amazon SageMaker AI from one YAML file.

    fastscale turns on, by default, the three things that make a SageMaker endpoint scale out fast:
    10-second (high-resolution) scaling metrics, inference-component data caching, and container image
    caching (accelerator instance types with images in Amazon ECR). It synthesizes Terraform with CDK for
    Terraform, deploys it with terraform/tofu, and verifies the live result with boto3.

    \b
    Exit codes: 0 success, 1 an operation failed, 2 bad input (config, arguments
    or output path), 130 interrupted, 141 the output pipe was closed early (as
    by `| head`); each command's --help says what they mean for it. Every
    failure is one `error:` line on stderr; with --json, one JSON object with an
    `error` member on stdout. FASTSCALE_DEBUG=1 shows the traceback of an
    unexpected error.
    """


def main() -> None:  # pragma: no cover - console entry point
    cli()
