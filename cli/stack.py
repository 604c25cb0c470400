"""What the commands that work on a stack share: seams, options, one run's bookkeeping, and the single
plan -> confirm -> apply flow that `deploy` and `destroy` both go through.

Every such command validates first: a config with errors exits 2 before anything is synthesized,
planned, applied or asked of AWS.

Everything a run reaches outside the process through (synthesis, AWS clients, the live verification, the
saved plan's JSON, the prompt, the clock) is one :class:`~fastscale.cli.runtime.Runtime`, handed to
:class:`StackCommand` by the command (:func:`fastscale.cli.runtime.current`); tests hand in their own.
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
    UserPath,
    console,
    print_json,
    say,
)
from fastscale.cli.errors import explain, one_line
from fastscale.cli.progress import Reporter
from fastscale.cli.runtime import Runtime
from fastscale.infra.model import cutover
from fastscale.infra.model.naming import endpoint_name
from fastscale.infra.model.state import StateLayoutError
from fastscale.infra.rules import has_errors
from fastscale.infra.terraform.outputs import OutputPathError
from fastscale.infra.terraform.plan_session import PlanChanged, StackLocked, StackLockError, lock_stack
from fastscale.infra.terraform.rollout import TYPE_LABELS, PlanFormatError, classify_plan, rollout_inputs
from fastscale.infra.terraform.runner import TerraformError, TerraformRunner, find_binary

if TYPE_CHECKING:
    from fastscale.infra.terraform.plan_session import SavedPlan, StackLock
    from fastscale.infra.terraform.rollout import ClassifiedChange, PlanClassification
    from fastscale.infra.terraform.runner import TerraformEvent, TerraformResult, TerraformRunner

#: Exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

ENV_HELP = """\b
Environment:
  FASTSCALE_TERRAFORM  terraform/tofu binary when --terraform-bin is not
                       given (else `terraform`, else `tofu`, on PATH)
  AWS_PROFILE, AWS_ACCESS_KEY_ID, ...
                       credentials, as for the AWS CLI
  TF_CLI_CONFIG_FILE, TF_DATA_DIR, TF_PLUGIN_CACHE_DIR, TF_LOG
                       passed on to Terraform
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
    type=UserPath(file_okay=False),
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
        self.as_json = as_json
        self.reporter = reporter
        self.runner: TerraformRunner | None = None
        self.changes: list[dict[str, str | None]] = []
        #: The last saved plan's changes, classified by their effect on traffic (plan and deploy).
        self.classification: PlanClassification | None = None
        #: Called with every Terraform event after the reporter (e.g. to follow a rollout while it applies).
        self.event_hooks: list[Callable[[TerraformEvent], None]] = []
        self.follower: Any = None  # infra.aws.rollout.RolloutFollower while a deploy rolls something out
        #: The stack's lock (infra.terraform.plan_session), held from before synthesis until the apply or destroy ended.
        self.lock: StackLock | None = None
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
            self.summary["terraform"] = terraform_summary(last)
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

    def on_event(self, event: TerraformEvent) -> None:
        if event.kind == "planned_change" and event.address:
            self.changes.append({"address": event.address, "action": event.action})
        self.reporter.terraform_event(event)
        for hook in self.event_hooks:
            hook(event)

    def classify(self, runner: TerraformRunner, plan_file: Path) -> PlanClassification:
        """Read the saved plan back from Terraform and classify every change by its effect on traffic
        (in place, rolling, blue/green, replacement with downtime), with expected rollout durations."""
        try:
            classification = classify_plan(self.runtime.plan_document(runner, plan_file),
                                           rollout_inputs(self.config, live=self.live_counts()))
        except (TerraformError, PlanFormatError) as exc:
            self.fail(f"cannot read the saved plan back: {exc}")
        self.classification = classification
        self.summary["classification"] = classification.to_dict()
        return classification

    def live_counts(self) -> dict[str, int | None]:
        """The live instance counts read before the plan (endpoint name -> count), for the rollout inputs."""
        return {name: found["live"] for name, found in (self.summary.get("cutover") or {}).items()}

    def refuse_downtime(self, classification: PlanClassification, allow_downtime: bool) -> None:
        """A plan that replaces a live endpoint or inference component ends the command with exit 2,
        nothing applied, unless the downtime is accepted with --allow-downtime."""
        found = classification.downtime
        if not found:
            return
        self.summary["downtime_allowed"] = allow_downtime
        if allow_downtime:
            if not self.as_json:
                self.reporter.close()
                say(f"[yellow]warning:[/] --allow-downtime: {len(found)} live endpoint(s) or component(s) will be "
                    "replaced; requests to them fail until the new ones are in service.", stderr=True, indent="  ")
            return
        named = "; ".join(f"{c.address} ({', '.join(c.replace_paths) or c.reason})" for c in found)
        self.fail(
            f"this plan replaces {len(found)} live endpoint(s) or inference component(s), and requests fail until "
            f"the new ones are in service: {named}. Nothing was applied. "
            "To avoid the downtime follow the advice the plan gives for each (`avoid` in --json); to accept it, pass --allow-downtime.",
            EXIT_BAD_INPUT,
        )

    def refuse_name_collisions(self, classification: PlanClassification) -> None:
        """A plan that would create a replacement under the name its live original still holds ends the command
        with exit 1, nothing applied: AWS refuses the create, so the apply would stop half-way."""
        found = classification.name_collisions
        if not found:
            return
        named = "; ".join(f"{c.address} as {c.collides_as} ({', '.join(c.replace_paths) or c.reason})" for c in found)
        self.fail(
            f"this plan replaces {len(found)} resource(s) by creating the new one under the name the live one still "
            f"holds, which AWS refuses, so the apply would stop half-way: {named}. Nothing was applied. fastscale "
            "names change with every setting that forces a replacement, so the live resource differs in what it "
            "did not write (changed outside this stack, or read back differently by the provider): see the listed "
            "attributes with `fastscale plan`, and put the live resource back as the config says."
        )

    def quota_preflight(self) -> None:
        """Service Quotas for endpoint usage against the config's maximum instances, before anything is
        synthesized: over quota ends the command with exit 2, nothing planned or applied. When the quotas
        cannot be read at all the command goes on with a warning (Terraform needs AWS anyway)."""
        from botocore.exceptions import BotoCoreError, ClientError

        from fastscale.infra.aws.clients import AwsError, translate_errors  # lazy: boto3, loaded only when this runs
        from fastscale.infra.aws.preflight import check_quotas  # lazy: boto3, loaded only when this runs

        self.reporter.step("quotas", "Service Quotas for endpoint usage")
        try:
            findings = translate_errors(check_quotas)(self.config, clients=self.runtime.quota_clients(self.config))
        except (AwsError, ClientError, BotoCoreError) as exc:
            findings = []
            self.summary["quota_check"] = f"not made: {exc}"
            if not self.as_json:
                self.reporter.close()
                console(stderr=True).print(f"[yellow]warning:[/] quotas not checked: {_esc(str(exc))}", highlight=False, soft_wrap=True)
        self.summary["quota_findings"] = [f.to_dict() for f in findings]
        if not self.as_json and findings:
            self.reporter.close()
            err = console(stderr=True)
            for f in findings:
                style = "red" if f.severity.value == "error" else "yellow"
                err.print(f"[{style}]{f.severity.value}:[/] {f.code} {_esc(f.path)}: {_esc(f.message)} (fix: {_esc(f.hint)})",
                          highlight=False, soft_wrap=True)
        if has_errors(findings):
            self.fail("over the account's instance quota: nothing was synthesized, planned or applied.", EXIT_BAD_INPUT)

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
            self.quota_preflight()

        self.reporter.step("synth", f"into {out}")

        try:
            synth = self.runtime.synthesize(self.config, out)
        except StateLayoutError as exc:
            self.fail(str(exc), EXIT_BAD_INPUT)
        except Exception as exc:
            message, code = explain(exc)
            self.fail(f"synthesis failed: {message}", code)
        stack_dir = Path(synth.stack_dir)
        self.summary["stack_dir"] = str(stack_dir)

        try:
            # An emulator target also reaches Terraform through the SDK's own variable, so a call the stack's
            # endpoints do not name (a provider's internal lookup) cannot slip through to real AWS.
            # Without credentials of its own in the environment, it gets the emulator's dummy ones.
            from fastscale.infra.aws.clients import emulator_credentials  # lazy: boto3, loaded only when this runs

            url = self.config.endpoint_url
            env = {"AWS_ENDPOINT_URL": url, **emulator_credentials(url)} if url else None
            self.runner = TerraformRunner(binary, stack_dir, on_event=self.on_event, env=env)
        except TerraformError as exc:
            self.fail(str(exc))
        if self.command in ("plan", "deploy"):
            self.check_names()  # after the local checks (binary, --out, synthesis), before Terraform runs
            self.carry_live_counts(stack_dir)
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
        self.summary["terraform"] = terraform_summary(result)
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
            self.lock = lock_stack(self.config, out, self.command)
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
            removed = f"; removed the plan file(s) it left: {', '.join(p.name for p in self.lock.removed_plans)}" \
                if self.lock.removed_plans else ""
            self.reporter.note(f"notice: took over the lock of {previous.describe()}, which ended without "
                               f"releasing it ({self.lock.path}){removed}", style="yellow")

    def release_lock(self) -> None:
        if self.lock is not None:
            self.lock.release()

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

    def take_inventory(self) -> Any:
        """Everything AWS holds under the stack's names and tags (``infra.aws.inventory``)."""
        from fastscale.infra.aws.inventory import take_inventory  # lazy: boto3, loaded only when this runs

        return take_inventory(self.config, clients=self.runtime.aws_clients(self.config))

    def check_names(self) -> None:
        """Before Terraform runs: every name the stack creates must be free or already this stack's.

        Two projects can produce the same names (`chat` + `prod-qwen3` and `chat-prod` + `qwen3`), and
        SageMaker compares names without regard to case. Terraform would fail half-way on a taken name, or
        take over a scalable target or alarm; so a clash stops the command with exit 2, nothing applied.
        """
        from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs

        self.reporter.step("names", "checking that every name the stack creates is free or already its own")
        try:
            inventory = self.take_inventory()
        except AwsError as exc:
            self.fail(f"cannot check that the stack's names are free: {exc}")
        self.reporter.close()
        clashes = inventory.name_clashes()
        if not clashes:
            return
        self.summary["name_clashes"] = [
            {"kind": r.kind, "name": r.name, "config_path": r.data.get("config_path", ""), "owner": r.ownership.reason} for r in clashes
        ]
        lines = [
            f"{r.kind} {r.name}" + (f" (from {r.data['config_path']})" if r.data.get("config_path") else "") + f": {r.ownership.reason}"
            for r in clashes
        ]
        self.fail(
            f"{len(clashes)} name(s) this stack would create already exist and are not its own:\n  "
            + "\n  ".join(lines)
            + "\nRename the project or the endpoints/components in the file (SageMaker names ignore case), "
            "or delete what is in the way if it is really yours. Nothing was planned or applied.",
            code=EXIT_BAD_INPUT,
        )

    def carry_live_counts(self, stack_dir: Path) -> None:
        """Before Terraform plans: each endpoint's live instance count, carried into the count a new endpoint
        configuration starts with (``infra.model.cutover``), in a tfvars file Terraform loads by itself. Read-only."""
        import json

        from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs
        from fastscale.infra.aws.cutover import live_instance_counts  # lazy: boto3, loaded only when this runs

        self.reporter.step("cut-over", "reading the endpoints' live instance counts")
        try:
            live = live_instance_counts(self.config, clients=self.runtime.aws_clients(self.config))
        except AwsError as exc:
            self.fail(f"cannot read the endpoints' live instance counts: {exc}")
        try:  # only the variables the stack declares (Terraform warns about any other value)
            declared = json.loads((stack_dir / "cdk.tf.json").read_text()).get("variable") or {}
        except (OSError, ValueError):
            declared = {}
        values = {k: v for k, v in cutover.tfvars(self.config, live).items() if k in declared}
        (stack_dir / cutover.TFVARS_FILE).write_text(json.dumps(values, indent=2, sort_keys=True) + "\n")
        self.summary["cutover"] = {
            endpoint_name(self.config.project, ep.name): {
                "live": live.get(endpoint_name(self.config.project, ep.name)),
                "initial": ep.instances.initial,
                "max": ep.instances.max,
                "starts_at": values.get(cutover.variable_name(ep), ep.instances.initial),
            }
            for ep in self.config.endpoints
        }

    def follow_rollouts(self, classification: PlanClassification) -> None:
        """Before the apply: follow every endpoint and component the plan rolls out, while Terraform applies
        (a look whenever Terraform reports one still in progress) and after (:meth:`rollout_outcomes`)."""
        from fastscale.infra.aws.rollout import (  # lazy: boto3, loaded only when this runs
            RolloutFollower,
            rollout_targets,
        )

        targets = rollout_targets(classification)
        if not targets:
            return
        self.follower = RolloutFollower(targets, self.runtime.now(), self.runtime.clients_for_rollouts(self.config), self.config.region,
                                        on_progress=self.reporter.wait_progress)
        self.event_hooks.append(self.follower.on_event)

    def rollout_outcomes(self, timeout: float, outputs: dict[str, Any]) -> list[Any]:
        """After the apply: wait (at most ``timeout`` s) for the rollouts to settle and judge each one:
        the new version in service, rolled back (and by which alarm), failed, or still going."""
        from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs
        from fastscale.infra.aws.rollout import (  # lazy: boto3, loaded only when this runs
            component_models,
            expected_versions,
        )

        if self.follower is None:
            return []
        self.reporter.step("rollout", "waiting for SageMaker to finish the rollouts")
        try:
            outcomes: list[Any] = self.follower.finish(timeout, expected_versions(outputs, component_models(self.config)))
        except AwsError as exc:
            self.fail(f"cannot follow the rollout: {exc}")
        self.reporter.close()
        self.summary["rollout"] = [o.to_dict() for o in outcomes]
        if not self.as_json:
            for note in self.follower.notes:
                say(f"[yellow]warning:[/] {_esc(note)}", stderr=True, indent="  ")
            for o in outcomes:
                say(("[green]✓[/] " if o.ok else "[bold red]✗[/] ") + _esc(o.message()), indent="  ")
        return outcomes

    def verification(self, wait: bool, timeout: float | None) -> Any:
        from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs

        self.reporter.step("verify", "waiting for the endpoints to settle" if wait else "one look, no waiting")
        kwargs: dict[str, Any] = {"wait": wait, "on_progress": self.reporter.wait_progress}
        if timeout is not None:
            kwargs["timeout"] = timeout
        try:
            report = self.runtime.verify_live(self.config, clients=self.runtime.aws_clients(self.config), **kwargs)
        except AwsError as exc:
            self.fail(f"cannot verify the live state: {exc}")
        self.reporter.close()
        self.summary["verification"] = report.to_dict()
        return report


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


