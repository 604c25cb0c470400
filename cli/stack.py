"""What the commands that work on a stack share: their options, and :class:`StackCommand`, one run's
bookkeeping (progress, the JSON summary, the exit code whatever happens), the stack's lock and plan files,
synthesis and the Terraform steps.

Every such command validates first: a config with errors exits 2 before anything is synthesized,
planned, applied or asked of AWS. Around this module: :mod:`.preflight` (what `plan` and `deploy` ask AWS
before Terraform plans), :mod:`.apply_flow` (the plan -> confirm -> apply flow of `deploy` and `destroy`,
the rollouts and the live verification), :mod:`.plan_view` (how a plan reads).

Everything a run reaches outside the process through (synthesis, Terraform, AWS clients, the live
verification, the saved plan's JSON, the prompt, the clock) is one :class:`~fastscale.cli.runtime.Runtime`,
handed to :class:`StackCommand` by the command (:func:`fastscale.cli.runtime.current`); tests hand in their own.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from fastscale.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    Checked,
    OutputPath,
    console,
    print_json,
    say,
)
from fastscale.cli.errors import explain, one_line
from fastscale.cli.output import escape as _esc
from fastscale.cli.preflight import carry_live_counts, check_adopted, check_names, quota_preflight
from fastscale.cli.progress import Reporter
from fastscale.cli.runtime import Runtime
from fastscale.infra.base.credentials import terraform_environment
from fastscale.infra.model.state import StateLayoutError
from fastscale.infra.terraform.outputs import OutputPathError
from fastscale.infra.terraform.plan_session import PlanChanged, StackLocked, StackLockError, lock_stack
from fastscale.infra.terraform.runner import TerraformError, find_binary
from fastscale.infra.terraform.workdir import defined_outputs

if TYPE_CHECKING:
    from fastscale.infra.terraform.drift import Drift
    from fastscale.infra.terraform.plan_cost import PlanCost
    from fastscale.infra.terraform.plan_session import SavedPlan, StackLock
    from fastscale.infra.terraform.rollout import PlanClassification
    from fastscale.infra.terraform.runner import TerraformEvent, TerraformResult, TerraformRunner
    from fastscale.infra.terraform.workdir import RunDirectory

#: Exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

ENV_HELP = """\b
Environment:
  FASTSCALE_TERRAFORM  terraform/tofu binary when --terraform-bin is not
                       given (else `terraform`, else `tofu`, on PATH)
  AWS_PROFILE, AWS_ACCESS_KEY_ID, ...
                       credentials, as for the AWS CLI
  TF_CLI_CONFIG_FILE, TF_PLUGIN_CACHE_DIR, TF_LOG
                       passed on to Terraform (TF_DATA_DIR is not:
                       Terraform keeps its data in a directory of
                       the run's own, removed when the run ends)
"""
AWS_ENV_HELP = """\b
Environment:
  AWS_PROFILE, AWS_ACCESS_KEY_ID, ...
                       credentials, as for the AWS CLI
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
    type=OutputPath(file_okay=False),
    help="Directory the Terraform stack is synthesized into.",
)
auto_approve_option = click.option(
    "--auto-approve",
    is_flag=True,
    help="Do not ask for confirmation (required without a terminal, e.g. in CI).",
)


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
        "import": result.imported,
        "diagnostics": [asdict(d) for d in result.diagnostics],
        "outputs": result.outputs,
    }


