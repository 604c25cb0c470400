"""`fastscale plan`, `fastscale deploy` and `fastscale status`, and the stack plumbing `destroy` shares.

Every command validates first: a config with errors exits 2 before anything is synthesized, planned,
applied or asked of AWS. The steps after that are the ones a person would run by hand — synthesize, then
``terraform init`` / ``plan`` / ``apply`` with the real binary — followed by what Terraform cannot tell:
whether the endpoints are really live and configured as the file says.

Replaceable in tests (looked up on this module at call time): :func:`synthesize` (a fixture stack of
``terraform_data`` resources instead of the real CDKTF app), :func:`aws_clients` (Stubber-wrapped clients
instead of real ones), :func:`is_interactive`.
"""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    Checked,
    config_argument,
    console,
    json_option,
    load_checked,
    print_json,
    print_table,
)
from fastscale.cli.progress import Reporter

if TYPE_CHECKING:
    from fastscale.infra.config import FastscaleConfig
    from fastscale.infra.terraform import TerraformEvent, TerraformResult, TerraformRunner

#: Exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130
#: Default seconds `deploy` waits for endpoints and components to become InService before verifying.
DEFAULT_WAIT_TIMEOUT = 3600
#: Saved plan that `deploy` / `destroy` show, ask about, then apply: what is applied is what was shown.
PLAN_FILE = "fastscale.tfplan"

ENV_HELP = """\b
Environment:
  FASTSCALE_TERRAFORM   terraform/tofu binary when --terraform-bin is not given
                        (else `terraform`, else `tofu`, on PATH)
  AWS_PROFILE, AWS_ACCESS_KEY_ID, ...   credentials, as for the AWS CLI
  TF_CLI_CONFIG_FILE, TF_DATA_DIR, TF_PLUGIN_CACHE_DIR, TF_LOG   passed on to Terraform
"""
AWS_ENV_HELP = """\b
Environment:
  AWS_PROFILE, AWS_ACCESS_KEY_ID, ...   credentials, as for the AWS CLI
  (the region is the config's `region`)
"""

terraform_bin_option = click.option(
    "--terraform-bin",
    "terraform_bin",
    metavar="PATH",
    default=None,
    help="terraform or tofu binary to run (default: $FASTSCALE_TERRAFORM, else terraform, else tofu on PATH).",
)
out_option = click.option(
    "--out",
    "out",
    metavar="DIR",
    default="cdktf.out",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Directory the Terraform stack is synthesized into.",
)
auto_approve_option = click.option(
    "--auto-approve",
    is_flag=True,
    help="Do not ask for confirmation (required without a terminal, e.g. in CI).",
)


# --------------------------------------------------------------------------------------------- seams


def synthesize(config: FastscaleConfig, outdir: str) -> Any:
    """Synthesize the stack; returns :class:`stacks.app.SynthResult`. Imported here, not at module load:
    cdktf and jsii cost seconds, which `status` and `--help` must not pay."""
    from fastscale.stacks.app import synthesize as synth

    return synth(config, outdir=outdir)


def aws_clients(config: FastscaleConfig) -> Any:
    """The ``clients=`` argument of the AWS checks: None builds real boto3 clients for the config's region."""
    return None


def is_interactive() -> bool:
    """Whether someone can answer a confirmation prompt."""
    return sys.stdin.isatty()


def verify_live(config: FastscaleConfig, **kwargs: Any) -> Any:
    from fastscale.infra.aws.verify import verify_live as verify

    return verify(config, clients=aws_clients(config), **kwargs)


# --------------------------------------------------------------------------------------------- plumbing


def terraform_summary(result: TerraformResult | None) -> dict[str, Any] | None:
    if result is None:
        return None
    return {
        "operation": result.operation,
        "ok": result.ok,
        "returncode": result.returncode,
        "add": result.added,
        "change": result.changed,
        "destroy": result.destroyed,
        "diagnostics": [asdict(d) for d in result.diagnostics],
        "outputs": result.outputs,
    }


