"""What a destroy plan would delete, and what it must keep: read from Terraform's own plan (``terraform show
-json`` of a ``plan -destroy``), so the refreshed tags and the dependencies are Terraform's.

Terraform deletes whatever its state holds. fastscale keeps two kinds of resource out of a destroy:

- one whose live `fastscale:stack` tag names another stack (handed over to it since this stack made or
  adopted it): it is that stack's now;
- an endpoint configuration, model or execution role that something outside the destroy still uses (an
  endpoint of another stack, one this destroy keeps, a component): deleting it breaks that endpoint the
  next time it scales out or is updated. Who uses what is asked of AWS (``infra.aws.references``); this
  module only reads the plan and closes the kept set.

A kept resource keeps what it needs (:func:`keep_closure`): its dependencies in the plan (a kept model keeps
the role it runs as) and what is attached to it without being a dependency (a kept role keeps its inline
policies, a kept scalable target its scaling policies). The destroy then targets everything else
(``-target``), which Terraform destroys with what depends on it, never with what it depends on.
Pure: no AWS, no Terraform process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastscale.infra.model.naming import TAG_STACK
from fastscale.infra.terraform.rollout.kinds import COMPONENT_TYPE, ENDPOINT_TYPE, ROLE_TYPE
from fastscale.infra.terraform.rollout.plan import PlanFormatError, parse_plan, tags_of

#: Terraform type -> (inventory kind, the attribute holding its AWS name), for what live resources use or are.
KINDS: dict[str, tuple[str, str]] = {
    ENDPOINT_TYPE: ("endpoint", "name"),
    COMPONENT_TYPE: ("inference-component", "inference_component_name"),
    "aws_sagemaker_endpoint_configuration": ("endpoint-config", "name"),
    "awscc_sagemaker_endpoint_config": ("endpoint-config", "endpoint_config_name"),
    "aws_sagemaker_model": ("model", "name"),
    ROLE_TYPE: ("iam-role", "name"),
}

#: Types that belong to another resource without being among its dependencies: kept with it.
ATTACHED_TO: dict[str, tuple[str, ...]] = {
    "aws_iam_role_policy": (ROLE_TYPE,),
    "aws_iam_role_policy_attachment": (ROLE_TYPE,),
    "aws_appautoscaling_policy": ("aws_appautoscaling_target",),
}


@dataclass(frozen=True)
class Deleted:
    """A resource the destroy plan deletes."""

    address: str
    type: str
    kind: str | None  # inventory kind of what live resources use or are (KINDS), else None
    name: str | None  # its AWS name
    stack: str | None  # the `fastscale:stack` tag it carries live (refreshed by the plan)
    depends_on: tuple[str, ...]


def deleted_resources(plan: Mapping[str, Any]) -> list[Deleted]:
    """Every resource a destroy plan deletes, with its live name, stack tag and dependencies."""
    if "format_version" not in plan:
        raise PlanFormatError("not a Terraform JSON plan (no format_version)")
    depends: dict[str, tuple[str, ...]] = {}
    for r in ((plan.get("prior_state") or {}).get("values") or {}).get("root_module", {}).get("resources", []):
        depends[str(r.get("address", ""))] = tuple(str(d) for d in r.get("depends_on") or ())
    out = []
    for change in parse_plan(plan):
        if "delete" not in change.actions:
            continue
        kind, attribute = KINDS.get(change.type, (None, ""))
        before = change.before or {}
        name = before.get(attribute) if kind else None
        out.append(Deleted(change.address, change.type, kind, str(name) if name else None,
                           (tags_of(before, keys=("tags_all", "tags")) or {}).get(TAG_STACK),
                           depends.get(change.address, ())))
    return out


def keep_closure(deleted: list[Deleted], keep: Mapping[str, str]) -> dict[str, str]:
    """``keep`` (address -> why) with everything a kept resource needs: its dependencies, and what is attached to a
    kept resource (``ATTACHED_TO``); each added one says which kept resource needs it."""
    by_address = {d.address: d for d in deleted}
    out = dict(keep)
    changed = True
    while changed:
        changed = False
        for address in list(out):
            kept = by_address.get(address)
            if kept is None:
                continue
            needed = [a for a in kept.depends_on if a in by_address]
            needed += [d.address for d in deleted if kept.type in ATTACHED_TO.get(d.type, ()) and address in d.depends_on]
            for a in needed:
                if a not in out:
                    out[a] = f"needed by {address}, which is kept"
                    changed = True
    return out


def targets(deleted: list[Deleted], kept: Mapping[str, str]) -> list[str]:
    """The addresses a destroy that keeps ``kept`` targets: every other one."""
    return [d.address for d in deleted if d.address not in kept]
