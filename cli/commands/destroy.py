"""`fastscale destroy`, `fastscale verify-cleanup` and `fastscale sweep`.

Terraform forgets a resource as soon as its delete call returns, while SageMaker deletes endpoints and
inference components asynchronously, and a lost state file leaves resources Terraform never hears of
again. So a destroy is only finished when AWS itself, asked by name and by tag, has nothing of the stack
left. That check is also the only proof there is that the per-endpoint container image caches and the
instance data caches are gone: they have no API, and AWS purges them with the endpoint that owns them.

The AWS side goes through :mod:`fastscale.cli.stack`'s seams (``aws_clients``, ``synthesize``), so tests
replace it in one place for every command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from fastscale.cli import stack
from fastscale.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    config_argument,
    console,
    endpoint_url_option,
    json_option,
    load_checked,
    print_table,
    say,
)
from fastscale.cli.progress import Reporter
from fastscale.cli.stack import (
    AWS_ENV_HELP,
    ENV_HELP,
    StackCommand,
    auto_approve_option,
    out_option,
    plan_confirm_apply,
    refuse_without_terminal,
    terraform_bin_option,
)

if TYPE_CHECKING:
    from fastscale.infra.config import FastscaleConfig

#: Default seconds a sweep may spend waiting for components and endpoints to finish deleting.
DEFAULT_SWEEP_TIMEOUT = 3600


# --------------------------------------------------------------------------------------------- seams


def verify_cleanup(config: FastscaleConfig) -> Any:
    from fastscale.infra.aws.cleanup import verify_cleanup as verify

    return verify(config, clients=stack.aws_clients(config))


def sweep(config: FastscaleConfig, **kwargs: Any) -> Any:
    from fastscale.infra.aws.sweep import sweep as run_sweep

    return run_sweep(config, clients=stack.aws_clients(config), **kwargs)


# --------------------------------------------------------------------------------------------- steps


def cleanup_step(cmd: StackCommand) -> Any:
    """verify_cleanup with progress and the AWS error handling every command shares."""
    from fastscale.infra.aws.clients import AwsError

    cmd.reporter.step("verify-cleanup", "asking AWS by name and by tag what is left")
    try:
        report = verify_cleanup(cmd.config)
    except AwsError as exc:
        cmd.fail(f"cannot check what is left: {exc}")
    cmd.reporter.close()
    cmd.summary["cleanup"] = report.to_dict()
    return report


def sweep_step(cmd: StackCommand, dry_run: bool, timeout: float) -> Any:
    from fastscale.infra.aws.clients import AwsError

    cmd.reporter.step("sweep", "listing only (dry run)" if dry_run else "deleting in the safe order")
    try:
        report = sweep(cmd.config, dry_run=dry_run, on_progress=cmd.reporter.sweep_progress, timeout=timeout)
    except AwsError as exc:
        cmd.fail(f"cannot sweep: {exc}")
    cmd.reporter.close()
    return report


def print_cleanup(report: Any, config: FastscaleConfig, source: str) -> None:
    from rich.markup import escape
    from rich.table import Table

    if report.leftovers:
        table = Table(
            title=f"{len(report.leftovers)} leftover(s) of {config.project} in {config.region}",
            title_justify="left",
            title_style="bold red",
            expand=False,
        )
        table.add_column("kind", no_wrap=True)
        table.add_column("name", overflow="fold")
        table.add_column("why it matters", overflow="fold")
        for x in report.leftovers:
            table.add_row(escape(x.kind), escape(x.name), escape(x.detail))
        print_table(table, lead=2)
    else:
        say(f"[bold green]✓ Nothing of {escape(config.project)} is left in {escape(config.region)}.[/]")
    if report.caches:
        say(escape(report.caches))
    if report.leftovers:
        say(
            f"Run [bold]`fastscale sweep {escape(source)} --dry-run`[/] to see what it would delete in a safe "
            f"order, then [bold]`fastscale sweep {escape(source)}`[/] to delete it."
        )


def print_sweep(report: Any) -> None:
    """A dry run's list in full; for a real sweep (whose every step was already shown as it happened)
    the counts, and a table of only what was not deleted."""
    from collections import Counter

    from rich.markup import escape
    from rich.table import Table

    out = console()
    if not report.actions:
        out.print("[bold green]Nothing to sweep:[/] no leftovers found.")
        return
    shown = report.actions
    if not report.dry_run:
        counts = Counter(a.status for a in report.actions)
        out.print("Sweep: " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) + ".", highlight=False)
        shown = [a for a in report.actions if a.status not in ("deleted", "already-gone")]
        if not shown:
            return
    title = "Sweep plan (dry run: nothing was deleted)" if report.dry_run else "Not deleted"
    table = Table(title=title, title_justify="left", expand=False)
    table.add_column("status", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("name", overflow="fold")
    table.add_column("detail", overflow="fold")
    styles = {"deleted": "green", "failed": "bold red", "skipped": "yellow", "would-delete": "cyan"}
    for a in shown:
        style = styles.get(a.status, "")
        status = f"[{style}]{escape(a.status)}[/]" if style else escape(a.status)
        table.add_row(status, escape(a.kind), escape(a.name), escape(a.detail))
    print_table(table, lead=3)


# --------------------------------------------------------------------------------------------- commands


@click.command("destroy", epilog=ENV_HELP)
@config_argument
@auto_approve_option
@terraform_bin_option
@out_option
@json_option
@endpoint_url_option
def destroy_command(config_file: str, auto_approve: bool, terraform_bin: str | None, out: str, as_json: bool) -> None:
    """Destroy the stack of FILE with Terraform, then prove with boto3 that nothing is left.

    Runs `terraform destroy` on the synthesized stack (without --auto-approve the destroy plan is shown
    and you are asked to confirm; without a terminal --auto-approve is required). Then, even when
    Terraform failed half-way, AWS is asked by name and by the stack tag for every endpoint, inference
    component, endpoint configuration, model, scaling target and policy, alarm, dashboard and role of
    the stack. Every leftover is listed; `fastscale sweep` deletes them in a safe order.

    Container image caches (per endpoint) and inference-component data caches (per instance) have no
    API: AWS purges them when it deletes the endpoint that owns them. When no endpoint and no component
    is left, the report states that their caches are gone.

    \b
    Exit codes:
      0  destroyed, and nothing of the stack is left
      1  Terraform failed, something is left (listed), AWS failed (one `error:`
         line names the call), no usable terraform/tofu binary, or the
         confirmation was declined
      2  bad input: the config has errors, no --auto-approve without a terminal,
         or an unusable --out (nothing was synthesized, destroyed or asked of AWS)
      130  interrupted with Ctrl-C (Terraform is stopped cleanly first)
    """
    checked = load_checked(config_file, as_json=as_json)
    if not auto_approve:
        refuse_without_terminal("destroy", as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("destroy", checked, as_json, reporter)
        try:
            runner = cmd.prepare(terraform_bin, out)
            destroyed = plan_confirm_apply(cmd, runner, auto_approve=auto_approve, destroy=True)
            if not destroyed.ok and not as_json:
                say(
                    f"[bold red]error:[/] terraform destroy failed (exit code {destroyed.returncode}); "
                    "checking what is left anyway.",
                    stderr=True,
                )
            report = cleanup_step(cmd)
        except KeyboardInterrupt:
            cmd.interrupted()
        if not as_json:
            print_cleanup(report, checked.config, config_file)
        cmd.finish(EXIT_OK if destroyed.ok and report.ok else EXIT_FAILED)


@click.command("verify-cleanup", epilog=AWS_ENV_HELP)
@config_argument
@json_option
@endpoint_url_option
def verify_cleanup_command(config_file: str, as_json: bool) -> None:
    """Prove that nothing of FILE's stack is left in AWS, without changing anything.

    Asks AWS by name and by the stack tag for every resource the stack creates and lists what is left.
    Terraform is not run, so this also works when the state file is lost. No endpoint and no
    inference component left means their container image and data caches are gone too (AWS purges them
    with their endpoint; they have no API of their own).

    \b
    Exit codes:
      0  nothing is left
      1  something is left (listed), or AWS could not be reached
      2  bad input: the config has errors (AWS was not called)
      130  interrupted with Ctrl-C
    """
    checked = load_checked(config_file, as_json=as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("verify-cleanup", checked, as_json, reporter)
        try:
            report = cleanup_step(cmd)
        except KeyboardInterrupt:
            cmd.interrupted()
        if not as_json:
            print_cleanup(report, checked.config, config_file)
        cmd.finish(EXIT_OK if report.ok else EXIT_FAILED)


@click.command("sweep", epilog=AWS_ENV_HELP)
@config_argument
@click.option("--dry-run", is_flag=True, help="Only list what would be deleted, in the order it would be.")
@auto_approve_option
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_SWEEP_TIMEOUT,
    show_default=True,
    metavar="S",
    help="Seconds to wait for inference components and endpoints to finish deleting.",
)
@json_option
@endpoint_url_option
def sweep_command(config_file: str, dry_run: bool, auto_approve: bool, timeout: float, as_json: bool) -> None:
    """Delete what is left of FILE's stack in the order AWS allows, without Terraform.

    For a destroy that failed half-way or a lost state file. Leftovers are found by name and by the
    stack tag, then deleted: alarms, scaling policies and targets, inference components (adapters
    before their base, waiting until each is gone), endpoints, endpoint configurations, models, and
    the IAM execution role last. Every step is idempotent, so a sweep can be run again. Afterwards the
    account is checked as by `fastscale verify-cleanup`.

    Without --auto-approve the list is shown first and you are asked to confirm; without a terminal
    --auto-approve (or --dry-run) is required.

    \b
    Exit codes:
      0  nothing is left (with --dry-run: the listing succeeded)
      1  something could not be deleted or is still there, AWS could not be
         reached, or the confirmation was declined
      2  bad input: the config has errors, or no --auto-approve without a terminal
         (nothing was deleted or asked of AWS)
      130  interrupted with Ctrl-C
    """
    checked = load_checked(config_file, as_json=as_json)
    if not dry_run and not auto_approve:
        refuse_without_terminal("sweep", as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("sweep", checked, as_json, reporter)
        cmd.summary["dry_run"] = dry_run
        try:
            if not dry_run and not auto_approve:
                preview = sweep_step(cmd, dry_run=True, timeout=timeout)
                if not preview.actions:
                    if not as_json:
                        print_sweep(preview)
                    cmd.summary["sweep"] = preview.to_dict()
                    report = cleanup_step(cmd)
                    if not as_json:
                        print_cleanup(report, checked.config, config_file)
                    cmd.finish(EXIT_OK if report.ok else EXIT_FAILED)
                if not as_json:
                    print_sweep(preview)
                cmd.confirm("Delete these resources?")
            result = sweep_step(cmd, dry_run=dry_run, timeout=timeout)
            cmd.summary["sweep"] = result.to_dict()
            if not as_json:
                print_sweep(result)
            if dry_run:
                cmd.finish(EXIT_OK if result.ok else EXIT_FAILED)
            report = cleanup_step(cmd)
        except KeyboardInterrupt:
            cmd.interrupted()
        if not as_json:
            print_cleanup(report, checked.config, config_file)
        cmd.finish(EXIT_OK if result.ok and report.ok else EXIT_FAILED)
