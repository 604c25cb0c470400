"""What a plan does to a live stack: every change classified by its effect on traffic.

Terraform says *what* changes (create, update, replace, delete); what matters to an endpoint in production
is *how* SageMaker carries it out:

- **in place**: tags, scaling policies, alarms, a deployment configuration: nothing serving is restarted;
- **rolling**: SageMaker replaces an inference component's copies (or an endpoint's instances) batch by
  batch, watching the rollback alarms after each batch;
- **blue/green**: SageMaker starts a whole new fleet (or all new copies), shifts the traffic to it all at
  once, as a canary or linearly, bakes, then removes the old fleet. With no deployment configuration,
  this is what SageMaker does for both an endpoint update and a component update (all at once);
- **replace**: a resource that serves no traffic itself (a model, an endpoint configuration, an alarm) is
  recreated; its effect on traffic is on the endpoint's or component's own line;
- **replace, downtime**: Terraform deletes and creates an endpoint or an inference component: requests fail
  until the new one is in service (for an endpoint, many minutes).

The input is Terraform's own plan (``terraform show -json <plan file>``), so the classification follows
exactly what Terraform will do: its ``actions``, ``replace_paths`` and ``action_reason``. The update
strategy is read from the planned resource's ``deployment_config`` (``after``), so it is right whether or
not a stack sets one. Pure: no AWS, no Terraform, no cdktf.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from fastscale.infra.analysis.estimate import estimate_config
from fastscale.infra.config import InferenceComponentSpec
from fastscale.infra.model.cutover import cutover_count
from fastscale.infra.model.naming import component_name_of, endpoint_name_of

if TYPE_CHECKING:
    from fastscale.infra.analysis.estimate.params import EstimateParams
    from fastscale.infra.config import FastscaleConfig

#: Terraform resource types that serve traffic: replacing one of them is downtime.
ENDPOINT_TYPE = "aws_sagemaker_endpoint"
COMPONENT_TYPE = "awscc_sagemaker_inference_component"
SERVING_TYPES = (ENDPOINT_TYPE, COMPONENT_TYPE)

#: The resources a new endpoint configuration is planned as (hashicorp/aws and awscc).
CONFIG_TYPES = ("aws_sagemaker_endpoint_configuration", "awscc_sagemaker_endpoint_config")
#: An Application Auto Scaling target (a variant's instance count or a component's copy count).
SCALING_TARGET_TYPE = "aws_appautoscaling_target"

#: What a person calls each serving type.
TYPE_LABELS = {ENDPOINT_TYPE: "endpoint", COMPONENT_TYPE: "inference component"}

#: Attributes whose change makes SageMaker roll out a new version (the rest of an update is in place).
#: An endpoint rolls when it switches to another endpoint configuration; a component when its
#: specification (model, container, resources, start-up) changes. A component's ``runtime_config`` is its
#: copy count, which auto scaling owns: changing it adds or removes copies of the same version.
ROLLOUT_ATTRIBUTES = {
    ENDPOINT_TYPE: ("endpoint_config_name",),
    COMPONENT_TYPE: ("specification", "specifications"),
}

#: The attribute holding each serving type's SageMaker name.
NAME_ATTRIBUTE = {ENDPOINT_TYPE: "name", COMPONENT_TYPE: "inference_component_name"}

#: Resources whose name AWS allows once per account and Region (and IAM roles: once per account), with their
#: name attribute. Replaced create-before-destroy under an unchanged name, the create fails (SageMaker
#: "Cannot create already existing model", IAM EntityAlreadyExists) after the plan was accepted.
UNIQUE_NAME_ATTRIBUTE = {"aws_sagemaker_model": "name", "aws_iam_role": "name",
                         "aws_sagemaker_endpoint_configuration": "name"}

#: The execution role fastscale creates: a new name (it carries the region since the role became one per
#: region) replaces it, and with it everything that names its ARN.
ROLE_TYPE = "aws_iam_role"


class ChangeKind(str, Enum):
    CREATE = "create"
    DELETE = "delete"
    IN_PLACE = "in_place"
    ROLLING = "rolling"
    BLUE_GREEN = "blue_green"
    REPLACE = "replace"
    DOWNTIME = "replace_with_downtime"
    FORGET = "forget"

    @property
    def label(self) -> str:
        return _KIND_LABELS[self]


_KIND_LABELS = {
    ChangeKind.CREATE: "create",
    ChangeKind.DELETE: "delete",
    ChangeKind.IN_PLACE: "in place",
    ChangeKind.ROLLING: "rolling",
    ChangeKind.BLUE_GREEN: "blue/green",
    ChangeKind.REPLACE: "replace",
    ChangeKind.DOWNTIME: "replace, downtime",
    ChangeKind.FORGET: "forget",
}

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


# --------------------------------------------------------------------------------------------- plan JSON


@dataclass(frozen=True)
class ResourceChange:
    """One entry of the plan's ``resource_changes``, as Terraform wrote it."""

    address: str
    type: str
    actions: tuple[str, ...]
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    after_unknown: Mapping[str, Any]
    replace_paths: tuple[tuple[str | int, ...], ...] = ()
    action_reason: str | None = None