class StackCommand:
    """One run of a command that works on the stack: reports progress, collects the JSON summary, and
    ends the process with the right exit code whatever happens (failure, Ctrl-C, success)."""

    def __init__(self, command: str, checked: Checked, as_json: bool, reporter: Reporter):
        self.command = command
        self.checked = checked
        self.config = checked.config
        self.as_json = as_json
        self.reporter = reporter
        self.runner: TerraformRunner | None = None
        self.changes: list[dict[str, str | None]] = []
        self.summary: dict[str, Any] = {"command": command, "file": checked.source, "ok": False}

    # -- output -------------------------------------------------------------------------------------

    def finish(self, code: int, ok: bool | None = None) -> NoReturn:
        """End the command: the JSON summary (with --json) and the exit code."""
        self.reporter.close()
        self.summary["ok"] = code == EXIT_OK if ok is None else ok
        if self.as_json:
            self.summary["exit_code"] = code
            print_json(self.summary)
        sys.exit(code)

    def fail(self, message: str, code: int = EXIT_FAILED) -> NoReturn:
        self.reporter.close()
        self.summary["error"] = message
        if not self.as_json:
            console(stderr=True).print(f"[bold red]error:[/] {_esc(message)}", highlight=False, soft_wrap=True)
        self.finish(code, ok=False)

    def show_diagnostics(self, result: TerraformResult) -> None:
        """Terraform's own error and warning text, in full (the progress stream showed only the events)."""
        if self.as_json or not result.diagnostics:
            return
        self.reporter.close()
        err = console(stderr=True)
        for d in result.diagnostics:
            style = "red" if d.severity == "error" else "yellow"
            head, _, body = str(d).partition("\n")
            # Soft wrap: Terraform's text keeps its own line breaks, however narrow the log.
            err.print(f"[{style}]{_esc(head)}[/]", highlight=False, soft_wrap=True)
            if body:
                err.print(_esc(body), highlight=False, soft_wrap=True)

    def interrupted(self) -> NoReturn:
        """Ctrl-C: say what state things were left in, then exit 130."""
        self.reporter.close()
        last = self.runner.last_result if self.runner is not None else None
        if last is not None and last.interrupted:
            if last.returncode is not None and last.returncode >= 0:
                message = (
                    f"Interrupted: Terraform was stopped cleanly (terraform {last.operation} finished the calls "
                    "in flight, wrote its state and released the lock). Run the command again to continue."
                )
            else:
                message = (
                    f"Interrupted: terraform {last.operation} did not stop in time and was terminated; its state "
                    "may still be locked (see `terraform force-unlock`) and may miss resources it created."
                )
            self.summary["terraform"] = terraform_summary(last)
        else:
            message = f"Interrupted: fastscale {self.command} was stopped; Terraform was not running."
        self.summary["interrupted"] = True
        self.summary["error"] = message
        if self.as_json:
            self.summary["exit_code"] = EXIT_INTERRUPTED
            print_json(self.summary)
        else:
            console(stderr=True).print(f"[bold yellow]{_esc(message)}[/]", highlight=False, soft_wrap=True)
        sys.exit(EXIT_INTERRUPTED)

    # -- steps --------------------------------------------------------------------------------------

    def on_event(self, event: TerraformEvent) -> None:
        if event.kind == "planned_change" and event.address:
            self.changes.append({"address": event.address, "action": event.action})
        self.reporter.terraform_event(event)

    def prepare(self, terraform_bin: str | None, out: str) -> TerraformRunner:
        """Find the binary, synthesize, ``terraform init``. Exits 1 on any failure."""
        from fastscale.infra.terraform import TerraformError, TerraformRunner, find_binary

        try:
            binary = find_binary(terraform_bin)
        except TerraformError as exc:
            self.fail(str(exc))
        self.summary["terraform_binary"] = binary

        self.reporter.step("synth", f"into {out}")
        try:
            synth = synthesize(self.config, out)
        except Exception as exc:
            self.fail(f"synthesis failed: {type(exc).__name__}: {exc}")
        stack_dir = Path(synth.stack_dir)
        self.summary["stack_dir"] = str(stack_dir)

        try:
            self.runner = TerraformRunner(binary, stack_dir, on_event=self.on_event)
        except TerraformError as exc:
            self.fail(str(exc))
        self.run("init", self.runner.init)
        return self.runner

    def run(self, step: str, call: Any, *args: Any, fatal: bool = True, **kwargs: Any) -> TerraformResult:
        """One Terraform operation, shown as ``step``. A failure shows Terraform's diagnostics and exits 1,
        unless ``fatal`` is False (the caller goes on, e.g. to list what a failed destroy left)."""
        from fastscale.infra.terraform import TerraformError

        self.reporter.operation = step
        self.reporter.step(step)
        try:
            result = call(*args, **kwargs)
        except TerraformError as exc:
            self.fail(str(exc))
        self.summary["terraform"] = terraform_summary(result)
        self.show_diagnostics(result)
        if not result.ok and fatal:
            self.fail(f"terraform {step} failed (exit code {result.returncode})")
        return result

    def confirm(self, question: str) -> None:
        """Ask; a "no" ends the command with exit 1 and nothing changed."""
        self.reporter.close()
        if not click.confirm(question, default=False, err=True):
            self.fail("cancelled: nothing was changed.")

    def verification(self, wait: bool, timeout: float | None) -> Any:
        from fastscale.infra.aws.clients import AwsError

        self.reporter.step("verify", "waiting for the endpoints to settle" if wait else "one look, no waiting")
        kwargs: dict[str, Any] = {"wait": wait, "on_progress": self.reporter.wait_progress}
        if timeout is not None:
            kwargs["timeout"] = timeout
        try:
            report = verify_live(self.config, **kwargs)
        except AwsError as exc:
            self.fail(f"cannot verify the live state: {exc}")
        self.reporter.close()
        self.summary["verification"] = report.to_dict()
        return report


