"""What a change means for serving, in words: why Terraform replaces a resource, how to make the change without
taking an endpoint or component down, what renaming the execution role sets off, which replacement AWS will
refuse because the new resource keeps the old one's name, and what goes with an endpoint's rollout (the
cut-over count, auto scaling paused around it).

Pure functions of :class:`.plan.ResourceChange` entries; :mod:`.classify` puts their answers on each
classified change.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from fastscale.infra.terraform.rollout.duration import RolloutInputs
from fastscale.infra.terraform.rollout.kinds import (
    COMPONENT_TYPE,
    CONFIG_TYPES,
    ROLE_TYPE,
    SCALING_TARGET_TYPE,
    TYPE_LABELS,
    UNIQUE_NAME_ATTRIBUTE,
)
from fastscale.infra.terraform.rollout.plan import ResourceChange, nested_block

#: Terraform's ``action_reason`` for a replacement, in words.
_ACTION_REASONS = {
    "replace_because_tainted": "it is tainted: an earlier apply failed part-way through creating it",
    "replace_by_request": "its replacement was requested (-replace)",
    "replace_by_triggers": "a resource named in its replace_triggered_by changed",
}


#: Why the stack asks Terraform to replace a resource of each type with ``replace_triggered_by``.
_TRIGGER_REASONS = {
    COMPONENT_TYPE: "its endpoint is renamed, and a component cannot move to another endpoint",
    SCALING_TARGET_TYPE: "the variant's instance type changes: deregistered before the endpoint's update and registered "
                         "again after it (AWS fails an instance-type change of a variant registered for auto scaling)",
    "aws_appautoscaling_policy": "its scalable target is deregistered and registered again around the endpoint's update",
}


def avoid_hint(resource_type: str, paths: Sequence[str], action_reason: str | None) -> str:
    """How to reach the same result without taking the resource down."""
    what = TYPE_LABELS.get(resource_type, "resource")
    article = "an" if what[0] in "aeiou" else "a"
    if action_reason == "replace_because_tainted":
        return (f"if the {what} is not serving (its creation failed), replacing it costs nothing: pass "
                "--allow-downtime; otherwise `terraform untaint` it in the stack directory")
    if action_reason == "replace_by_request":
        return "drop the -replace request, or pass --allow-downtime"
    if "name" in paths or "inference_component_name" in paths:
        return (f"{article} {what}'s name cannot change in place: keep the old name, or add the renamed {what} as a new "
                "entry, move clients to it, and remove the old one in a later deploy")
    if any(p.startswith("deployment_config") for p in paths):
        return ("hashicorp/aws replaces an endpoint whose rollback configuration is added or removed (alarms edited "
                "inside it are updated in place): keep automatic rollback as it is live for this endpoint "
                "(deployment.auto_rollback), or accept one replacement with --allow-downtime")
    if "endpoint_name" in paths or "variant_name" in paths or (
            resource_type == COMPONENT_TYPE and action_reason == "replace_by_triggers"):
        return ("a component cannot move to another endpoint or variant in place: add it under a new name where "
                "it should run, move clients to it, and remove the old one in a later deploy")
    shown = ", ".join(paths) or "the attribute"
    return (f"change {shown} back, or create the changed {what} beside the old one under a new name and "
            "remove the old one in a later deploy")


def role_rename_notice(change: ResourceChange) -> str:
    """What renaming the execution role does to a live stack ("" when the change renames no role).

    The role's name cannot change in place, and models and endpoint configurations are immutable: each
    that names the old role's ARN is replaced by one naming the new role (model names carry a digest of the
    role, see ``infra.model.naming.model_name``). Their ``create_before_destroy`` extends to the role, so the new
    role exists before anything uses it and the old one goes last.
    """
    if change.type != ROLE_TYPE or change.before is None:
        return ""
    old, new = change.before.get("name"), (change.after or {}).get("name")
    if not old or old == new:
        return ""
    return (f"the execution role {old} is renamed {new or '(known after apply)'}: Terraform creates the new role first, "
            "replaces every model and endpoint configuration that names the old one with one naming the new role, so "
            "each endpoint rolls out its new configuration and each inference component its new model (their own "
            "lines say how), and deletes the old role last")


def same_name_replacement(change: ResourceChange) -> str | None:
    """The name a replacement creates while the old resource still holds it, or None.

    Terraform creates the replacement first (``create_before_destroy``) under the name the plan gives it; for
    a resource whose name AWS allows only once, an unchanged name means the create fails after the plan was
    accepted. fastscale's names change with every setting that forces a replacement (``infra.model.naming``), so
    this is a difference it did not make: the live resource changed outside the stack, or the provider reads
    it back differently."""
    attribute = UNIQUE_NAME_ATTRIBUTE.get(change.type)
    if attribute is None or change.actions != ("create", "delete") or not change.before or not change.after:
        return None
    old, new = change.before.get(attribute), change.after.get(attribute)
    return str(new) if isinstance(new, str) and new and new == old else None


def replacement_reason(change: ResourceChange, paths: Sequence[str]) -> str:
    if change.action_reason == "replace_by_triggers" and change.type in _TRIGGER_REASONS:
        return _TRIGGER_REASONS[change.type]
    if change.action_reason in _ACTION_REASONS:
        return _ACTION_REASONS[change.action_reason]
    if paths:
        return f"{', '.join(paths)} cannot change in place"
    return "Terraform must replace it"


def cutover_counts(changes: Iterable[ResourceChange]) -> dict[str, int]:
    """Name prefix -> the initial instance count of the endpoint configuration the plan creates with it.

    The prefix is hashicorp/aws's ``name_prefix``, or what begins awscc's name, which is the same prefix and a hex
    digest (``stacks.endpoint``): `<project>-<name>-`, the endpoint's own name and ``-`` unless it was adopted
    under another name (``RolloutInputs.config_prefix``)."""
    out: dict[str, int] = {}
    for c in changes:
        if c.type not in CONFIG_TYPES or "create" not in c.actions or not c.after:
            continue
        prefix = c.after.get("name_prefix")
        if not isinstance(prefix, str):
            match = _AWSCC_CONFIG_NAME.fullmatch(str(c.after.get("endpoint_config_name") or ""))
            prefix = match.group(1) if match else None
        variant = nested_block(c.after.get("production_variants"))
        count = (variant or {}).get("initial_instance_count")
        if prefix and prefix.endswith("-") and isinstance(count, int):
            out[prefix] = count
    return out


_AWSCC_CONFIG_NAME = re.compile(r"(.+-)[0-9a-f]{12}")


def variant_endpoint(change: ResourceChange) -> str | None:
    """The endpoint of a variant's scalable target (``endpoint/<name>/variant/<variant>``)."""
    values = change.before or change.after or {}
    parts = str(values.get("resource_id") or "").split("/")
    return parts[1] if len(parts) == 4 and parts[0] == "endpoint" else None


def cutover_note(count: int, inputs: RolloutInputs | None) -> str:
    """Where the new fleet's size comes from: the live fleet, or instances.initial / instances.max."""
    text = f"cut-over starts at {count} instance(s)"
    live, initial = (inputs.live, inputs.initial) if inputs is not None else (None, None)
    if live is not None and live > count:
        return f"{text} (instances.max; {live} live)"
    if live is not None and live == count and initial is not None and initial < count:
        return f"{text} (live; instances.initial is {initial})"
    if initial == count:
        return f"{text} (instances.initial" + (f"; {live} live)" if live is not None else ")")
    return text
