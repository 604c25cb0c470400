"""What `plan` and `deploy` ask AWS before Terraform plans, read-only: the account's Service Quotas for
the config's maximum instances, that every name the stack creates is free or already its own, and each
endpoint's live instance count (carried into the count a new endpoint configuration starts with).

Each check takes the run's :class:`~fastscale.cli.stack.StackCommand` (its config, reporter, summary and
:class:`~fastscale.cli.runtime.Runtime`) and ends the command through it when the check refuses: exit 2,
nothing planned or applied.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from fastscale.cli.common import EXIT_BAD_INPUT, console
from fastscale.cli.output import escape as _esc
from fastscale.infra.model import cutover
from fastscale.infra.model.naming import endpoint_name
from fastscale.infra.rules import has_errors

if TYPE_CHECKING:
    from fastscale.cli.stack import StackCommand
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
        findings = translate_errors(check_quotas)(cmd.config, clients=cmd.runtime.quota_clients(cmd.config))
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


def check_names(cmd: StackCommand) -> None:
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
        return
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


def carry_live_counts(cmd: StackCommand, run_directory: RunDirectory) -> None:
    """Before Terraform plans: each endpoint's live instance count, carried into the count a new endpoint
    configuration starts with (``infra.model.cutover``), in a tfvars file Terraform loads by itself from the run's
    own directory. Read-only."""
    from fastscale.infra.aws.clients import AwsError  # lazy: boto3, loaded only when this runs
    from fastscale.infra.aws.cutover import live_instance_counts  # lazy: boto3, loaded only when this runs

    config = cmd.config
    cmd.reporter.step("cut-over", "reading the endpoints' live instance counts")
    try:
        live = live_instance_counts(config, clients=cmd.runtime.aws_clients(config))
    except AwsError as exc:
        cmd.fail(f"cannot read the endpoints' live instance counts: {exc}")
    # only the variables the stack declares (Terraform warns about any other value)
    declared = run_directory.variables
    values = {k: v for k, v in cutover.tfvars(config, live).items() if k in declared}
    run_directory.write(cutover.TFVARS_FILE, json.dumps(values, indent=2, sort_keys=True) + "\n")
    cmd.summary["cutover"] = {
        endpoint_name(config.project, ep.name): {
            "live": live.get(endpoint_name(config.project, ep.name)),
            "initial": ep.instances.initial,
            "max": ep.instances.max,
            "starts_at": values.get(cutover.variable_name(ep), ep.instances.initial),
        }
        for ep in config.endpoints
    }
