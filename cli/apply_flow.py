"""The one plan -> confirm -> apply flow that `deploy` and `destroy` both go through, and what `plan` and
`deploy` do around it: the saved plan read back and classified by its effect on traffic, the refusals of
a plan that would cause downtime or clash with a live name, the rollouts followed while Terraform applies,
and the live verification afterwards (`status` makes that one alone).

Each step takes the run's :class:`~fastscale.cli.stack.StackCommand`; what it reaches outside the process
through (the plan's JSON, the prompt, the clock, AWS) is the command's
:class:`~fastscale.cli.runtime.Runtime`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastscale.cli.common import EXIT_BAD_INPUT, say
from fastscale.cli.output import escape as _esc
from fastscale.cli.plan_view import print_change_summary
from fastscale.cli.preflight import live_uses
from fastscale.infra.model.naming import TAG_STACK
from fastscale.infra.terraform.destroy_plan import deleted_resources, keep_closure, targets
from fastscale.infra.terraform.drift import read_drift
from fastscale.infra.terraform.plan_cost import plan_cost
from fastscale.infra.terraform.rollout import PlanClassification, PlanFormatError, classify_plan, rollout_inputs
from fastscale.infra.terraform.runner import TerraformError

if TYPE_CHECKING:
    from pathlib import Path

    from fastscale.cli.stack import StackCommand
    from fastscale.infra.terraform.runner import TerraformResult, TerraformRunner


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

    Both always plan into a saved file first and read it back (``terraform show -json``). A deploy classifies
    every change: a replacement of a live endpoint or component stops it here (exit 2, nothing applied)
    unless ``allow_downtime``, and so does a re-tag of another stack's resource (unless --take-over-from
    names that stack). A destroy keeps out of the plan what is not this stack's to delete
    (:func:`keep_out_of_destroy`: what another stack's tag claims, and what a live resource outside the
    destroy still uses), planning again with every other resource as a target. Without ``auto_approve``
    the plan is shown and confirmed; either way exactly the saved plan is applied, and a plan without
    changes applies nothing. ``before_apply`` gets the classification just before Terraform applies
    (deploy follows the rollouts from there). A destroy's plan lists what it deletes before anything is.

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
    plans = [cmd.new_plan()]
    try:
        plan = cmd.run("plan", runner.plan, detailed_exitcode=True, destroy=destroy, out=plans[-1].path)
        cmd.summary["changes"] = cmd.changes
        if destroy and plan.has_changes:
            only = keep_out_of_destroy(cmd, runner, plans[-1].path)
            if only is not None:
                cmd.changes.clear()  # the plan shown is the one that keeps them
                plans.append(cmd.new_plan())
                if only:
                    plan = cmd.run("plan", runner.plan, detailed_exitcode=True, destroy=True, out=plans[-1].path,
                                   targets=only)
                else:
                    cmd.reporter.close()
                    if not cmd.as_json:
                        say("Nothing to destroy: every resource in Terraform's state is kept.")
                    return plan
        saved = plans[-1]
        plan_file = saved.path
        cmd.record_shown_plan(saved)
        cmd.reporter.close()
        if not plan.has_changes:
            if not destroy:
                read_plan(cmd, runner, plan_file, plan)
            if not cmd.as_json:
                if destroy:
                    say("Terraform's state holds nothing to destroy.")
                else:
                    print_change_summary(plan, cmd.changes, drift=cmd.drift)
            return plan
        classification = None if destroy else read_plan(cmd, runner, plan_file, plan)
        if not cmd.as_json:
            print_change_summary(plan, cmd.changes, classification, cmd.drift, cmd.cost)
        if classification is not None:
            refuse_takeover(cmd, classification)
            refuse_name_collisions(cmd, classification)
            refuse_downtime(cmd, classification, allow_downtime)
        if not auto_approve:
            cmd.confirm("Destroy these resources?" if destroy else "Apply these changes?")
        if classification is not None and before_apply is not None:
            before_apply(classification)
        cmd.refuse_changed_plan(saved)
        return cmd.run(step, runner.apply, plan_file=plan_file, fatal=fatal)
    finally:
        # A saved plan can hold sensitive values; it is only needed for this one apply.
        for saved_plan in plans:
            saved_plan.discard()
        # The apply or destroy has ended (or never will): the next run on the stack may plan.
        cmd.release_lock()


def keep_out_of_destroy(cmd: StackCommand, runner: TerraformRunner, plan_file: Path) -> list[str] | None:
    """What the destroy plan must not delete, read from the plan itself and from AWS; None when nothing, else the
    addresses to target instead (every other one; empty when everything is kept).

    Kept: a resource whose live `fastscale:stack` tag names another stack (handed over since), and an endpoint
    configuration, model or execution role that something outside the destroy uses (an endpoint or component
    it does not delete, another stack's included: :mod:`infra.aws.references`); when that cannot be told, all
    of those. Each kept resource keeps what it needs (``infra.terraform.destroy_plan.keep_closure``). They are
    listed (``kept`` in --json) and stay in Terraform's state, so a later destroy deletes them once nothing
    uses them; the proof afterwards lists those still this stack's as left."""
    from fastscale.infra.aws.references import IN_USE_KINDS  # lazy: boto3, loaded only when this runs

    try:
        deleted = deleted_resources(cmd.runtime.plan_document(runner, plan_file))
    except (TerraformError, PlanFormatError) as exc:
        cmd.fail(f"cannot read the destroy plan back: {exc}")
    stack = cmd.config.project
    keep = {d.address: f"tagged {TAG_STACK}={d.stack}: it belongs to stack {d.stack} now; remove it from this stack's "
            "Terraform state" for d in deleted if d.stack is not None and d.stack != stack}
    used = [d for d in deleted if d.kind in IN_USE_KINDS and d.name and d.address not in keep]
    if used:
        going = {(d.kind, d.name.lower()) for d in deleted
                 if d.kind in ("endpoint", "inference-component") and d.name and d.address not in keep}
        uses = live_uses(cmd, "asking AWS whether live endpoints outside the destroy use its configurations, models "
                         "and roles", roles=True, skip=lambda kind, name, arn: (kind, name.lower()) in going)
        for d in used:
            assert d.kind is not None and d.name is not None
            if uses.unknown:
                keep[d.address] = f"cannot tell whether a live endpoint or component uses it ({uses.unknown})"
            elif users := uses.of(d.kind, d.name):
                keep[d.address] = "in use by " + ", ".join(f"{kind.replace('-', ' ')} {name}" for kind, name in users)
    if not keep:
        return None
    kept = keep_closure(deleted, keep)
    names = {d.address: d.name for d in deleted}
    cmd.summary["kept"] = [{"address": a, "name": names.get(a), "reason": why} for a, why in kept.items()]
    if not cmd.as_json:
        cmd.reporter.close()
        say(f"[bold yellow]Kept out of the destroy ({len(kept)}):[/] not this stack's to delete, or still in use")
        for address, why in kept.items():
            say(f"  {_esc(address)}" + (f" ({_esc(names[address] or '')})" if names.get(address) else "") + f": {_esc(why)}",
                indent="    ")
    return targets(deleted, kept)


# --------------------------------------------------------------------------------------------- the saved plan


def read_plan(cmd: StackCommand, runner: TerraformRunner, plan_file: Path, result: TerraformResult) -> PlanClassification:
    """Read the saved plan back from Terraform (when it has changes, or Terraform reported drift): classify every
    change by its effect on traffic (in place, rolling, blue/green, replacement with downtime), with expected
    rollout durations, price the stack's endpoints before and after it (``cmd.cost``, and ``cost`` in the JSON
    summary), and sort the drift into values changed outside Terraform and provider normalisation (``cmd.drift``,
    and ``drift`` in the JSON summary). A plan without changes is an empty classification, without a cost."""
    if not result.has_changes and not result.drifted:
        return PlanClassification()
    try:
        document = cmd.runtime.plan_document(runner, plan_file)
        classification = (classify_plan(document, rollout_inputs(cmd.stack, live=live_counts(cmd)))
                          if result.has_changes else PlanClassification())
        cost = plan_cost(document, cmd.config.region) if result.has_changes else None
    except (TerraformError, PlanFormatError) as exc:
        cmd.fail(f"cannot read the saved plan back: {exc}")
    if result.drifted:
        cmd.drift = read_drift(document, result.drifted)
        cmd.summary["drift"] = [d.to_dict() for d in cmd.drift]
    if result.has_changes:
        cmd.classification = classification
        cmd.summary["classification"] = classification.to_dict()
    if cost is not None:
        cmd.cost = cost
        cmd.summary["cost"] = cost.to_dict()
    return classification


def live_counts(cmd: StackCommand) -> dict[str, int | None]:
    """The live instance counts read before the plan (endpoint name -> count), for the rollout inputs."""
    return {name: found["live"] for name, found in (cmd.summary.get("cutover") or {}).items()}


def refuse_downtime(cmd: StackCommand, classification: PlanClassification, allow_downtime: bool) -> None:
    """A plan that replaces a live endpoint or inference component ends the command with exit 2,
    nothing applied, unless the downtime is accepted with --allow-downtime."""
    found = classification.downtime
    if not found:
        return
    cmd.summary["downtime_allowed"] = allow_downtime
    if allow_downtime:
        if not cmd.as_json:
            cmd.reporter.close()
            say(f"[yellow]warning:[/] --allow-downtime: {len(found)} live endpoint(s) or component(s) will be "
                "replaced; requests to them fail until the new ones are in service.", stderr=True, indent="  ")
        return
    named = "; ".join(f"{c.address} ({', '.join(c.replace_paths) or c.reason})" for c in found)
    cmd.fail(
        f"this plan replaces {len(found)} live endpoint(s) or inference component(s), and requests fail until "
        f"the new ones are in service: {named}. Nothing was applied. "
        "To avoid the downtime follow the advice the plan gives for each (`avoid` in --json); to accept it, pass --allow-downtime.",
        EXIT_BAD_INPUT,
    )


def refuse_takeover(cmd: StackCommand, classification: PlanClassification) -> None:
    """A plan that re-tags a resource another stack's `fastscale:stack` tag names ends the command with exit 2,
    nothing applied, unless --take-over-from names that stack: applied, it would make the resource this
    stack's, and this stack's destroy would delete it under its owner."""
    found = [(c, o) for c, o in classification.taken_from(cmd.config.project) if o.before not in cmd.take_over]
    if not found:
        return
    stacks = list(dict.fromkeys(str(o.before) for _, o in found))
    cmd.summary["owned_by_another_stack"] = [{"address": c.address, "name": c.name, "stack": o.before} for c, o in found]
    flags = " ".join(f"--take-over-from {s}" for s in stacks)
    cmd.fail(
        "this plan re-tags resources of another stack for this one: "
        + "; ".join(f"{c.address} (ownership: {o.describe()})" for c, o in found)
        + f". They belong to stack {' and '.join(stacks)}: applied, this stack would own them and its destroy would "
        "delete them. Nothing was applied. Take them out of this config, or hand them over deliberately: remove "
        f"them from stack {' and '.join(stacks)} (its config and Terraform state) first, then run with {flags}.",
        EXIT_BAD_INPUT,
    )


def refuse_name_collisions(cmd: StackCommand, classification: PlanClassification) -> None:
    """A plan that would create a replacement under the name its live original still holds ends the command
    with exit 1, nothing applied: AWS refuses the create, so the apply would stop half-way."""
    found = classification.name_collisions
    if not found:
        return
    named = "; ".join(f"{c.address} as {c.collides_as} ({', '.join(c.replace_paths) or c.reason})" for c in found)
    cmd.fail(
        f"this plan replaces {len(found)} resource(s) by creating the new one under the name the live one still "
        f"holds, which AWS refuses, so the apply would stop half-way: {named}. Nothing was applied. fastscale "
        "names change with every setting that forces a replacement, so the live resource differs in what it "
        "did not write (changed outside this stack, or read back differently by the provider): see the listed "
        "attributes with `fastscale plan`, and put the live resource back as the config says."
    )


# --------------------------------------------------------------------------------------------- after the apply


def follow_rollouts(cmd: StackCommand, classification: PlanClassification) -> None:
    """Before the apply: follow every endpoint and component the plan rolls out, while Terraform applies
    (a look whenever Terraform reports one still in progress) and after (:func:`rollout_outcomes`)."""
    from fastscale.infra.aws.rollout import (  # lazy: boto3, loaded only when this runs
        RolloutFollower,
        rollout_targets,
    )

    targets = rollout_targets(classification)
    if not targets:
        return
    rt = cmd.runtime
    cmd.follower = RolloutFollower(targets, rt.now(), rt.clients_for_rollouts(cmd.stack), cmd.config.region,
                                   on_progress=cmd.reporter.wait_progress)
    cmd.event_hooks.append(cmd.follower.on_event)


def rollout_outcomes(cmd: StackCommand, timeout: float, outputs: dict[str, Any]) -> list[Any]:
    """After the apply: wait (at most ``timeout`` s) for the rollouts to settle and judge each one:
    the new version in service, rolled back (and by which alarm), failed, or still going."""
    from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs
    from fastscale.infra.aws.rollout import (  # lazy: boto3, loaded only when this runs
        component_models,
        expected_versions,
    )

    if cmd.follower is None:
        return []
    cmd.reporter.step("rollout", "waiting for SageMaker to finish the rollouts")
    try:
        outcomes: list[Any] = cmd.follower.finish(timeout, expected_versions(outputs, component_models(cmd.stack)))
    except AwsError as exc:
        cmd.fail(f"cannot follow the rollout: {exc}")
    cmd.reporter.close()
    cmd.summary["rollout"] = [o.to_dict() for o in outcomes]
    if not cmd.as_json:
        for note in cmd.follower.notes:
            say(f"[yellow]warning:[/] {_esc(note)}", stderr=True, indent="  ")
        for o in outcomes:
            say(("[green]✓[/] " if o.ok else "[bold red]✗[/] ") + _esc(o.message()), indent="  ")
    return outcomes


def verification(cmd: StackCommand, wait: bool, timeout: float | None) -> Any:
    """The live endpoints read back with boto3 and compared with the config (``Runtime.verify_live``),
    after a deploy (waiting for them to settle unless ``wait`` is False) and in `status`."""
    from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs

    cmd.reporter.step("verify", "waiting for the endpoints to settle" if wait else "one look, no waiting")
    kwargs: dict[str, Any] = {"wait": wait, "on_progress": cmd.reporter.wait_progress}
    if timeout is not None:
        kwargs["timeout"] = timeout
    try:
        report = cmd.runtime.verify_live(cmd.stack, clients=cmd.clients(), **kwargs)
    except AwsError as exc:
        cmd.fail(f"cannot verify the live state: {exc}")
    cmd.reporter.close()
    cmd.summary["verification"] = report.to_dict()
    return report
