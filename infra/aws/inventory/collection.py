"""The inventory of a stack, and the two things done with its proofs: claiming log groups, telling who owns a
live endpoint."""

from __future__ import annotations

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import (
    AwsClients,
    ClientsArg,
    paginate,
    resolve,
    translate_errors,
)
from fastscale.infra.aws.inventory.kinds import KINDS
from fastscale.infra.aws.inventory.model import NOT_OURS, Inventory, Ownership, Resource, tag_ownership
from fastscale.infra.aws.inventory.scan import Scan
from fastscale.infra.model.naming import (
    TAG_STACK,
)
from fastscale.infra.model.resolved import ResolvedStack


@translate_errors
def take_inventory(stack: ResolvedStack, clients: ClientsArg = None) -> Inventory:
    """Everything of ``stack`` in the account, and everything found by its names that is not its own."""
    scan = Scan(resolve(clients, stack), stack)
    scan.tag_index()
    for kind in KINDS:
        kind.discover(scan)
    inventory = scan.inventory
    for arn, tags in scan.tagged_other:
        ownership = scan.ownership(tags)
        detail = "a resource type fastscale does not create or delete: delete it by hand"
        inventory.resources.append(Resource("tagged-resource", arn, arn, "", detail, "tag", ownership if not ownership.ours else Ownership(NOT_OURS, f"tagged {TAG_STACK}={scan.stack}, but " + detail)))
    inventory.owners_checked = [f"endpoint {n.name}" for n in scan.names] + [
        f"inference component {c.name}" for n in scan.names for c in n.components
    ]
    return inventory


def claim_log_groups(inventory: Inventory, stack: ResolvedStack, clients: ClientsArg = None) -> list[str]:
    """Tag the stack's log groups that only their endpoint or component proves its own, while that owner
    still exists: once the endpoint is deleted, nothing else could prove them, and `sweep --delete-logs`
    would have to leave them. Returns the names tagged."""
    aws = resolve(clients, stack)
    claimed = []
    for r in inventory.kept:
        if r.data.get("untagged") and r.arn:
            try:
                aws.logs.tag_resource(resourceArn=r.arn, tags=dict(stack.tags))
            except ClientError:
                continue  # best effort (e.g. no logs:TagResource): the logs stay, reported as kept
            r.data["untagged"] = False
            claimed.append(r.name)
    return claimed


def ownership_of_endpoint(aws: AwsClients, stack: ResolvedStack, arn: str) -> Ownership:
    """Who owns a live endpoint (for `status`): its tags."""
    tags = {t["Key"]: t["Value"] for t in paginate(aws.sagemaker, "list_tags", "Tags", ResourceArn=arn)}
    return tag_ownership(tags, stack.name, stack.region)