class StackCommand:
    """One run of a command that works on the stack: reports progress, collects the JSON summary, and
    ends the process with the right exit code whatever happens (failure, Ctrl-C, success)."""

    def __init__(self, command: str, checked: Checked, as_json: bool, reporter: Reporter, runtime: Runtime):
        self.command = command
        self.runtime = runtime
        self.checked = checked
        self.config = checked.config
        self.stack = checked.stack  # the config resolved once (infra.model.resolved) for the AWS readers
        self.as_json = as_json
        self.reporter = reporter
        self.runner: TerraformRunner | None = None
        self.changes: list[dict[str, str | None]] = []
        #: The last saved plan's changes, classified by their effect on traffic (plan and deploy).
        self.classification: PlanClassification | None = None
        #: What Terraform reported as changed outside it, sorted out (plan and deploy; infra.terraform.drift).
        self.drift: list[Drift] = []
        #: The stack's endpoints priced before and after the last saved plan (plan and deploy).
        self.cost: PlanCost | None = None
        #: Called with every Terraform event after the reporter (e.g. to follow a rollout while it applies).
        self.event_hooks: list[Callable[[TerraformEvent], None]] = []
        self.follower: Any = None  # infra.aws.rollout.RolloutFollower while a deploy rolls something out
        self._clients: Any = None  # :meth:`clients`, once built
        #: The stack's lock (infra.terraform.plan_session), held from before synthesis until the apply or destroy ended.
        self.lock: StackLock | None = None
        #: The outputs the synthesized stack defines: the only ones reported.
        self.stack_outputs: frozenset[str] = frozenset()
        #: Stacks whose resources the command line hands over to this one (--take-over-from): never from the config.
        self.take_over: tuple[str, ...] = ()
        self.summary: dict[str, Any] = {"command": command, "file": checked.source, "ok": False}
        if self.config.endpoint_url:  # an emulator run must never read as a real one, in JSON either
            self.summary["endpoint_url"] = self.config.endpoint_url

    # -- output -------------------------------------------------------------------------------------

    def finish(self, code: int, ok: bool | None = None) -> NoReturn:
        """End the command: the JSON summary (with --json) and the exit code."""
        self.release_lock()
        self.reporter.close()
        self.summary["ok"] = code == EXIT_OK if ok is None else ok
        if self.as_json:
            self.summary["exit_code"] = code
            print_json(self.summary)
        sys.exit(code)

    def fail(self, message: str, code: int = EXIT_FAILED) -> NoReturn:
        message = one_line(message)
        self.reporter.close()
        self.summary["error"] = message
        if not self.as_json:
            say(f"[bold red]error:[/] {_esc(message)}", stderr=True)
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
        self.release_lock()
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
            self.summary["terraform"] = terraform_summary(self.only_stack_outputs(last))
        else:
            message = f"Interrupted: fastscale {self.command} was stopped; Terraform was not running."
        self.summary["interrupted"] = True
        self.summary["error"] = message
        if self.as_json:
            self.summary["exit_code"] = EXIT_INTERRUPTED
            print_json(self.summary)
        else:
            say(f"[bold yellow]{_esc(message)}[/]", stderr=True)
        sys.exit(EXIT_INTERRUPTED)

    # -- steps --------------------------------------------------------------------------------------

    def only_stack_outputs(self, result: TerraformResult) -> TerraformResult:
        """``result`` without any output the synthesized stack does not define: only those are ever reported (in
        the summary, on stdout, to the rollout follower)."""
        result.outputs = {name: value for name, value in result.outputs.items() if name in self.stack_outputs}
        return result

    def on_event(self, event: TerraformEvent) -> None:
        if event.kind == "planned_change" and event.address:
            change: dict[str, str | None] = {"address": event.address, "action": event.action}
            if event.importing is not None:
                change["importing"] = event.importing  # the live resource's import ID
            self.changes.append(change)
        self.reporter.terraform_event(event)
        for hook in self.event_hooks:
            hook(event)

    def prepare(self, terraform_bin: str | None, out: str) -> TerraformRunner:
        """Find the binary, take the stack's lock, check quotas (plan, deploy), synthesize, ``terraform
        init``. Exits 1 on any failure (the lock held by another run included), 2 when over quota."""
        try:
            binary = find_binary(terraform_bin)
        except TerraformError as exc:
            self.fail(str(exc))
        self.summary["terraform_binary"] = binary
        self.take_lock(out)
        if self.command in ("plan", "deploy"):
            quota_preflight(self)

        self.reporter.step("synth", f"into {out}")

        try:
            synth = self.runtime.synthesize(self.stack, out)
        except StateLayoutError as exc:
            self.fail(str(exc), EXIT_BAD_INPUT)
        except Exception as exc:
            message, code = explain(exc)
            self.fail(f"synthesis failed: {message}", code)
        stack_dir = Path(synth.stack_dir)
        self.summary["stack_dir"] = str(stack_dir)

        try:
            # Terraform runs in a directory of this run's own, holding only what it wrote (infra.terraform.workdir).
            # An emulator target reaches Terraform through the SDK's own variable (AWS_ENDPOINT_URL), so no call
            # (a provider's internal lookup included) can slip through to real AWS; the run directory's copy of the
            # stack then leaves out the provider's `endpoints` block, which names the same URL and costs seconds
            # of CPU per command (infra.terraform.workdir.without_emulator_endpoints). The environment carries the
            # dummy credentials, with every other AWS setting removed, unless the command line said
            # --send-credentials-to-endpoint-url.
            run_directory = self.open_run_directory(self.stack.endpoint_url)
            self.stack_outputs = defined_outputs(run_directory.document)
            env = {**run_directory.env,
                   **terraform_environment(self.stack.endpoint_url, self.stack.sends_credentials_to_endpoint)}
            self.runner = self.runtime.terraform(binary, run_directory.path, on_event=self.on_event, env=env)
        except TerraformError as exc:
            self.fail(str(exc))
        if self.command in ("plan", "deploy"):
            # After the local checks (binary, --out, synthesis), before Terraform runs.
            check_adopted(self, check_names(self))
            carry_live_counts(self, run_directory)
        self.run("init", self.runner.init)
        return self.runner

    def run(self, step: str, call: Any, *args: Any, fatal: bool = True, **kwargs: Any) -> TerraformResult:
        """One Terraform operation, shown as ``step``. A failure shows Terraform's diagnostics and exits 1,
        unless ``fatal`` is False (the caller goes on, e.g. to list what a failed destroy left)."""
        self.reporter.operation = step
        self.reporter.step(step)
        try:
            result = call(*args, **kwargs)
        except TerraformError as exc:
            self.fail(str(exc))
        self.summary["terraform"] = terraform_summary(self.only_stack_outputs(result))
        self.show_diagnostics(result)
        if not result.ok and fatal:
            self.fail(self.failure_message(step, result))
        return result

    def sweep_command(self) -> str:
        """The command line that deletes what this stack left (see `fastscale sweep`), ready to paste."""
        import shlex

        target = f" --endpoint-url {shlex.quote(self.config.endpoint_url)}" if self.config.endpoint_url else ""
        return f"fastscale sweep {shlex.quote(self.checked.source)}{target} --auto-approve"

    def failure_message(self, step: str, result: TerraformResult) -> str:
        """Why a Terraform step failed, naming the resources it failed on and the command that recovers.

        A resource whose create failed half-way (say a scalable target created, then its tags unreadable)
        stays in Terraform's state; when Terraform then cannot read it back, every plan fails on it, and so
        do deploy and destroy alike. `fastscale sweep` does not need Terraform: it deletes what the stack's
        tags prove its own, after which Terraform's refresh finds the resource gone and drops it."""
        head = f"terraform {step} failed (exit code {result.returncode})"
        failed = result.failed_resources
        self.summary["failed_resources"] = failed
        if not failed:
            return head
        named = ", ".join(failed)
        where = f"the emulator at {self.config.endpoint_url}" if self.config.endpoint_url else "AWS"
        recover = (f"`{self.sweep_command()}` deletes what the stack left in {where} (only what its tags prove "
                   "its own); Terraform then finds it gone, and deploy and destroy run again")
        if step == "apply":
            return (f"{head} at {named}: a create that failed half-way stays in Terraform's state. Fix the cause "
                    f"above and deploy again; if Terraform then cannot read it back, {recover}.")
        self.summary["recover_with"] = self.sweep_command()
        if step == "plan":
            return (f"{head}: Terraform cannot read {named} back from {where}, so neither deploy nor destroy can "
                    f"plan past it. To recover: {recover}. On a live stack that deletes its endpoints too: to keep "
                    "them, fix the cause above and run this command again.")
        return f"{head} at {named}. To recover: {recover}."

    def confirm(self, question: str) -> None:
        """Ask; anything but a yes ends the command with exit 1 and nothing changed: a "no", an empty
        answer (the default is No) or the end of input. Ctrl-C at the prompt is an interrupt (exit 130)."""
        self.reporter.close()
        try:
            answer = self.runtime.confirm(question)
        except click.Abort as exc:  # click turns both EOF and Ctrl-C at its prompt into Abort
            if isinstance(exc.__context__, KeyboardInterrupt):
                raise KeyboardInterrupt from None
            self.fail("cancelled: no answer (end of input): nothing was changed.")
        if not answer:
            self.fail("cancelled: nothing was changed.")

    # -- the stack's lock and the saved plan (all of it in infra.terraform.plan_session) -----------------------

    def take_lock(self, out: str) -> None:
        """Take the stack's lock before anything is synthesized or asked of AWS: a second run on the stack
        ends here with exit 1, naming the run that holds it. A lock whose run ended without releasing it
        is taken over, with a notice. Taken once: a second call while it is held does nothing."""
        if self.lock is not None and self.lock.held:
            return

        try:
            self.lock = lock_stack(self.stack, out, self.command)
        except (StateLayoutError, OutputPathError) as exc:
            self.fail(str(exc), EXIT_BAD_INPUT)
        except StackLocked as exc:
            self.summary["locked_by"] = exc.holder.to_dict() if exc.holder is not None else None
            self.fail(str(exc))
        except StackLockError as exc:
            self.fail(str(exc))
        self.summary["lock"] = str(self.lock.path)
        previous = self.lock.previous
        if previous is not None:
            self.summary["lock_taken_over"] = previous.to_dict()
            left = [p.name for p in (*self.lock.removed_plans, *self.lock.removed_run_directories)]
            removed = f"; removed the plan file(s) and Terraform directory it left: {', '.join(left)}" if left else ""
            self.reporter.note(f"notice: took over the lock of {previous.describe()}, which ended without "
                               f"releasing it ({self.lock.path}){removed}", style="yellow")

    def release_lock(self) -> None:
        """Remove this run's Terraform directory and release the stack's lock."""
        if self.lock is not None:
            self.lock.release()

    def open_run_directory(self, endpoint_url: str | None = None) -> RunDirectory:
        """This run's own Terraform working directory (under the stack's lock; removed with it)."""
        assert self.lock is not None, "prepare() takes the lock before Terraform's directory is made"
        return self.lock.open_run_directory(endpoint_url)

    def new_plan(self) -> SavedPlan:
        """A plan file of this run only (unique name, owner-only), under the stack's lock."""
        assert self.lock is not None, "prepare() takes the lock before anything is planned"
        return self.lock.new_plan()

    def record_shown_plan(self, plan: SavedPlan) -> None:
        """Right after Terraform wrote the plan, before it is shown: record its SHA-256."""
        try:
            plan.seal()
        except PlanChanged as exc:
            self.fail(str(exc))

    def refuse_changed_plan(self, plan: SavedPlan) -> None:
        """Just before the apply: the plan file must still be the one shown, else exit 1, nothing applied."""
        try:
            plan.verify()
        except PlanChanged as exc:
            self.fail(str(exc))

    def clients(self) -> Any:
        """The AWS clients of this run (``Runtime.aws_clients`` for the stack), built once and shared by every
        step: each new set starts a botocore session, and SageMaker's service model alone takes about 0.15 s of
        CPU to load into one."""
        if self._clients is None:
            self._clients = self.runtime.aws_clients(self.stack)
        return self._clients

    def take_inventory(self) -> Any:
        """Everything AWS holds under the stack's names and tags (``infra.aws.inventory``)."""
        from fastscale.infra.aws.inventory import take_inventory  # lazy: boto3, loaded only when this runs

        return take_inventory(self.stack, clients=self.clients())


def refuse_without_terminal(command: str, as_json: bool, runtime: Runtime) -> None:
    """A prompt nobody can answer must not hang a pipeline or be taken as a yes: refuse up front."""
    if runtime.is_interactive():
        return
    message = (
        f"fastscale {command} needs confirmation, and there is no terminal to ask: pass --auto-approve "
        "to run without asking (as in CI). Nothing was done."
    )
    if as_json:
        print_json({"command": command, "ok": False, "error": message, "exit_code": EXIT_BAD_INPUT})
    else:
        say(f"[bold red]error:[/] {_esc(message)}", stderr=True)
    sys.exit(EXIT_BAD_INPUT)

