"""The capacity settings of one endpoint as awscc attributes: instance pools, provision timeout, capacity
reservation, the scale-in policy of managed instance scaling, and where component copies are placed.

Pure functions of the resolved endpoint (plus the names of the models each pool runs), kept apart from
`stacks.endpoint` so the endpoint construct only asks for them. Which pools exist and what runs on each
is decided by `infra.model.capacity`, the same code the rules, verification and estimates use.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastscale.infra.model import capacity
from fastscale.infra.model.resolved import ResolvedEndpoint
from fastscale.stacks.resources.generated import awscc as awscc_props


def instance_pools(ep: ResolvedEndpoint, model_overrides: Mapping[int, str]) -> list[awscc_props.InstancePool]:
    """`InstancePools`, tried in priority order; ``model_overrides`` maps a priority to the model that pool
    runs instead of the variant's (single-model endpoints only)."""
    return [
        awscc_props.InstancePool(
            instance_type=pool.instance_type, priority=pool.priority, model_name_override=model_overrides.get(pool.priority)
        )
        for pool in ep.pools_by_priority
    ]


def reservation(ep: ResolvedEndpoint) -> awscc_props.CapacityReservationConfig | None:
    arn = ep.reservation_arn
    if not arn:
        return None
    return awscc_props.CapacityReservationConfig(capacity_reservation_preference=capacity.RESERVATIONS_ONLY, ml_reservation_arn=arn)


def variant_fields(ep: ResolvedEndpoint, model_overrides: Mapping[int, str]) -> dict[str, Any]:
    """What decides where the variant's instances come from: one `instance_type`, or `instance_pools` in its
    place (the API takes one or the other), plus the provision timeout and the reservation."""
    fields: dict[str, Any] = {
        "variant_instance_provision_timeout_in_seconds": ep.provision_timeout,
        "capacity_reservation_config": reservation(ep),
    }
    if ep.has_pools:
        fields["instance_pools"] = instance_pools(ep, model_overrides)
    else:
        fields["instance_type"] = ep.instance_type
    return fields


def scale_in_policy(ep: ResolvedEndpoint) -> awscc_props.ScaleInPolicy | None:
    policy = ep.scale_in
    if policy is None:
        return None
    return awscc_props.ScaleInPolicy(
        strategy=policy.strategy, cooldown_in_minutes=policy.cooldown_minutes, maximum_step_size=policy.max_step
    )


def scheduling(ep: ResolvedEndpoint) -> awscc_props.SchedulingConfig | None:
    """`SchedulingConfig` of every component of the endpoint, or None to leave placement to SageMaker."""
    placement = ep.placement
    if placement is None:
        return None
    return awscc_props.SchedulingConfig(
        placement_strategy=placement.strategy,
        availability_zone_balance=awscc_props.AvailabilityZoneBalance(
            enforcement_mode=capacity.AZ_BALANCE_PERMISSIVE, max_imbalance=placement.max_imbalance
        )
        if placement.az_balance
        else None,
    )