class PlanFormatError(ValueError):
    """The document is not Terraform's JSON plan output."""


def parse_plan(plan: Mapping[str, Any]) -> list[ResourceChange]:
    """The managed resources' changes of a ``terraform show -json`` plan (data sources are reads, left out)."""
    if not isinstance(plan, Mapping) or "format_version" not in plan:
        raise PlanFormatError("not a Terraform JSON plan (no format_version): pass the output of `terraform show -json PLANFILE`")
    out = []
    for rc in plan.get("resource_changes") or []:
        if rc.get("mode", "managed") != "managed":
            continue
        change = rc.get("change") or {}
        unknown = change.get("after_unknown")
        out.append(
            ResourceChange(
                address=str(rc.get("address", "")),
                type=str(rc.get("type", "")),
                actions=tuple(str(a) for a in change.get("actions") or ()),
                before=change.get("before") if isinstance(change.get("before"), Mapping) else None,
                after=change.get("after") if isinstance(change.get("after"), Mapping) else None,
                after_unknown=unknown if isinstance(unknown, Mapping) else {},
                replace_paths=tuple(tuple(p) for p in change.get("replace_paths") or () if isinstance(p, list)),
                action_reason=rc.get("action_reason"),
            )
        )
    return out


def _one(value: Any) -> Mapping[str, Any] | None:
    """A nested block as an object: the aws provider writes a single block as a one-element list, awscc
    writes a nested attribute as an object."""
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, Mapping) else None


def _unknown(flags: Any) -> bool:
    """Whether an ``after_unknown`` entry marks the value, or anything inside it, as known only after apply."""
    if flags is True:
        return True
    if isinstance(flags, Mapping):
        return any(_unknown(v) for v in flags.values())
    if isinstance(flags, list):
        return any(_unknown(v) for v in flags)
    return False


def changed_attributes(change: ResourceChange) -> tuple[str, ...]:
    """Top-level attributes whose planned value differs from the current one, or is known only after apply."""
    before, after = change.before or {}, change.after or {}
    keys = sorted(set(before) | set(after) | set(change.after_unknown))
    return tuple(
        k for k in keys
        if _unknown(change.after_unknown.get(k)) or (k in after and before.get(k) != after.get(k))
    )


