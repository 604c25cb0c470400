"""What `plan` and `deploy` ask AWS before Terraform plans, read-only: the account's Service Quotas for
the config's maximum instances, that every name the stack creates is free or already its own, and each
endpoint's live instance count (carried into the count a new endpoint configuration starts with).

Each check takes the run's :class:`~fastscale.cli.stack.StackCommand` (its config, reporter, summary and
:class:`~fastscale.cli.runtime.Runtime`) and ends the command through it when the check refuses: exit 2,
nothing planned or applied.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fastscale.cli.common import EXIT_BAD_INPUT, console
from fastscale.cli.output import escape as _esc
from fastscale.infra.model import cutover
from fastscale.infra.model.naming import TAG_STACK
from fastscale.infra.rules import has_errors

if TYPE_CHECKING:
    from fastscale.cli.stack import StackCommand
    from fastscale.infra.aws.inventory import Inventory, Resource
    from fastscale.infra.aws.references import InUse
    from fastscale.infra.terraform.workdir import RunDirectory


def quota_preflight(cmd: StackCommand) -> None:
    """Service Quotas for endpoint usage against the config's maximum instances, before anything is
    synthesized: over quota ends the command with exit 2, nothing planned or applied. When the quotas
    cannot be read at all the command goes on with a warning (Terraform needs AWS anyway)."""
    from botocore.exceptions import BotoCoreError, ClientError

    from fastscale.infra.aws.clients import AwsError, translate_errors  # lazy: boto3, loaded only when this runs
    from fastscale.infra.aws.preflight import check_quotas  # lazy: boto3, loaded only when this runs

    cmd.reporter.step("quotas", "Service Quotas for endpoint usage")
    try:
        findings = translate_errors(check_quotas)(cmd.stack, clients=cmd.runtime.quota_clients(cmd.stack))
    except (AwsError, ClientError, BotoCoreError) as exc:
        findings = []
        cmd.summary["quota_check"] = f"not made: {exc}"
        if not cmd.as_json:
            cmd.reporter.close()
            console(stderr=True).print(f"[yellow]warning:[/] quotas not checked: {_esc(str(exc))}", highlight=False, soft_wrap=True)
    cmd.summary["quota_findings"] = [f.to_dict() for f in findings]
    if not cmd.as_json and findings:
        cmd.reporter.close()
        err = console(stderr=True)
        for f in findings:
            style = "red" if f.severity.value == "error" else "yellow"
            err.print(f"[{style}]{f.severity.value}:[/] {f.code} {_esc(f.path)}: {_esc(f.message)} (fix: {_esc(f.hint)})",
                      highlight=False, soft_wrap=True)
    if has_errors(findings):
        cmd.fail("over the account's instance quota: nothing was synthesized, planned or applied.", EXIT_BAD_INPUT)


def check_names(cmd: StackCommand) -> Inventory:
    """Before Terraform runs: every name the stack creates must be free or already this stack's.

    Two projects can produce the same names (`chat` + `prod-qwen3` and `chat-prod` + `qwen3`), and
    SageMaker compares names without regard to case. Terraform would fail half-way on a taken name, or
    take over a scalable target or alarm; so a clash stops the command with exit 2, nothing applied.
    """
    from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs

    cmd.reporter.step("names", "checking that every name the stack creates is free or already its own")
    try:
        inventory = cmd.take_inventory()
    except AwsError as exc:
        cmd.fail(f"cannot check that the stack's names are free: {exc}")
    cmd.reporter.close()
    clashes = inventory.name_clashes()
    if not clashes:
        return inventory
    cmd.summary["name_clashes"] = [
        {"kind": r.kind, "name": r.name, "config_path": r.data.get("config_path", ""), "owner": r.ownership.reason} for r in clashes
    ]
    lines = [
        f"{r.kind} {r.name}" + (f" (from {r.data['config_path']})" if r.data.get("config_path") else "") + f": {r.ownership.reason}"
        for r in clashes
    ]
    cmd.fail(
        f"{len(clashes)} name(s) this stack would create already exist and are not its own:\n  "
        + "\n  ".join(lines)
        + "\nRename the project or the endpoints/components in the file (SageMaker names ignore case), "
        "or delete what is in the way if it is really yours. Nothing was planned or applied.",
        code=EXIT_BAD_INPUT,
    )


def check_adopted(cmd: StackCommand, inventory: Inventory) -> None:
    """Before Terraform runs: the config adopts nothing another stack owns, and nothing something else uses.

    An adopted resource whose `fastscale:stack` tag (or its owner's, for scaling) names another stack ends
    the command with exit 2, unless ``--take-over-from`` names that stack: the deploy would re-tag it for
    this stack and this stack's destroy would delete it. An adopted endpoint configuration or model not yet
    this stack's that another endpoint, component or configuration uses ends it with exit 2 too: this
    stack's destroy or next model change would delete it under them (`fastscale adopt` does not adopt those).
    """
    adopted = [r for r in inventory.resources if r.data.get("adopted")]
    claimed = [r for r in adopted if r.ownership.stack not in (None, inventory.stack)]
    refused = [r for r in claimed if r.ownership.stack not in cmd.take_over]
    if refused:
        stacks = list(dict.fromkeys(str(r.ownership.stack) for r in refused))
        cmd.summary["owned_by_another_stack"] = [
            {"kind": r.kind, "name": r.name, "config_path": r.data.get("config_path", ""), "stack": r.ownership.stack}
            for r in refused
        ]
        flags = " ".join(f"--take-over-from {s}" for s in stacks)
        cmd.fail(
            f"{len(refused)} adopted resource(s) belong to another stack: "
            + "; ".join(f"{r.kind} {r.name}" + (f" ({r.data['config_path']})" if r.data.get("config_path") else "")
                        + f" is tagged {TAG_STACK}={r.ownership.stack}" for r in refused)
            + ". Adopting them would re-tag them for this stack and let its destroy delete them. Nothing was planned "
            "or applied. Remove them from the `adopted` blocks, or hand them over deliberately: take them out of "
            f"stack {' and '.join(stacks)} (its config and its Terraform state) first, then run with {flags}.",
            code=EXIT_BAD_INPUT,
        )
    if claimed:
        cmd.summary["take_over"] = [{"kind": r.kind, "name": r.name, "from": r.ownership.stack} for r in claimed]
    pending = [r for r in adopted if r.kind in ("endpoint-config", "model") and not r.ownership.ours]
    if pending:
        refuse_shared(cmd, inventory, pending)


def live_uses(cmd: StackCommand, doing: str, **kwargs: Any) -> InUse:
    """What the live endpoints and components (with ``configurations``, every configuration) of the region use
    (``infra.aws.references.in_use`` with ``kwargs``), shown as the step ``doing``; exit 1 when AWS cannot be
    asked at all (a refused call is ``unknown`` in the answer instead)."""
    from fastscale.infra.aws.clients import (  # lazy: boto3, loaded only when this runs
        AwsError,
        resolve,
        translate_errors,
    )
    from fastscale.infra.aws.references import in_use  # lazy: boto3, loaded only when this runs

    cmd.reporter.step("in use", doing)
    try:
        uses: InUse = translate_errors(in_use)(resolve(cmd.clients(), cmd.stack), **kwargs)
    except AwsError as exc:
        cmd.fail(f"cannot tell what the live endpoints use: {exc}")
    cmd.reporter.close()
    return uses


def refuse_shared(cmd: StackCommand, inventory: Inventory, pending: list[Resource]) -> None:
    """Exit 2 when another endpoint, component or configuration uses an adopted configuration or model."""
    ours = {(r.kind, r.name.lower()) for r in inventory.resources if r.data.get("adopted")}
    uses = live_uses(cmd, "checking that nothing else uses the adopted configurations and models", configurations=True,
                     skip=lambda kind, name, arn: (kind, name.lower()) in ours)
    if uses.unknown:
        cmd.fail(f"cannot check that nothing else uses the adopted configurations and models: {uses.unknown}")
    shared = []
    for r in pending:
        users = [f"{kind.replace('-', ' ')} {name}" for kind, name in uses.of(r.kind, r.name) if (kind, name.lower()) not in ours]
        if users:
            shared.append((r, users))
    if not shared:
        return
    cmd.summary["shared"] = [{"kind": r.kind, "name": r.name, "config_path": r.data.get("config_path", ""), "used_by": users}
                             for r, users in shared]
    cmd.fail(
        "; ".join(f"adopted {r.kind} {r.name}" + (f" ({r.data['config_path']})" if r.data.get("config_path") else "")
                  + f" is also used by {', '.join(users)}" for r, users in shared)
        + ". Adopting it would put it in this stack, whose destroy or next model change would delete it under them. "
        "Nothing was planned or applied. Remove `adopted.model` and `adopted.endpoint_config` (a component's "
        "`adopted.model`): the stack then creates its own, and the endpoint or component moves to it.",
        code=EXIT_BAD_INPUT,
    )


def carry_live_counts(cmd: StackCommand, run_directory: RunDirectory) -> None:
    """Before Terraform plans: each endpoint's live instance count, carried into the count a new endpoint
    configuration starts with (``infra.model.cutover``), in a tfvars file Terraform loads by itself from the run's
    own directory. Read-only."""
    from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs
    from fastscale.infra.aws.cutover import live_instance_counts  # lazy: boto3, loaded only when this runs

    stack = cmd.stack
    cmd.reporter.step("cut-over", "reading the endpoints' live instance counts")
    try:
        live = live_instance_counts(stack, clients=cmd.clients())
    except AwsError as exc:
        cmd.fail(f"cannot read the endpoints' live instance counts: {exc}")
    # only the variables the stack declares (Terraform warns about any other value)
    declared = run_directory.variables
    values = {k: v for k, v in cutover.tfvars(stack, live).items() if k in declared}
    run_directory.write(cutover.TFVARS_FILE, json.dumps(values, indent=2, sort_keys=True) + "\n")
    # By each endpoint's name in AWS (an adopted one's live name), as the rollout durations look them up.
    cmd.summary["cutover"] = {
        ep.name: {
            "live": live.get(ep.name),
            "initial": ep.instances.initial,
            "max": ep.instances.max,
            "starts_at": values.get(ep.cutover_variable, ep.instances.initial),
        }
        for ep in stack.endpoints
    }
