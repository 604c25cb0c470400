"""`fastscale plan`, `fastscale deploy` and `fastscale status`.

The steps after validation are the ones a person would run by hand — synthesize, then ``terraform init``
/ ``plan`` / ``apply`` with the real binary — followed by what Terraform cannot tell: whether the
endpoints are really live and configured as the file says. What they share with `destroy` is in
:mod:`fastscale.cli.stack` (options, one run of a stack command) and :mod:`fastscale.cli.apply_flow` (the
plan -> confirm -> apply flow, rollouts, the live verification); how a plan reads, in :mod:`fastscale.cli.plan_view`.
"""

from __future__ import annotations

from typing import Any

import click

from fastscale.cli import runtime
from fastscale.cli.apply_flow import (
    follow_rollouts,
    plan_confirm_apply,
    read_plan,
    refuse_takeover,
    rollout_outcomes,
    verification,
)
from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    config_argument,
    console,
    endpoint_url_option,
    json_option,
    load_checked,
    print_table,
    take_over_option,
)
from fastscale.cli.output import escape
from fastscale.cli.plan_view import print_change_summary, print_outputs
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

#: Default seconds `deploy` waits for endpoints and components to become InService before verifying.
DEFAULT_WAIT_TIMEOUT = 3600


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
        row = ["[green]✓[/]" if c.ok else "[bold red]✗[/]", escape(c.resource), escape(c.check), escape(c.actual or "")]
        if show_expected:
            row.append("" if c.ok else escape(c.expected or ""))
        if show_detail:
            row.append(escape(c.detail or ""))
        table.add_row(*row)
    print_table(table, lead=3)
    failures = [c for c in report.checks if not c.ok]
    if failures:
        out.print(f"[bold red]✗ {len(failures)} of {len(report.checks)} checks differ from the config.[/]")
    else:
        out.print(f"[bold green]✓ all {len(report.checks)} checks match the config.[/]")


# --------------------------------------------------------------------------------------------- commands