def path_text(path: Sequence[str | int]) -> str:
    """``["specification", "container", "image"]`` -> ``specification.container.image``; indexes as ``[0]``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


# --------------------------------------------------------------------------------------------- strategy


@dataclass(frozen=True)
class Capacity:
    """A batch or traffic step: ``type`` COPY_COUNT / INSTANCE_COUNT / CAPACITY_PERCENT, and its value."""

    type: str
    value: float

    def units_of(self, total: int) -> int:
        """How many copies or instances this is out of ``total`` (at least one)."""
        if self.type == "CAPACITY_PERCENT":
            return max(1, math.ceil(total * self.value / 100))
        return max(1, int(self.value))

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.type == "CAPACITY_PERCENT" else f"{self.value:g}"


@dataclass(frozen=True)
class Strategy:
    """How SageMaker carries out an update, as the planned ``deployment_config`` says (or its default).

    ``wait_seconds`` is the bake after each rolling batch or each traffic step; ``step`` the batch size
    (rolling) or canary size / linear step (blue/green).
    """

    kind: ChangeKind  # ROLLING or BLUE_GREEN
    configured: bool  # False: no deployment_config, SageMaker's default
    traffic: str | None = None  # blue/green: ALL_AT_ONCE, CANARY or LINEAR
    step: Capacity | None = None
    wait_seconds: float = 0.0
    termination_wait_seconds: float = 0.0
    max_execution_seconds: float | None = None
    rollback_step: Capacity | None = None
    alarms: tuple[str, ...] = ()

    def describe(self) -> str:
        if self.kind is ChangeKind.ROLLING:
            text = f"rolling, batches of {self.step}" if self.step else "rolling"
            text += f", {self.wait_seconds:g}s wait" if self.wait_seconds else ""
        else:
            text = "blue/green, " + {"CANARY": f"canary {self.step}", "LINEAR": f"linear steps of {self.step}"}.get(
                self.traffic or "", "all at once")
            text += f", {self.wait_seconds:g}s bake" if self.wait_seconds else ""
        if not self.configured:
            text += " (SageMaker's default: no deployment configuration)"
        elif not self.alarms:
            text += ", no rollback alarms"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "configured": self.configured,
            "traffic": self.traffic,
            "step": {"type": self.step.type, "value": self.step.value} if self.step else None,
            "wait_seconds": self.wait_seconds,
            "termination_wait_seconds": self.termination_wait_seconds,
            "max_execution_seconds": self.max_execution_seconds,
            "rollback_step": {"type": self.rollback_step.type, "value": self.rollback_step.value} if self.rollback_step else None,
            "rollback_alarms": list(self.alarms),
        }


def _capacity(value: Any) -> Capacity | None:
    block = _one(value)
    if block is None or block.get("value") is None:
        return None
    return Capacity(str(block.get("type") or "CAPACITY_PERCENT"), float(block["value"]))


def _number(value: Any, default: float = 0.0) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def rollback_alarms(deployment_config: Any) -> tuple[str, ...]:
    """The alarm names of a planned ``deployment_config.auto_rollback_configuration``."""
    config = _one(deployment_config)
    block = _one(config.get("auto_rollback_configuration")) if config else None
    alarms = (block or {}).get("alarms") or []
    return tuple(str(a["alarm_name"]) for a in alarms if isinstance(a, Mapping) and a.get("alarm_name"))


def read_strategy(resource_type: str, after: Mapping[str, Any] | None) -> Strategy:
    """The update strategy in a planned endpoint's or component's ``deployment_config``.

    No block means SageMaker's default: blue/green with all traffic shifted at once and no bake for an
    endpoint; all new copies at once for a component (the same blue/green shape, per copy).
    """
    config = _one((after or {}).get("deployment_config"))
    alarms = rollback_alarms(config)
    rolling = _one(config.get("rolling_update_policy")) if config else None
    if rolling is not None:
        return Strategy(
            kind=ChangeKind.ROLLING,
            configured=True,
            step=_capacity(rolling.get("maximum_batch_size")),
            wait_seconds=_number(rolling.get("wait_interval_in_seconds")),
            max_execution_seconds=_number(rolling.get("maximum_execution_timeout_in_seconds"), 0.0) or None,
            rollback_step=_capacity(rolling.get("rollback_maximum_batch_size")),
            alarms=alarms,
        )
    blue_green = _one(config.get("blue_green_update_policy")) if config and resource_type == ENDPOINT_TYPE else None
    if blue_green is not None:
        routing = _one(blue_green.get("traffic_routing_configuration")) or {}
        traffic = str(routing.get("type") or "ALL_AT_ONCE")
        return Strategy(
            kind=ChangeKind.BLUE_GREEN,
            configured=True,
            traffic=traffic,
            step=_capacity(routing.get("canary_size") if traffic == "CANARY" else routing.get("linear_step_size")),
            wait_seconds=_number(routing.get("wait_interval_in_seconds")),
            termination_wait_seconds=_number(blue_green.get("termination_wait_in_seconds")),
            max_execution_seconds=_number(blue_green.get("maximum_execution_timeout_in_seconds"), 0.0) or None,
            alarms=alarms,
        )
    return Strategy(kind=ChangeKind.BLUE_GREEN, configured=config is not None, traffic="ALL_AT_ONCE", alarms=alarms)


# --------------------------------------------------------------------------------------------- duration


@dataclass(frozen=True)
class RolloutInputs:
    """What the duration of one endpoint's or component's rollout depends on, from the config and the
    scale-out estimate: how many copies (or instances) are replaced, and how long one takes to start."""

    units: int
    unit: str  # "copy" or "instance"
    startup_seconds: float | None  # None: the estimate cannot say (see note)
    note: str = ""
    #: endpoints: the config's instances.initial, and the live count read before the plan (None: not live)
    initial: int | None = None
    live: int | None = None


@dataclass(frozen=True)
class RolloutDuration:
    seconds: float
    steps: int  # rolling batches, or blue/green traffic steps
    formula: str  # how the number was reached, for people

    def to_dict(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 1), "steps": self.steps, "formula": self.formula}


def rollout_duration(strategy: Strategy, units: int, startup_seconds: float) -> RolloutDuration:
    """Expected seconds from the start of an update to the old version gone, with no rollback.

    Assumes:
    - rolling: ``ceil(units / batch)`` batches one after the other, each the start-up of a new copy or
      instance plus the wait interval (SageMaker's bake, during which it watches the rollback alarms);
    - blue/green: the whole new fleet (or all new copies) starts at once (one start-up), then every traffic
      step is followed by the wait interval (one step all at once, two for a canary, ``ceil(100 / step%)``
      or ``ceil(units / step)`` for linear), then the termination wait before the old fleet goes;
    - start-up is the estimate model's (``infra.analysis.estimate``) for a new copy or instance of a version no
      instance has cached yet, with room for it on the endpoint: a batch that must wait for new instances
      takes longer, which the rules about spare capacity warn of;
    - no time is counted for SageMaker's own bookkeeping between steps, nor for a rollback.
    """
    units = max(1, units)
    if strategy.kind is ChangeKind.ROLLING:
        batch = strategy.step.units_of(units) if strategy.step else units
        batches = math.ceil(units / batch)
        seconds = batches * (startup_seconds + strategy.wait_seconds)
        return RolloutDuration(seconds, batches, f"{batches} batch(es) × ({_minutes(startup_seconds)} start-up + "
                                                 f"{_minutes(strategy.wait_seconds)} wait)")
    if strategy.traffic == "CANARY":
        steps = 2
    elif strategy.traffic == "LINEAR" and strategy.step is not None:
        if strategy.step.type == "CAPACITY_PERCENT":
            steps = math.ceil(100 / max(strategy.step.value, 1.0))
        else:
            steps = math.ceil(units / strategy.step.units_of(units))
    else:
        steps = 1
    seconds = startup_seconds + steps * strategy.wait_seconds + strategy.termination_wait_seconds
    formula = f"{_minutes(startup_seconds)} start-up + {steps} step(s) × {_minutes(strategy.wait_seconds)} bake"
    if strategy.termination_wait_seconds:
        formula += f" + {_minutes(strategy.termination_wait_seconds)} termination wait"
    return RolloutDuration(seconds, steps, formula)


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.1f} min"


def rollout_inputs(config: FastscaleConfig, params: EstimateParams | None = None,
                   live: Mapping[str, int | None] | None = None) -> dict[str, RolloutInputs]:
    """Per SageMaker name (endpoint or inference component), what its rollout duration depends on.

    A component replaces ``copies.initial`` copies, each the estimate's "new copy, no data cache" start-up
    (a new version is not in any instance's cache) without its detection phases; an endpoint starts its
    cut-over count of instances (``infra.model.cutover``: the live count from ``live``, by endpoint name, within
    ``instances.initial`` and ``instances.max``), each a new instance's start-up (with container image
    caching where it applies). A component's live copy count may differ when auto scaling has moved it.
    """
    out: dict[str, RolloutInputs] = {}
    workloads = [(ep, w) for ep in config.endpoints for _, w in ep.workloads()]
    for estimate, (ep, workload) in zip(estimate_config(config, params), workloads, strict=True):
        reason = "; ".join(n for n in estimate.notes if n.startswith("not estimated")) or "no estimate"
        copy = estimate.scenario("copy_no_data_cache")
        instance = estimate.scenario("instance_image_cache") or estimate.scenario("instance_no_image_cache")
        if isinstance(workload, InferenceComponentSpec):
            out[component_name_of(config.project, workload)] = RolloutInputs(
                workload.copies.initial or 1, "copy",
                copy.seconds_from("image_pull") if copy else None, "" if copy else reason)
        name = endpoint_name_of(config.project, ep)
        if name not in out:  # an endpoint's fleet: its first workload's new instance
            found = (live or {}).get(name)
            out[name] = RolloutInputs(
                cutover_count(ep, found) or 1, "instance",
                instance.seconds_from("instance_provisioning") if instance else None, "" if instance else reason,
                initial=ep.instances.initial, live=found)
    return out


# --------------------------------------------------------------------------------------------- classify


@dataclass(frozen=True)
class ClassifiedChange:
    address: str
    type: str
    actions: tuple[str, ...]
    kind: ChangeKind
    reason: str
    name: str | None = None  # the SageMaker name, for endpoints and components
    changed: tuple[str, ...] = ()
    replace_paths: tuple[str, ...] = ()
    strategy: Strategy | None = None
    duration: RolloutDuration | None = None
    duration_note: str = ""
    avoid: str = ""  # downtime: how to make the change without it
    notice: str = ""  # what else the change sets off, for people (a renamed execution role)
    #: what else goes with this change (the cut-over count, auto scaling paused around it)
    notes: tuple[str, ...] = ()
    #: the name a create-before-destroy replacement would create while the old resource still holds it
    collides_as: str | None = None

    @property
    def is_rollout(self) -> bool:
        return self.kind in (ChangeKind.ROLLING, ChangeKind.BLUE_GREEN)

    def to_dict(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "type": self.type,
            "actions": list(self.actions),
            "class": self.kind.value,
            "label": self.kind.label,
            "name": self.name,
            "reason": self.reason,
            "changed": list(self.changed),
            "replace_paths": list(self.replace_paths),
            "strategy": self.strategy.to_dict() if self.strategy else None,
            "expected_duration": self.duration.to_dict() if self.duration else None,
            "duration_note": self.duration_note or None,
            "avoid": self.avoid or None,
            "notice": self.notice or None,
            "notes": list(self.notes),
            "name_collision": self.collides_as,
        }


@dataclass(frozen=True)
class PlanClassification:
    changes: tuple[ClassifiedChange, ...] = field(default_factory=tuple)

    @property
    def downtime(self) -> list[ClassifiedChange]:
        return [c for c in self.changes if c.kind is ChangeKind.DOWNTIME]

    @property
    def name_collisions(self) -> list[ClassifiedChange]:
        """Replacements AWS refuses: the new resource is created under the name the old one still holds."""
        return [c for c in self.changes if c.collides_as]

    @property
    def rollouts(self) -> list[ClassifiedChange]:
        return [c for c in self.changes if c.is_rollout]

    def counts(self) -> dict[str, int]:
        return {k.value: sum(1 for c in self.changes if c.kind is k) for k in ChangeKind}

    def longest_rollout_seconds(self) -> float | None:
        """Terraform applies independent resources side by side, so the rollouts overlap: the longest one
        is the best single figure for the whole apply (their sum is an upper bound)."""
        found = [c.duration.seconds for c in self.rollouts if c.duration is not None]
        return max(found) if found else None

    def summary(self) -> dict[str, Any]:
        longest = self.longest_rollout_seconds()
        return {
            "counts": self.counts(),
            "downtime": [c.address for c in self.downtime],
            "rollouts": [c.address for c in self.rollouts],
            "longest_rollout_seconds": round(longest, 1) if longest is not None else None,
        }

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), "resources": [c.to_dict() for c in self.changes]}


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


def _replacement_reason(change: ResourceChange, paths: Sequence[str]) -> str:
    if change.action_reason == "replace_by_triggers" and change.type in _TRIGGER_REASONS:
        return _TRIGGER_REASONS[change.type]
    if change.action_reason in _ACTION_REASONS:
        return _ACTION_REASONS[change.action_reason]
    if paths:
        return f"{', '.join(paths)} cannot change in place"
    return "Terraform must replace it"


def _classified(change: ResourceChange, kind: ChangeKind, reason: str, **extra: Any) -> ClassifiedChange:
    return ClassifiedChange(change.address, change.type, change.actions, kind, reason, **extra)


def classify_change(change: ResourceChange, inputs: Mapping[str, RolloutInputs] | None = None) -> ClassifiedChange | None:
    """One resource's change, or None when the plan leaves it as it is (no-op, read)."""
    actions = change.actions
    serving = change.type in SERVING_TYPES
    values = change.after or change.before or {}
    name = str(values.get(NAME_ATTRIBUTE[change.type])) if serving and values.get(NAME_ATTRIBUTE[change.type]) else None
    if actions in (("no-op",), ("read",), ()):
        return None
    if actions == ("create",):
        return _classified(change, ChangeKind.CREATE, "new", name=name)
    if actions == ("delete",):
        return _classified(change, ChangeKind.DELETE, "no longer in the config", name=name)
    if actions == ("forget",):
        return _classified(change, ChangeKind.FORGET, "removed from Terraform's state, kept in AWS", name=name)
    if set(actions) == {"create", "delete"}:
        paths = tuple(path_text(p) for p in change.replace_paths)
        reason = _replacement_reason(change, paths)
        if serving:
            order = "deleted, then created" if actions[0] == "delete" else "created beside the old one, then the old one deleted"
            return _classified(change, ChangeKind.DOWNTIME,
                               f"{reason}: {order}",
                               name=name, replace_paths=paths, changed=changed_attributes(change),
                               avoid=avoid_hint(change.type, paths, change.action_reason))
        return _classified(change, ChangeKind.REPLACE, f"{reason}; serves no traffic itself",
                           replace_paths=paths, changed=changed_attributes(change), notice=role_rename_notice(change),
                           collides_as=same_name_replacement(change))
    changed = changed_attributes(change)
    rolls = [a for a in ROLLOUT_ATTRIBUTES.get(change.type, ()) if a in changed]
    if not rolls:
        return _classified(change, ChangeKind.IN_PLACE, f"{', '.join(changed) or 'nothing visible'} updated in place",
                           name=name, changed=changed)
    strategy = read_strategy(change.type, change.after)
    duration, note = None, ""
    found = (inputs or {}).get(name or "")
    if found is None:
        note = "no estimate: not in the config"
    elif found.startup_seconds is None:
        note = found.note or "no estimate"
    else:
        duration = rollout_duration(strategy, found.units, found.startup_seconds)
    what = "a new endpoint configuration" if change.type == ENDPOINT_TYPE else "a new specification"
    return _classified(change, strategy.kind, f"{what} ({', '.join(rolls)}): {strategy.describe()}",
                       name=name, changed=changed, strategy=strategy, duration=duration, duration_note=note)


def classify_plan(plan: Mapping[str, Any] | Iterable[ResourceChange],
                  inputs: Mapping[str, RolloutInputs] | None = None) -> PlanClassification:
    """Every change of a plan (``terraform show -json`` output, or changes already parsed), classified."""
    changes = parse_plan(plan) if isinstance(plan, Mapping) else list(plan)
    found = [c for c in (classify_change(c, inputs) for c in changes) if c is not None]
    counts = cutover_counts(changes)
    reregistered = {_variant_endpoint(c) for c in changes
                    if c.type == SCALING_TARGET_TYPE and c.action_reason == "replace_by_triggers"}
    out = []
    for c in found:
        if c.type == ENDPOINT_TYPE and c.is_rollout and c.name:
            notes = list(c.notes)
            if c.name in counts:
                notes.append(_cutover_note(counts[c.name], (inputs or {}).get(c.name)))
            if c.name in reregistered:
                notes.append("auto scaling paused: the variant's scalable target and policy are deregistered before "
                             "the update and registered again after it (AWS fails an instance-type change otherwise)")
            c = replace(c, notes=tuple(notes))
        out.append(c)
    return PlanClassification(tuple(out))


def cutover_counts(changes: Iterable[ResourceChange]) -> dict[str, int]:
    """Endpoint name -> the initial instance count of the endpoint configuration the plan creates for it.

    A configuration belongs to the endpoint whose name, with ``-``, begins its name: hashicorp/aws's
    ``name_prefix``, or awscc's name, which is the same prefix and a hex digest (``stacks.endpoint``)."""
    out: dict[str, int] = {}
    for c in changes:
        if c.type not in CONFIG_TYPES or "create" not in c.actions or not c.after:
            continue
        prefix = c.after.get("name_prefix")
        if not isinstance(prefix, str):
            match = _AWSCC_CONFIG_NAME.match(str(c.after.get("endpoint_config_name") or ""))
            prefix = match.group(1) if match else None
        variant = _one(c.after.get("production_variants"))
        count = (variant or {}).get("initial_instance_count")
        if prefix and prefix.endswith("-") and isinstance(count, int):
            out[prefix[:-1]] = count
    return out


_AWSCC_CONFIG_NAME = re.compile(r"^(.+-)[0-9a-f]{12}$")


def _variant_endpoint(change: ResourceChange) -> str | None:
    """The endpoint of a variant's scalable target (``endpoint/<name>/variant/<variant>``)."""
    values = change.before or change.after or {}
    parts = str(values.get("resource_id") or "").split("/")
    return parts[1] if len(parts) == 4 and parts[0] == "endpoint" else None


def _cutover_note(count: int, inputs: RolloutInputs | None) -> str:
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