def plan_confirm_apply(
    cmd: StackCommand,
    runner: TerraformRunner,
    *,
    auto_approve: bool,
    destroy: bool,
    allow_downtime: bool = False,
    before_apply: Callable[[PlanClassification], None] | None = None,
) -> TerraformResult:
    """Apply (or destroy) the stack the one way both commands do it.

    A deploy always plans into a saved file first, reads it back (``terraform show -json``) and classifies
    every change: a replacement of a live endpoint or component stops it here (exit 2, nothing applied)
    unless ``allow_downtime``. Without ``auto_approve`` the plan is shown and confirmed; either way exactly
    the saved plan is applied, and a plan without changes applies nothing. ``before_apply`` gets the
    classification just before Terraform applies (deploy follows the rollouts from there). A destroy with
    ``auto_approve`` is a plain ``terraform destroy``.

    A failed apply ends the command (exit 1), unless ``before_apply`` is given: the caller then decides
    (it looks at the rollouts first). A failed destroy is returned, so the caller can still list what it
    left behind.

    The plan file is this run's own (:mod:`infra.terraform.plan_session`: a fresh name, owner-only, removed here);
    its SHA-256 is recorded before it is shown and checked just before the apply (exit 1 if it changed).
    The stack's lock, taken in :meth:`StackCommand.prepare`, is released here once the apply or destroy
    has ended, whichever way.
    """
    step = "destroy" if destroy else "apply"
    fatal = not destroy and before_apply is None
    if auto_approve and destroy:
        try:
            return cmd.run(step, runner.destroy, auto_approve=True, fatal=fatal)
        finally:
            cmd.release_lock()  # the destroy has ended: the next run on the stack may plan
    saved = cmd.new_plan()
    plan_file = saved.path
    try:
        plan = cmd.run("plan", runner.plan, detailed_exitcode=True, destroy=destroy, out=plan_file)
        cmd.record_shown_plan(saved)
        cmd.reporter.close()
        if not plan.has_changes:
            if not cmd.as_json:
                if destroy:
                    say("Terraform's state holds nothing to destroy.")
                else:
                    print_change_summary(plan, cmd.changes)
            return plan
        classification = None if destroy else cmd.classify(runner, plan_file)
        if not cmd.as_json:
            print_change_summary(plan, cmd.changes, classification)
        if classification is not None:
            cmd.refuse_name_collisions(classification)
            cmd.refuse_downtime(classification, allow_downtime)
        if not auto_approve:
            cmd.confirm("Destroy these resources?" if destroy else "Apply these changes?")
        if classification is not None and before_apply is not None:
            before_apply(classification)
        cmd.refuse_changed_plan(saved)
        return cmd.run(step, runner.apply, plan_file=plan_file, fatal=fatal)
    finally:
        # A saved plan can hold sensitive values; it is only needed for this one apply.
        saved.discard()
        # The apply or destroy has ended (or never will): the next run on the stack may plan.
        cmd.release_lock()