@click.command("plan", epilog=ENV_HELP)
@config_argument
@click.option(
    "--detailed-exitcode",
    is_flag=True,
    help="Exit 2 when the plan has changes, 0 when it has none (as terraform plan -detailed-exitcode).",
)
@take_over_option
@terraform_bin_option
@out_option
@json_option
@endpoint_url_option
def plan_command(config_file: str, detailed_exitcode: bool, take_over: tuple[str, ...], terraform_bin: str | None, out: str,
                 as_json: bool) -> None:
    """Validate FILE, synthesize the stack and show what `deploy` would change.

    First reads the account's Service Quotas ("<instance type> for endpoint usage") and refuses a config
    whose maximum instances of a type, summed over its endpoints, exceed the quota, and checks that every
    name the stack creates is free or already this stack's (by its tags; SageMaker names ignore case).
    Then runs `terraform init` and `terraform plan` on the synthesized stack, and reads the plan
    back (`terraform show -json`) to say what each change does to a live stack: in place (tags, scaling
    policies, alarms), rolling or blue/green (a component's new model or an endpoint's new configuration,
    which SageMaker rolls out while serving; with the expected duration), replace (something that serves
    no traffic itself), or replace with downtime (an endpoint or component deleted and created again,
    named with the attribute that forces it; `deploy` refuses it without --allow-downtime). When it has
    changes, the plan ends with the monthly on-demand cost of every endpoint before the change (Terraform's
    state) and after it, at min capacity, on `estimate`'s typical day and at max capacity, and what the
    change adds or saves: instance compute at the catalog's prices of its Region, with their date (no
    storage, data transfer or CloudWatch); "price unknown" where the catalog has no price. Nothing in
    AWS is changed. Like `deploy` and `destroy` it holds the stack's lock (FILE's stack directory under
    --out, `fastscale.lock`) from before synthesis until the plan is read: while another run holds it,
    it exits 1 naming that run. Every change of an ownership tag (`fastscale:stack`, `fastscale:region`,
    `managed-by`) on a resource that exists is shown as `ownership: <tag> <from> -> <to> on <address>`.
    Progress goes to stderr; with --json, progress events are JSON lines on
    stderr and a summary object (counts, planned changes, their classification, the cost, diagnostics) is
    printed on stdout.

    Terraform runs in a directory of the run's own inside the stack directory (the stack's JSON, the
    cut-over variables, Terraform's data directory and lock file, the saved plan), removed when the run
    ends: nothing else in the stack directory is read. Files there that Terraform would otherwise read
    (*.tf, *.tf.json, overrides, *.tfvars, terraform.d) are refused with exit 2, each named.

    \b
    Exit codes:
      0  the plan succeeded (with or without changes)
      1  Terraform failed (its message is shown), synthesis failed (no CDK
         engine installed), AWS failed, no usable terraform/tofu binary
         (missing, older than 1.2, or not answering `version` within 20 s),
         or another run holds the stack's lock (named; nothing was
         synthesized or planned)
      2  bad input: the config has errors, or --out is inside .git, not
         writable or holds a symbolic link, or the stack directory holds files
         Terraform would read that fastscale did not write (each named), or
         more maximum instances of a type than the account's Service Quotas
         allow (nothing was synthesized or planned); or a name the stack
         creates belongs to another stack or was made by hand, or an adopted
         resource belongs to another stack or is used by another endpoint
         (Terraform did not run, nothing was planned); or the plan re-tags
         another stack's resource (shown as `ownership: fastscale:stack a -> b
         on <address>`) and --take-over-from does not name that stack
      130  interrupted with Ctrl-C (Terraform is stopped cleanly first)
    \b
    With --detailed-exitcode, as `terraform plan -detailed-exitcode`:
      0  success, no changes
      1  error
      2  success, changes present
    A config with errors or a name clash also exits 2 then: a pipeline that
    acts on the codes should run `fastscale validate` first.
    """
    checked = load_checked(config_file, as_json=as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("plan", checked, as_json, reporter, runtime.current())
        cmd.take_over = take_over
        try:
            runner = cmd.prepare(terraform_bin, out)
            saved = cmd.new_plan()
            try:
                result = cmd.run("plan", runner.plan, detailed_exitcode=True, out=saved.path)
                classification = read_plan(cmd, runner, saved.path, result)
            finally:
                saved.discard()  # it can hold sensitive values, and nothing applies it
                cmd.release_lock()
        except KeyboardInterrupt:
            cmd.interrupted()
        reporter.close()
        cmd.summary.update(
            has_changes=result.has_changes,
            add=result.added,
            change=result.changed,
            destroy=result.destroyed,
            imported=result.imported,
            changes=cmd.changes,
            classification=classification.to_dict(),
        )
        if not as_json:
            print_change_summary(result, cmd.changes, classification, cmd.drift, cmd.cost)
        refuse_takeover(cmd, classification)
        cmd.finish(EXIT_BAD_INPUT if (detailed_exitcode and result.has_changes) else EXIT_OK, ok=True)


@click.command("deploy", epilog=ENV_HELP)
@config_argument
@auto_approve_option
@click.option(
    "--allow-downtime",
    is_flag=True,
    help="Apply a plan that replaces a live endpoint or inference component (requests to it fail until the "
    "new one is in service). Without it such a plan stops the deploy with exit 2, nothing applied.",
)
@click.option("--no-wait", is_flag=True, help="Take one look at rollouts and endpoints instead of waiting for them to settle.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=DEFAULT_WAIT_TIMEOUT,
    show_default=True,
    metavar="S",
    help="Seconds to wait for rollouts to finish, and again for endpoints and inference components to "
    "settle before verifying.",
)
@take_over_option
@terraform_bin_option
@out_option
@json_option
@endpoint_url_option
def deploy_command(
    config_file: str,
    auto_approve: bool,
    allow_downtime: bool,
    no_wait: bool,
    timeout: float,
    take_over: tuple[str, ...],
    terraform_bin: str | None,
    out: str,
    as_json: bool,
) -> None:
    """Validate FILE, check instance quotas, synthesize, apply with Terraform, then verify the live endpoints.

    Before Terraform runs, AWS is asked whether every name the stack creates is free or already this
    stack's (by its tags; SageMaker names ignore case): a name another project or a person already
    uses stops the deploy with exit 2, nothing applied; so does an adopted resource another stack's tag
    claims (unless --take-over-from names that stack) or another endpoint uses. Terraform then plans into a saved plan, which is
    classified and priced as `fastscale plan` shows it: a plan that replaces a live endpoint or inference component
    (downtime) stops here with exit 2, nothing applied, unless --allow-downtime; creating new ones is not
    downtime. A replacement that would be created under the name its live original still holds (a model
    changed outside the stack, say) stops here with exit 1, nothing applied: AWS refuses the second name. Without --auto-approve the plan is shown and you are asked to confirm (the default is No:
    an empty answer or the end of input applies nothing); what is applied is exactly the plan you saw.
    Without a terminal (CI) --auto-approve is required.

    One run at a time per stack: from before synthesis until Terraform's apply has ended, the deploy
    holds the stack's lock, `fastscale.lock` in the stack directory (`cdktf.out/stacks/<project>/` by
    default, see --out), and its plan is a file of its own
    (`fastscale-*.tfplan`, owner-only, removed when the run ends) whose SHA-256 is checked just before
    the apply. As for `plan`, Terraform runs in a directory of the run's own and reads nothing else of the
    stack directory; files there it would otherwise read are refused (exit 2). A plan, deploy or destroy of the same stack started meanwhile exits 1 at once, naming the
    run that holds the lock (command, pid, host, since when); a lock left by a run that ended without
    releasing it is taken over with a notice.

    An endpoint or component that the plan rolls out (rolling or blue/green) is followed while Terraform
    applies (its status and deployment stage from SageMaker) and until it settles (bounded by --timeout):
    a rollback ends the deploy with exit 1, naming the rollback alarm that fired. After the apply, every
    endpoint, model, inference component, scaling policy and alarm is read back with boto3 and compared
    with FILE (waiting for them to become InService unless --no-wait), and a table of the checks is
    printed. With --json, progress events are JSON lines on stderr and the Terraform summary, the plan's
    classification and cost, the rollouts and the verification report are printed as JSON on stdout.

    \b
    Exit codes:
      0  applied, every rollout finished, and every check matches the config
      1  Terraform failed (its message is shown; nothing is verified), a
         rollout was rolled back (the alarm is named) or failed or was still
         going at --timeout, a check differs, AWS failed (throttled after 5
         attempts, a server error, no credentials, unreachable: one `error:`
         line names the call), no usable terraform/tofu binary, the
         confirmation was declined or not given, another run holds the stack's
         lock (named; nothing was synthesized or applied), the saved plan
         changed after it was shown, or the plan creates a replacement under
         the name its live original holds (nothing was applied in both)
      2  bad input: the config has errors, no --auto-approve without a terminal,
         an unusable --out, files in the stack directory Terraform would read
         that fastscale did not write (each named), or more maximum instances
         of a type than the account's Service Quotas allow (nothing was
         synthesized or applied);
         a name the stack creates is taken by another stack or by hand, or an
         adopted resource belongs to another stack or is used by another
         endpoint (Terraform did not run, nothing was applied); or the plan
         replaces a live endpoint or inference component and --allow-downtime
         was not given, or re-tags another stack's resource and
         --take-over-from does not name that stack (nothing was applied)
      130  interrupted with Ctrl-C (Terraform is stopped cleanly first)
    """
    checked = load_checked(config_file, as_json=as_json)
    rt = runtime.current()
    if not auto_approve:
        refuse_without_terminal("deploy", as_json, rt)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("deploy", checked, as_json, reporter, rt)
        cmd.take_over = take_over
        try:
            runner = cmd.prepare(terraform_bin, out)
            applied = plan_confirm_apply(cmd, runner, auto_approve=auto_approve, destroy=False,
                                         allow_downtime=allow_downtime,
                                         before_apply=lambda found: follow_rollouts(cmd, found))
            reporter.close()
            outcomes = rollout_outcomes(cmd, 0.0 if (no_wait or not applied.ok) else timeout, applied.outputs)
            # --no-wait: a rollout still going is reported, not failed (Terraform itself waited for the update).
            failed = [o.message() for o in outcomes if not o.ok and not (no_wait and o.outcome == "timed_out")]
            if not applied.ok:
                cmd.fail("; ".join([cmd.failure_message("apply", applied), *failed]))
            if failed:
                cmd.fail("the deployment did not finish: " + "; ".join(failed)
                         + ". Terraform's state may record the new version: fix the cause, then deploy again.")
            if not as_json:
                print_outputs(applied.outputs)
            report = verification(cmd, wait=not no_wait, timeout=timeout)
        except KeyboardInterrupt:
            cmd.interrupted()
        if not as_json:
            print_verification(report, "Live state after deploy")
        cmd.finish(EXIT_OK if report.ok else EXIT_FAILED)


@click.command("status", epilog=AWS_ENV_HELP)
@config_argument
@json_option
@endpoint_url_option
def status_command(config_file: str, as_json: bool) -> None:
    """Compare what is live in AWS with FILE, without changing anything.

    Reads every endpoint, model, inference component, scaling policy and alarm the config describes
    (one look, no waiting) and prints what is live and what differs. Terraform is not run. With
    --json, the verification report is printed as JSON on stdout.

    \b
    Exit codes:
      0  everything live matches the config
      1  something is missing or differs, or AWS failed (throttled after 5
         attempts, a server error, no credentials, unreachable: one `error:`
         line names the call and the resource)
      2  bad input: the config has errors (AWS was not called)
      130  interrupted with Ctrl-C
    """
    checked = load_checked(config_file, as_json=as_json)
    with Reporter(as_json=as_json) as reporter:
        cmd = StackCommand("status", checked, as_json, reporter, runtime.current())
        try:
            report = verification(cmd, wait=False, timeout=None)
        except KeyboardInterrupt:
            cmd.interrupted()
        if not as_json:
            print_verification(report, f"Live state of {checked.config.project} ({checked.config.region})")
        cmd.finish(EXIT_OK if report.ok else EXIT_FAILED)
