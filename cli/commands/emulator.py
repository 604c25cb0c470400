"""`fastscale emulator`: a local AWS emulator in the foreground, for rehearsing a deploy without an account."""

from __future__ import annotations

import sys

import click

from fastscale.cli import runtime
from fastscale.cli.common import EXIT_FAILED, EXIT_OK, console, fail, say
from fastscale.infra.project.emulator import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    DEFAULT_REGION,
    INSTALL_COMMAND,
    EmulatorUnavailable,
    environment,
)

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


@click.command("emulator")
@click.option("--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
              help="Port to listen on (0: any free port; the one chosen is printed).")
@click.option("--host", default=DEFAULT_HOST, show_default=True,
              help="Address to listen on. Anything but loopback lets other machines use it: it has no authentication.")
@click.option("--region", default=DEFAULT_REGION, show_default=True,
              help="Region printed in the environment to use (the emulator answers every region).")
def emulator_command(port: int, host: str, region: str) -> None:
    """Run a local AWS emulator in the foreground, to rehearse deploy, status, destroy without an account.

    It is moto's server (install it with `pip install 'fastscale[emulator]'`), answering as AWS does where
    moto does not: SageMaker descriptions without the empty members AWS leaves out and with the defaults AWS
    fills (variant weights, the container mode), tags on Application Auto Scaling scalable targets, so auto
    scaling can be deployed and destroyed; UpdateEndpoint, so a changed deploy moves the endpoint to its new
    configuration (refused, as AWS refuses it, for an instance-type change of an auto-scaled variant);
    DescribeScalingActivities and DescribeAlarmHistory, so `explain` runs; and, for any call it does not
    implement, an error that says so (the quota preflight then says quotas were not checked). It holds
    everything in memory: Ctrl-C
    stops it and forgets it all. What it cannot hold (inference components, the metrics configuration:
    AWS Cloud Control API resources) is listed in docs/emulator.md.

    It prints its URL and the environment to use. Then, in another terminal:

    \b
      fastscale init demo --emulator http://127.0.0.1:5000
      cd demo && fastscale deploy fastscale.yaml --auto-approve

    \b
    Exit codes:
      0  stopped with Ctrl-C (or SIGTERM)
      1  moto's server is not installed (the error names the pip command), or
         the address cannot be listened on (e.g. the port is in use)
      2  bad arguments (e.g. a port outside 0-65535)
    """
    try:
        server = runtime.current().emulator(host, port)
    except EmulatorUnavailable as exc:
        fail(str(exc), EXIT_FAILED)
    try:
        server.bind()
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}; pass another --port (0 picks a free one)",
             EXIT_FAILED)

    _stop_on_sigterm()
    out = console()
    say(f"[bold green]fastscale emulator[/] listening on [bold]{server.url}[/] (moto with Application Auto Scaling "
        "tags and UpdateEndpoint; no Service Quotas, no Cloud Control API). Everything it holds is lost when it stops.")
    if host not in _LOOPBACK:
        say(f"[yellow]warning:[/] listening on {host}: any machine that reaches it can use it (no authentication).",
            stderr=True)
    out.print("\nEnvironment for another shell (fastscale itself only needs FASTSCALE_ENDPOINT_URL, or "
              "`endpoint_url` in the config; it signs its calls there with the dummy credentials, never yours):")
    for key, value in environment(server.url, region).items():
        out.print(f"  export {key}={value}", highlight=False, soft_wrap=True)
    out.print("\nRehearse:", highlight=False)
    out.print(f"  fastscale init demo --emulator {server.url}", highlight=False, soft_wrap=True)
    out.print("  cd demo && fastscale deploy fastscale.yaml --auto-approve", highlight=False)
    out.print("\nCtrl-C stops it.", highlight=False)
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    say("fastscale emulator stopped.", stderr=True)
    sys.exit(EXIT_OK)


def _stop_on_sigterm() -> None:
    """SIGTERM (a process manager, `kill`) stops the server as Ctrl-C does."""
    import signal

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (e.g. inside a test runner's worker): Ctrl-C still works
        pass


__all__ = ["INSTALL_COMMAND", "emulator_command"]