def refuse_without_terminal(command: str, as_json: bool) -> None:
    """A prompt nobody can answer must not hang a pipeline or be taken as a yes: refuse up front."""
    if is_interactive():
        return
    message = (
        f"fastscale {command} needs confirmation, and there is no terminal to ask: pass --auto-approve "
        "to run without asking (as in CI). Nothing was done."
    )
    if as_json:
        print_json({"command": command, "ok": False, "error": message, "exit_code": EXIT_BAD_INPUT})
    else:
        console(stderr=True).print(f"[bold red]error:[/] {_esc(message)}", highlight=False, soft_wrap=True)
    sys.exit(EXIT_BAD_INPUT)


#: How each planned action is marked, as Terraform marks it in its own plan output.
_ACTION_MARKS = {"create": "+", "update": "~", "delete": "-", "replace": "-/+", "read": "<=", "move": "->"}
_ACTION_STYLES = {"create": "green", "update": "yellow", "delete": "red", "replace": "magenta"}


def print_change_summary(result: TerraformResult, changes: list[dict[str, str | None]]) -> None:
    """The plan as a result on stdout: one line per resource that would change, then the counts. (The
    progress stream on stderr leaves planned changes out, so a `plan > plan.txt` holds the whole plan.)"""
    out = console()
    if not result.has_changes:
        out.print("[bold green]No changes:[/] the deployed stack matches the config.", highlight=False)
        return
    for change in changes:
        action = change.get("action") or "?"
        style = _ACTION_STYLES.get(action, "")
        mark = f"{_ACTION_MARKS.get(action, '?'):>3} {action}"
        out.print(f"[{style}]{mark}[/] {_esc(change['address'] or '')}" if style else f"{mark} {_esc(change['address'] or '')}",
                  highlight=False, soft_wrap=True)
    out.print(
        f"[bold]Plan:[/] {result.added} to add, {result.changed} to change, {result.destroyed} to destroy.",
        highlight=False,
    )


