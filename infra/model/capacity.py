"""Instance pools: the endpoint's own instance type plus its ordered fallbacks, and what runs on each.

One place decides the effective pools and the model / component settings on each pool type, so the
rules, the stacks, live verification, the quota preflight and the estimate all agree on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from fastscale.infra.config import (
    ComponentOverride,
    EndpointSpec,
    FallbackPool,
    InferenceComponentSpec,
    ModelOverride,
    ModelSpec,
)

#: `ProductionVariant.InstancePools`: at most five pools, priorities 1 (first) to 5.
MAX_POOLS = 5
PRIORITY_MIN, PRIORITY_MAX = 1, 5
#: `VariantInstanceProvisionTimeoutInSeconds` bounds.
PROVISION_TIMEOUT_MIN, PROVISION_TIMEOUT_MAX = 300, 3600
#: `CapacityReservationConfig.CapacityReservationPreference`: the only value the API has.
RESERVATIONS_ONLY = "capacity-reservations-only"
#: `InferenceComponentAvailabilityZoneBalance.EnforcementMode`: the only value the API has.
AZ_BALANCE_PERMISSIVE = "PERMISSIVE"
#: `AvailabilityZoneBalanceMaxImbalance` bounds.
MAX_IMBALANCE_MIN, MAX_IMBALANCE_MAX = 0, 100
#: `ProductionVariantManagedInstanceScalingScaleInPolicy` bounds.
SCALE_IN_COOLDOWN_MIN, SCALE_IN_COOLDOWN_MAX = 5, 1440
SCALE_IN_STEP_MIN, SCALE_IN_STEP_MAX = 1, 100
#: What SageMaker uses when the scale-in policy leaves them out (API reference).
SCALE_IN_DEFAULT_COOLDOWN_MINUTES = 20
SCALE_IN_DEFAULT_STEP = 1

_OVERRIDE_KEYS = ("image", "model_data", "model_size_gb", "image_size_gb", "environment")


@dataclass(frozen=True)
class Pool:
    """One instance pool of an endpoint's variant."""

    priority: int
    instance_type: str
    path: str  # config path below the endpoint: "instance_type" or "capacity.fallback[i]"
    fallback: FallbackPool | None  # None for the endpoint's own instance type


def has_pools(ep: EndpointSpec) -> bool:
    """Fallback types are configured: the variant gets InstancePools instead of InstanceType."""
    return bool(ep.capacity.fallback)


def pools(ep: EndpointSpec) -> list[Pool]:
    """The endpoint's own type (priority 1) then each fallback, in config order."""
    out = [Pool(PRIORITY_MIN, ep.instance_type, "instance_type", None)]
    for i, fb in enumerate(ep.capacity.fallback):
        priority = fb.priority if fb.priority is not None else i + 2
        out.append(Pool(priority, fb.instance_type, f"capacity.fallback[{i}]", fb))
    return out


def pools_by_priority(ep: EndpointSpec) -> list[Pool]:
    """The pools in the order SageMaker tries them (config order breaks a tie, which a rule reports)."""
    return sorted(pools(ep), key=lambda p: p.priority)


def next_pool(ep: EndpointSpec) -> Pool | None:
    """The pool SageMaker turns to when the first one has no capacity (None without fallback types)."""
    return pools_by_priority(ep)[1] if has_pools(ep) else None


def instance_types(ep: EndpointSpec) -> list[str]:
    """Every instance type the endpoint may run on, primary first, without repeats."""
    return list(dict.fromkeys(p.instance_type for p in pools(ep)))


W = TypeVar("W", ModelSpec, InferenceComponentSpec)


def _merge(base: W, override: ModelOverride | None) -> W:
    if override is None:
        return base
    update = {k: getattr(override, k) for k in _OVERRIDE_KEYS if getattr(override, k) is not None}
    if isinstance(override, ComponentOverride) and override.resources is not None:
        update["resources"] = override.resources
    return base.model_copy(update=update) if update else base


def model_on(pool: Pool, model: ModelSpec) -> ModelSpec:
    """The single model as it runs on ``pool``: the endpoint's model with the pool's override applied."""
    return _merge(model, pool.fallback.model if pool.fallback else None)


def component_override(pool: Pool, component: InferenceComponentSpec) -> ComponentOverride | None:
    return pool.fallback.components.get(component.name) if pool.fallback else None


def component_on(pool: Pool, component: InferenceComponentSpec) -> InferenceComponentSpec:
    """A component as it runs on ``pool``: its settings with the pool's override for it applied."""
    return _merge(component, component_override(pool, component))


def workload_on(pool: Pool, workload: ModelSpec | InferenceComponentSpec) -> ModelSpec | InferenceComponentSpec:
    if isinstance(workload, InferenceComponentSpec):
        return component_on(pool, workload)
    return model_on(pool, workload)


def every_workload(ep: EndpointSpec) -> list[ModelSpec | InferenceComponentSpec]:
    """The model or every component as it runs on each pool (the endpoint's own first), for what must
    cover all of them, such as the execution role's access to images and model data."""
    out = []
    for pool in pools(ep):
        for _, workload in ep.workloads():
            effective = workload_on(pool, workload)
            if effective not in out:
                out.append(effective)
    return out


def needs_awscc_config(ep: EndpointSpec) -> bool:
    """Settings hashicorp/aws 6.25's endpoint configuration cannot express, so awscc's is used
    (`EndpointSpec.needs_awscc_config`, which the stack's provider list reads too)."""
    return ep.needs_awscc_config
