"""What a stack owns in AWS: the one inventory behind destroy's proof, verify-cleanup, sweep, status and
the name check of plan and deploy.

Each resource kind is one :class:`Kind` entry in :data:`KINDS`, declaring how it is found (exact name,
name prefix, tag, or through its owner), how its owner is proven, how it is deleted, where it comes in the
deletion order and whether AWS deletes it asynchronously. Adding a kind is adding one entry there.

**A name or prefix match only finds candidates.** A candidate belongs to the stack only when

* its own tags name this stack (``fastscale:stack``), say ``managed-by=fastscale``, and do not name another
  region (``fastscale:region``; required on global resources such as IAM roles), or
* for what carries no tags of ours, its owner does: a scaling policy through its scalable target, a
  scalable target through the endpoint or component it scales (or its own tags once that is gone), a
  target-tracking alarm through its policy, a log group through its endpoint or component, or
* for the dashboard, the marker line the stack writes into its body (``naming.dashboard_marker``).

Everything else that was found is reported as "belongs to stack X, not touched" or "not created by this
stack, not touched": it is never deleted, never a leftover, never a reason to fail.

SageMaker and IAM compare names without regard to case, so SageMaker resources are listed and matched in
lower case: ``Chat-Prod-Qwen3`` is a candidate for ``chat-prod-qwen3``, to be proven like any other.

The package, one module per part: :mod:`.model` (ownership, resources, the inventory, the declaration of a
kind), :mod:`.kinds` (every kind and how it is deleted), :mod:`.discovery` (how each kind is found and proven),
:mod:`.scan` (one look at the account), :mod:`.collection` (the inventory of a stack). The names below are the
ones callers use.
"""

from __future__ import annotations

from fastscale.infra.aws.inventory.collection import claim_log_groups, ownership_of_endpoint, take_inventory
from fastscale.infra.aws.inventory.kinds import KIND, KINDS
from fastscale.infra.aws.inventory.model import (
    NO_MARKER,
    NO_REGION,
    NOT_OURS,
    OTHER_STACK,
    OURS,
    UNPROVEN,
    Inventory,
    Kind,
    Ownership,
    Resource,
    tag_ownership,
    through,
)
from fastscale.infra.aws.inventory.scan import Scan

__all__ = [
    "Inventory",
    "KIND",
    "KINDS",
    "Kind",
    "NOT_OURS",
    "NO_MARKER",
    "NO_REGION",
    "OTHER_STACK",
    "OURS",
    "Ownership",
    "Resource",
    "Scan",
    "UNPROVEN",
    "claim_log_groups",
    "ownership_of_endpoint",
    "tag_ownership",
    "take_inventory",
    "through",
]