def print_verification(report: Any, title: str) -> None:
    from rich.table import Table

    out = console()
    table = Table(title=title, title_justify="left", show_lines=False, expand=False)
    # Names never fold (a log must stay greppable for them); the expectation is shown only where the
    # live value differs from it, since a matching one would just repeat the live value.
    # Columns nobody fills are left out so the others get the width.
    show_expected = any(not c.ok for c in report.checks)
    show_detail = any(c.detail for c in report.checks)
    table.add_column("", no_wrap=True)
    table.add_column("resource", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("live", overflow="fold")
    if show_expected:
        table.add_column("expected (where different)", overflow="fold")
    if show_detail:
        table.add_column("detail", overflow="fold")
    for c in report.checks:
        row = ["[green]✓[/]" if c.ok else "[bold red]✗[/]", _esc(c.resource), _esc(c.check), _esc(c.actual or "")]
        if show_expected:
            row.append("" if c.ok else _esc(c.expected or ""))
        if show_detail:
            row.append(_esc(c.detail or ""))
        table.add_row(*row)
    print_table(table)
    failures = [c for c in report.checks if not c.ok]
    if failures:
        out.print(f"[bold red]✗ {len(failures)} of {len(report.checks)} checks differ from the config.[/]")
    else:
        out.print(f"[bold green]✓ all {len(report.checks)} checks match the config.[/]")


def print_outputs(outputs: dict[str, Any]) -> None:
    if not outputs:
        return
    out = console()
    out.print("[bold]Outputs:[/]")
    for key, value in outputs.items():
        out.print(f"  {_esc(key)} = {_esc(str(value))}", highlight=False)


def _esc(text: str) -> str:
    from rich.markup import escape

    return escape(text)


# --------------------------------------------------------------------------------------------- commands



@click.command("plan", epilog=ENV_HELP)
@config_argument
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 2 when the plan has changes, 0 when it has none (as terraform plan -detailed-exitcode).",
)
@terraform_bin_option
@out_option
@json_option
def plan_command(config_file: str, detailed_exitcode: bool, terraform_bin: str | None, out: str, as_json: bool) -> None:
    """Validate FILE, synthesize the stack and show what `deploy` would change.

    Runs `terraform init` and `terraform plan` in the synthesized stack directory. Nothing in AWS is
    changed. Progress goes to stderr; with --json, progress events are JSON lines on stderr and a
    summary object (counts, planned changes, diagnostics) is printed on stdout.

    \b
    Exit codes:
      0  the plan succeeded (with or without changes)
      1  Terraform failed (its message is shown), or no terraform/tofu binary
      2  bad input: the config has errors (nothing was synthesized or planned)
      130  interrupted with Ctrl-C (Terraform is stopped cleanly first)
    \b
    With --detailed-exitcode, as `terraform plan -detailed-exitcode`:
      0  success, no changes
      1  error
      2  success, changes present
    A config with errors also exits 2 then: a pipeline that acts on the codes
    should run `fastscale validate` first, which exits 2 only for bad input.
    """
    checked = load_checked(config_file, as_json=as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("plan", checked, as_json, reporter)
        try:
            runner = cmd.prepare(terraform_bin, out)
            result = cmd.run("plan", runner.plan, detailed_exitcode=True)
        except KeyboardInterrupt:
            cmd.interrupted()
        reporter.close()
        cmd.summary.update(
            has_changes=result.has_changes,
            add=result.added,
            change=result.changed,
            destroy=result.destroyed,
            changes=cmd.changes,
        )
        if not as_json:
            print_change_summary(result, cmd.changes)
        cmd.finish(EXIT_BAD_INPUT if (detailed_exitcode and result.has_changes) else EXIT_OK, ok=True)


@click.command("deploy", epilog=ENV_HELP)
@config_argument
@auto_approve_option
@click.option("--no-wait", is_flag=True, help="Verify with one look instead of waiting for endpoints to be InService.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_WAIT_TIMEOUT,
    show_default=True,
    metavar="S",
    help="Seconds to wait for endpoints and inference components to settle before verifying.",
)
@terraform_bin_option
@out_option
@json_option
def deploy_command(
    config_file: str,
    auto_approve: bool,
    no_wait: bool,
    timeout: float,
    terraform_bin: str | None,
    out: str,
    as_json: bool,
) -> None:
    """Validate FILE, synthesize, apply with Terraform, then verify the live endpoints.

    Without --auto-approve the plan is shown and you are asked to confirm; what is applied is exactly
    the plan you saw. Without a terminal (CI) --auto-approve is required. After the apply, every
    endpoint, model, inference component, scaling policy and alarm is read back with boto3 and compared
    with FILE (waiting for them to become InService unless --no-wait), and a table of the checks is
    printed. With --json, progress events are JSON lines on stderr and the Terraform summary plus the
    verification report are printed as JSON on stdout.

    \b
    Exit codes:
      0  applied and every check matches the config
      1  Terraform failed (its message is shown; nothing is verified), a check
         differs, AWS could not be reached, no terraform/tofu binary, or the
         confirmation was declined
      2  bad input: the config has errors, or no --auto-approve without a terminal
         (nothing was synthesized, applied or asked of AWS)
      130  interrupted with Ctrl-C (Terraform is stopped cleanly first)
    """
    checked = load_checked(config_file, as_json=as_json)
    if not auto_approve:
        refuse_without_terminal("deploy", as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("deploy", checked, as_json, reporter)
        try:
            runner = cmd.prepare(terraform_bin, out)
            if auto_approve:
                applied = cmd.run("apply", runner.apply, auto_approve=True)
            else:
                plan_file = runner.workdir.resolve() / PLAN_FILE
                try:
                    plan = cmd.run("plan", runner.plan, detailed_exitcode=True, out=plan_file)
                    reporter.close()
                    if not as_json:
                        print_change_summary(plan, cmd.changes)
                    if plan.has_changes:
                        cmd.confirm("Apply these changes?")
                        applied = cmd.run("apply", runner.apply, plan_file=plan_file)
                    else:
                        applied = plan
                finally:
                    # A saved plan can hold sensitive values; it is only needed for this one apply.
                    plan_file.unlink(missing_ok=True)
            reporter.close()
            if not as_json:
                print_outputs(applied.outputs)
            report = cmd.verification(wait=not no_wait, timeout=timeout)
        except KeyboardInterrupt:
            cmd.interrupted()
        if not as_json:
            print_verification(report, "Live state after deploy")
        cmd.finish(EXIT_OK if report.ok else EXIT_FAILED)


@click.command("status", epilog=AWS_ENV_HELP)
@config_argument
@json_option
def status_command(config_file: str, as_json: bool) -> None:
    """Compare what is live in AWS with FILE, without changing anything.

    Reads every endpoint, model, inference component, scaling policy and alarm the config describes
    (one look, no waiting) and prints what is live and what differs. Terraform is not run. With
    --json, the verification report is printed as JSON on stdout.

    \b
    Exit codes:
      0  everything live matches the config
      1  something is missing or differs, or AWS could not be reached
      2  bad input: the config has errors (AWS was not called)
      130  interrupted with Ctrl-C
    """
    checked = load_checked(config_file, as_json=as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("status", checked, as_json, reporter)
        try:
            report = cmd.verification(wait=False, timeout=None)
        except KeyboardInterrupt:
            cmd.interrupted()
        if not as_json:
            print_verification(report, f"Live state of {checked.config.project} ({checked.config.region})")
        cmd.finish(EXIT_OK if report.ok else EXIT_FAILED)
