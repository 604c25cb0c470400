"""`fastscale destroy`, `fastscale verify-cleanup` and `fastscale sweep`.

Terraform forgets a resource as soon as its delete call returns, while SageMaker deletes endpoints and
inference components asynchronously, and a lost state file leaves resources Terraform never hears of
again. So a destroy is only finished when AWS itself, asked by name and by tag, has nothing of the stack
left. That check is also the only proof there is that the per-endpoint container image caches and the
instance data caches are gone: AWS documents no API for them, and fastscale counts each as part of the
endpoint that made it.

The AWS side goes through the command's :class:`~fastscale.cli.runtime.Runtime` (``aws_clients``,
``synthesize``, ``terraform``), so tests hand in their stand-ins in one place for every command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn

import click

from fastscale.cli import runtime
from fastscale.cli.apply_flow import plan_confirm_apply
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
from fastscale.cli.output import escape
from fastscale.cli.progress import Reporter
from fastscale.cli.stack import (
    AWS_ENV_HELP,
    ENV_HELP,
    StackCommand,
    auto_approve_option,
    out_option,
    refuse_without_terminal,
    terraform_bin_option,
)

if TYPE_CHECKING:
    from fastscale.infra.config import FastscaleConfig

#: Default seconds a sweep may spend waiting for components and endpoints to finish deleting.
DEFAULT_SWEEP_TIMEOUT = 3600


# --------------------------------------------------------------------------------------------- steps


def cleanup_step(cmd: StackCommand) -> Any:
    """verify_cleanup with progress and the AWS error handling every command shares."""
    from fastscale.infra.aws.cleanup import verify_cleanup  # lazy: boto3, loaded only when this runs
    from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs

    cmd.reporter.step("verify-cleanup", "asking AWS by name, prefix and tag what of the stack is left")
    try:
        report = verify_cleanup(cmd.stack, clients=cmd.clients())
    except AwsError as exc:
        cmd.fail(f"cannot check what is left: {exc}")
    cmd.reporter.close()
    cmd.summary["cleanup"] = report.to_dict()
    return report


def sweep_step(cmd: StackCommand, dry_run: bool, timeout: float, delete_logs: bool = False) -> Any:
    from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs
    from fastscale.infra.aws.sweep import sweep  # lazy: boto3, loaded only when this runs

    cmd.reporter.step("sweep", "listing only (dry run)" if dry_run else "deleting in the safe order")
    try:
        report = sweep(
            cmd.stack, clients=cmd.clients(), dry_run=dry_run, on_progress=cmd.reporter.sweep_progress, timeout=timeout, delete_logs=delete_logs
        )
    except AwsError as exc:
        cmd.fail(f"cannot sweep: {exc}")
    cmd.reporter.close()
    return report


def print_aside(title: str, rows: list[tuple[str, str, str]], style: str = "yellow") -> None:
    """A table of what was found but is not acted on (another stack's, hand-made, or kept logs)."""
    from rich.table import Table

    if not rows:
        return
    table = Table(title=title, title_justify="left", title_style=style, expand=False)
    table.add_column("kind", no_wrap=True)
    table.add_column("name", overflow="fold")
    table.add_column("why", overflow="fold")
    for kind, name, why in rows:
        table.add_row(escape(kind), escape(name), escape(why))
    print_table(table, lead=2)


def print_not_touched(not_touched: list[Any], kept: list[Any]) -> None:
    print_aside(
        f"Not this stack's, not touched ({len(not_touched)}): found by name, prefix or tag; never deleted, never a leftover",
        [(x.kind, x.name, getattr(x, "reason", None) or x.detail) for x in not_touched],
    )
    print_aside(
        f"Logs of this stack, kept ({len(kept)}): logs are data; `fastscale sweep --delete-logs` deletes them",
        [(x.kind, x.name, getattr(x, "reason", None) or x.detail) for x in kept],
        style="cyan",
    )


def print_cleanup(report: Any, config: FastscaleConfig, source: str) -> None:
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
    print_not_touched(report.not_touched, report.kept)
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

    from rich.table import Table

    out = console()
    if report.dry_run:
        print_not_touched(report.not_touched, report.kept)
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


def _esc(text: str) -> str:
    return escape(text)


class _TerraformStepFailed(Exception):
    def __init__(self, step: str, message: str):
        super().__init__(message)
        self.step = step
        self.message = message


class DestroyCommand(StackCommand):
    """A destroy run: while Terraform works, a failing step (no binary, synthesis, init, plan, destroy)
    is recorded instead of ending the command, so that the proof always runs afterwards."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.terraform_phase = False
        self.step = "find the terraform binary"

    def run(self, step: str, call: Any, *args: Any, fatal: bool = True, **kwargs: Any) -> Any:
        self.step = step
        return super().run(step, call, *args, fatal=fatal, **kwargs)

    def fail(self, message: str, code: int = EXIT_FAILED) -> NoReturn:
        if self.terraform_phase and code == EXIT_FAILED:  # bad input (exit 2) still ends the command
            self.reporter.close()
            raise _TerraformStepFailed("synth" if message.startswith("synthesis failed") else self.step, message)
        super().fail(message, code)

    def confirm(self, question: str) -> None:
        # A "no" ends the command as everywhere else: nothing was destroyed, so there is nothing to prove.
        self.terraform_phase = False
        try:
            super().confirm(question)
        finally:
            self.terraform_phase = True

    def claim_logs(self) -> None:
        """Tag the stack's log groups while their endpoints still prove them its own: after the destroy,
        nothing else could, and `sweep --delete-logs` would have to leave them. Best effort: when AWS
        cannot be asked now, the proof after the destroy says so."""
        from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs
        from fastscale.infra.aws.inventory import claim_log_groups  # lazy: boto3, loaded only when this runs

        self.reporter.step("logs", "tagging the stack's log groups so they stay provable after the destroy")
        try:
            claimed = claim_log_groups(self.take_inventory(), self.stack, self.clients())
        except AwsError:
            claimed = []
        self.reporter.close()
        if claimed:
            self.summary["claimed_log_groups"] = claimed

    def terraform_destroy(self, terraform_bin: str | None, out: str, auto_approve: bool) -> tuple[str, str] | None:
        """Run Terraform's destroy; None when it succeeded, else (the step that failed, the message).

        The stack's lock comes first, outside the Terraform phase: while another run holds it the destroy
        ends there (exit 1), before the log groups are tagged and without the proof (that run is changing
        the stack)."""
        self.take_lock(out)
        self.claim_logs()
        self.terraform_phase = True
        try:
            runner = self.prepare(terraform_bin, out)
            destroyed = plan_confirm_apply(self, runner, auto_approve=auto_approve, destroy=True)
        except _TerraformStepFailed as exc:
            return exc.step, exc.message
        finally:
            self.terraform_phase = False
            self.release_lock()  # the proof that follows reads AWS only
        if not destroyed.ok:
            return "destroy", self.failure_message("destroy", destroyed)
        return None


@click.command("destroy", epilog=ENV_HELP)
@config_argument
@auto_approve_option
@terraform_bin_option
@out_option
@json_option
@endpoint_url_option
def destroy_command(config_file: str, auto_approve: bool, terraform_bin: str | None, out: str, as_json: bool) -> None:
    """Destroy the stack of FILE with Terraform, then prove with boto3 that nothing is left.

    Plans the destroy of the synthesized stack (`terraform plan -destroy`), lists every resource it deletes,
    then applies exactly that plan (without --auto-approve you are asked to confirm first, default No: an
    empty answer or the end of input destroys nothing; without a terminal --auto-approve is required). Kept
    out of the plan, and listed: what another stack's `fastscale:stack` tag claims, and every endpoint
    configuration, model and role an endpoint or component outside the destroy still uses (another stack's
    included), with what they need; they stay in Terraform's state for a later destroy. Like `deploy` it holds the stack's lock
    (`fastscale.lock` in `cdktf.out/stacks/<project>/`, see --out) from before anything is synthesized
    or tagged until Terraform's destroy has ended, and applies only the plan file it showed: while
    another run holds the lock the destroy exits 1 at once, naming that run (command, pid, host, since
    when), without running the proof below. Otherwise, always — also
    when there is no terraform binary, or synthesis, `terraform init`, `plan` or `destroy` failed (the
    failed step is named) — AWS is asked by name, prefix and tag for every endpoint, inference
    component, endpoint configuration, model, scaling target and policy, alarm, dashboard, role and log
    group of the stack. What the stack's tags (or its owner's, or the dashboard's marker) prove its own
    is a leftover; `fastscale sweep` deletes those in a safe order. What matches a name but belongs to
    another stack, or was made by hand, is listed as not touched and does not affect the exit code.
    Log groups are data: listed as kept, never a leftover.

    Container image caches (per endpoint) and inference-component data caches (per instance) have no
    API AWS documents; fastscale counts each as part of the endpoint that made it. When no endpoint and no component
    is present under the stack's names (its own or anyone's), the report states that their caches are
    gone; otherwise it names each one still there.

    \b
    Exit codes:
      0  destroyed, and nothing of the stack is left
      1  a Terraform step failed (named; the proof still ran), something of
         the stack is left (listed), AWS failed (one `error:` line names the
         call), the confirmation was declined or not given, or another run
         holds the stack's lock (named; nothing was done)
      2  bad input: the config has errors, no --auto-approve without a terminal,
         an unusable --out, or files in the stack directory that Terraform would
         read and fastscale did not write (each named; nothing was synthesized,
         destroyed or asked of AWS)
      130  interrupted with Ctrl-C (Terraform is stopped cleanly first)
    """
    checked = load_checked(config_file, as_json=as_json)
    rt = runtime.current()
    if not auto_approve:
        refuse_without_terminal("destroy", as_json, rt)
    with Reporter(as_json=as_json) as reporter:
        cmd = DestroyCommand("destroy", checked, as_json, reporter, rt)
        try:
            failed = cmd.terraform_destroy(terraform_bin, out, auto_approve)
            if failed is not None:
                step, message = failed
                cmd.summary["failed_step"] = step
                cmd.summary["error"] = message
                if not as_json:
                    say(f"[bold red]error:[/] {_esc(message)} (step: {_esc(step)}); checking what is left anyway.", stderr=True)
            report = cleanup_step(cmd)
        except KeyboardInterrupt:
            cmd.interrupted()
        if not as_json:
            print_cleanup(report, checked.config, config_file)
            if failed is not None:
                say(f"[bold red]destroy incomplete:[/] {_esc(failed[1])} (step: {_esc(failed[0])}).", stderr=True)
        cmd.finish(EXIT_OK if failed is None and report.ok else EXIT_FAILED)


@click.command("verify-cleanup", epilog=AWS_ENV_HELP)
@config_argument
@json_option
@endpoint_url_option
def verify_cleanup_command(config_file: str, as_json: bool) -> None:
    """Prove that nothing of FILE's stack is left in AWS, without changing anything.

    Asks AWS by name, prefix and tag for every resource the stack creates and lists what is left: only
    what the stack's tags (or its owner's, or the dashboard's marker) prove its own. Resources that
    match a name but belong to another stack, or were made by hand, are listed as not touched and never
    make this fail; the stack's log groups are listed as kept (logs are data). Terraform is not run, so
    this also works when the state file is lost. No endpoint and no inference component present under
    the stack's names (its own or anyone's) means their container image and data caches are gone too
    (fastscale counts them as part of their endpoint: AWS documents no API for them).

    \b
    Exit codes:
      0  nothing of the stack is left
      1  something of the stack is left (listed), or AWS could not be reached
      2  bad input: the config has errors (AWS was not called)
      130  interrupted with Ctrl-C
    """
    checked = load_checked(config_file, as_json=as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("verify-cleanup", checked, as_json, reporter, runtime.current())
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
@click.option(
    "--delete-logs",
    is_flag=True,
    help="Also delete the stack's SageMaker log groups (kept by default: logs are data).",
)
@json_option
@endpoint_url_option
def sweep_command(config_file: str, dry_run: bool, auto_approve: bool, timeout: float, delete_logs: bool, as_json: bool) -> None:
    """Delete what is left of FILE's stack in the order AWS allows, without Terraform.

    For a destroy that failed half-way or a lost state file. What `fastscale verify-cleanup` reports is
    deleted: resources found by name, prefix or tag whose tags (or whose owner's, or the dashboard's
    marker) prove them this stack's. Order: alarms and the dashboard, scaling policies and
    targets, inference components (adapters before their base, waiting until each is gone), endpoints,
    endpoint configurations, models, log groups (only with --delete-logs), and the IAM execution role
    last. Resources of another stack and resources made by hand are never touched, even when their
    names match. An endpoint configuration, model or role that an endpoint or inference component still
    present in the region uses (whoever owns it, or one whose deletion failed) is kept and reported as
    skipped. Every step is idempotent, so a sweep can be run again. Afterwards the account is checked
    as by `fastscale verify-cleanup`.

    Without --auto-approve the list is shown first and you are asked to confirm; without a terminal
    --auto-approve (or --dry-run) is required.

    \b
    Exit codes:
      0  nothing of the stack is left (with --dry-run: the listing succeeded)
      1  something could not be deleted or is still there, AWS could not be
         reached, or the confirmation was declined
      2  bad input: the config has errors, or no --auto-approve without a terminal
         (nothing was deleted or asked of AWS)
      130  interrupted with Ctrl-C
    """
    checked = load_checked(config_file, as_json=as_json)
    rt = runtime.current()
    if not dry_run and not auto_approve:
        refuse_without_terminal("sweep", as_json, rt)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("sweep", checked, as_json, reporter, rt)
        cmd.summary["dry_run"] = dry_run
        cmd.summary["delete_logs"] = delete_logs
        try:
            if not dry_run and not auto_approve:
                preview = sweep_step(cmd, dry_run=True, timeout=timeout, delete_logs=delete_logs)
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
            result = sweep_step(cmd, dry_run=dry_run, timeout=timeout, delete_logs=delete_logs)
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
