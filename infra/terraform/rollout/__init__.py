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

The package, one module per step: :mod:`.kinds` (the resource types it knows and the classes of change),
:mod:`.plan` (reading the saved plan's JSON), :mod:`.strategy` (how SageMaker carries out an update, from the
planned ``deployment_config``), :mod:`.duration` (how long a rollout takes), :mod:`.serving` (what a replacement
means for serving: why, how to avoid the downtime, the names AWS refuses twice, the notes on a cut-over) and
:mod:`.classify` (every change classified, built on the others). The names below are the ones callers use.
"""

from __future__ import annotations

from fastscale.infra.base.value_diff import path_text
from fastscale.infra.terraform.rollout.classify import (
    ClassifiedChange,
    OwnershipChange,
    PlanClassification,
    classify_change,
    classify_plan,
    ownership_changes,
)
from fastscale.infra.terraform.rollout.duration import (
    RolloutDuration,
    RolloutInputs,
    rollout_duration,
    rollout_inputs,
)
from fastscale.infra.terraform.rollout.kinds import (
    COMPONENT_TYPE,
    CONFIG_NAME_ATTRIBUTE,
    CONFIG_TYPES,
    ENDPOINT_TYPE,
    NAME_ATTRIBUTE,
    ROLE_TYPE,
    ROLLOUT_ATTRIBUTES,
    SCALING_TARGET_TYPE,
    SERVING_TYPES,
    TYPE_LABELS,
    UNIQUE_NAME_ATTRIBUTE,
    ChangeKind,
)
from fastscale.infra.terraform.rollout.plan import (
    PlanFormatError,
    ResourceChange,
    changed_attributes,
    nested_block,
    parse_plan,
    tags_of,
)
from fastscale.infra.terraform.rollout.serving import (
    avoid_hint,
    cutover_counts,
    role_rename_notice,
    same_name_replacement,
)
from fastscale.infra.terraform.rollout.strategy import Capacity, Strategy, read_strategy, rollback_alarms

__all__ = [
    "COMPONENT_TYPE",
    "CONFIG_NAME_ATTRIBUTE",
    "CONFIG_TYPES",
    "ENDPOINT_TYPE",
    "NAME_ATTRIBUTE",
    "ROLE_TYPE",
    "ROLLOUT_ATTRIBUTES",
    "SCALING_TARGET_TYPE",
    "SERVING_TYPES",
    "TYPE_LABELS",
    "UNIQUE_NAME_ATTRIBUTE",
    "Capacity",
    "ChangeKind",
    "ClassifiedChange",
    "OwnershipChange",
    "PlanClassification",
    "PlanFormatError",
    "ResourceChange",
    "RolloutDuration",
    "RolloutInputs",
    "Strategy",
    "avoid_hint",
    "changed_attributes",
    "classify_change",
    "classify_plan",
    "ownership_changes",
    "cutover_counts",
    "nested_block",
    "parse_plan",
    "path_text",
    "tags_of",
    "read_strategy",
    "role_rename_notice",
    "rollback_alarms",
    "rollout_duration",
    "rollout_inputs",
    "same_name_replacement",
]