#: How each planned action is marked, as Terraform marks it in its own plan output.
_ACTION_MARKS = {"create": "+", "update": "~", "delete": "-", "replace": "-/+", "read": "<=", "move": "->"}
_ACTION_STYLES = {"create": "green", "update": "yellow", "delete": "red", "replace": "magenta"}


def print_change_summary(
    result: TerraformResult, changes: list[dict[str, str | None]], classification: PlanClassification | None = None
) -> None:
    """The plan as a result on stdout: one line per resource that would change, then the counts. (The
    progress stream on stderr leaves planned changes out, so a `plan > plan.txt` holds the whole plan.)

    With a classification, a change that is not a plain create or delete says what it does to traffic
    (in place, rolling, blue/green, replace, downtime), and the rollouts and replacements with downtime
    follow the counts, with the expected duration and what to do about the downtime."""
    out = console()
    if not result.has_changes:
        out.print("[bold green]No changes:[/] the deployed stack matches the config.", highlight=False)
        return
    found = {c.address: c for c in classification.changes} if classification is not None else {}
    for change in changes:
        action = change.get("action") or "?"
        address = change["address"] or ""
        style = _ACTION_STYLES.get(action, "")
        mark = f"{_ACTION_MARKS.get(action, '?'):>3} {action}"
        line = f"[{style}]{mark}[/] {_esc(address)}" if style else f"{mark} {_esc(address)}"
        kind = found[address].kind if address in found else None
        if kind is not None and kind.value not in ("create", "delete"):
            line += f"  [{_KIND_STYLES.get(kind.value, 'dim')}]({_esc(kind.label)})[/]"
        say(line, indent="      ")
    out.print(
        f"[bold]Plan:[/] {result.added} to add, {result.changed} to change, {result.destroyed} to destroy.",
        highlight=False,
    )
    if classification is None:
        return
    if classification.rollouts:
        say("[bold]Rollouts[/] (SageMaker keeps serving while it replaces the old version):")
        for c in classification.rollouts:
            what = f"{_type_label(c)} {c.name}" if c.name else c.address
            timing = f"about {_duration(c.duration.seconds)} ({c.duration.formula})" if c.duration else c.duration_note
            say(f"  {_esc(what)}: {_esc(c.strategy.describe() if c.strategy else c.kind.label)}; {_esc(timing)}", indent="    ")
            for note in c.notes:
                say(f"    {_esc(note)}", indent="      ")
        longest = classification.longest_rollout_seconds()
        if longest is not None and len(classification.rollouts) > 1:
            say(f"  Terraform applies them side by side: about {_duration(longest)} for the longest.", indent="    ")
    for c in classification.changes:
        if c.notice:
            say(f"[bold yellow]Note:[/] {_esc(c.notice)}.")
    if classification.downtime:
        print_downtime(classification.downtime)
    for c in classification.name_collisions:
        say(f"[bold red]Cannot apply:[/] {_esc(c.address)} would be created as {_esc(c.collides_as or '')} while the live one "
            f"still holds that name ({_esc(c.reason)}); AWS refuses that, so `fastscale deploy` stops before applying.")


def print_downtime(found: list[ClassifiedChange]) -> None:
    """Each replacement with downtime: what is replaced, why (Terraform's replace path), how to avoid it."""
    say("[bold red]Downtime[/] (replaced: requests fail until the new one is in service):")
    for c in found:
        what = f"{_type_label(c)} {c.name}" if c.name else c.address
        say(f"  {_esc(what)} ({_esc(c.address)}): {_esc(c.reason)}", indent="    ")
        if c.avoid:
            say(f"    to avoid it: {_esc(c.avoid)}", indent="      ")
    say("  `fastscale deploy` applies this only with --allow-downtime.", indent="    ")


_KIND_STYLES = {"replace_with_downtime": "bold red", "rolling": "cyan", "blue_green": "cyan", "in_place": "dim"}


def _type_label(change: ClassifiedChange) -> str:
    return TYPE_LABELS.get(change.type, change.type)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


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
