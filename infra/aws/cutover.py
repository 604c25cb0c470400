"""The live instance count of every endpoint of a config, for the cut-over count (`infra.model.cutover`).

Read-only: one DescribeEndpoint per endpoint. An endpoint that does not exist yet has no live count (its
first configuration starts at ``instances.initial``). The count is the larger of the variant's current and
desired instance counts: during a scale-out the desired count is what the fleet is growing to.
"""

from __future__ import annotations

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import ClientsArg, is_not_found, resolve, translate_errors
from fastscale.infra.model.resolved import ResolvedStack


@translate_errors
def live_instance_counts(stack: ResolvedStack, clients: ClientsArg = None) -> dict[str, int | None]:
    """The endpoint's name in AWS (``ResolvedEndpoint.name``: the adopted live name of an adopted endpoint, as
    ``infra.model.cutover.tfvars`` looks it up) -> live instance count of its variant (``ResolvedEndpoint.variant``)
    (None: no such endpoint, or no count yet)."""
    api = resolve(clients, stack).sagemaker
    out: dict[str, int | None] = {}
    for ep in stack.endpoints:
        name = ep.name
        try:
            described = api.describe_endpoint(EndpointName=name)
        except ClientError as exc:
            if is_not_found(exc):
                out[name] = None
                continue
            raise  # as an AwsError (translate_errors)
        counts = [
            int(v[key])
            for v in described.get("ProductionVariants") or []
            if v.get("VariantName") == ep.variant
            for key in ("CurrentInstanceCount", "DesiredInstanceCount")
            if isinstance(v.get(key), int)
        ]
        out[name] = max(counts) if counts else None
    return out
