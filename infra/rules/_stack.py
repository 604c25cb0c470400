"""Helpers shared by the rules about what will be built (`stack_rule`): walking the resolved stack with the
config paths its parts carry, and the capacity arithmetic on what it resolved.

Kept private (leading underscore) so the registry does not import it as a rule module.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from fastscale.infra.base import catalog
from fastscale.infra.model import instance_fit
from fastscale.infra.model.deployment import Rollout
from fastscale.infra.model.resolved import (
    ResolvedComponent,
    ResolvedEndpoint,
    ResolvedPool,
    ResolvedStack,
    ResolvedWorkload,
    ScaleFromZero,
)
from fastscale.infra.rules._common import WEIGHTS_MAX_SHARE, cheapest_instance_for, fmt_amount, gb_to_gib


def workloads(stack: ResolvedStack) -> Iterator[tuple[str, ResolvedEndpoint, ResolvedWorkload]]:
    """(path, endpoint, workload) for every single model and every inference component, as on the endpoint's
    own instance type; the path names the workload, e.g. 'endpoints[1].inference_components[2]'."""
    for ep in stack.endpoints:
        for w in ep.workloads:
            yield f"{ep.path}.{w.path}", ep, w


def autoscaled_workloads(stack: ResolvedStack) -> Iterator[tuple[str, ResolvedEndpoint, ResolvedWorkload]]:
    """Workloads whose auto scaling is enabled: only their scaling settings reach AWS."""
    for path, ep, w in workloads(stack):
        if w.scaling.enabled:
            yield path, ep, w


def components(stack: ResolvedStack) -> Iterator[tuple[str, ResolvedEndpoint, ResolvedComponent]]:
    """(path, endpoint, component) for every inference component."""
    for ep in stack.endpoints:
        for c in ep.components:
            yield f"{ep.path}.{c.path}", ep, c


def scale_from_zero_components(stack: ResolvedStack) -> Iterator[tuple[str, ResolvedComponent, ScaleFromZero]]:
    """(path, component, its scale-from-zero alarm and policy) for the components that get them."""
    for path, _ep, c in components(stack):
        if c.scaling.scale_from_zero is not None:
            yield path, c, c.scaling.scale_from_zero


def fallback_pools(stack: ResolvedStack) -> Iterator[tuple[str, ResolvedEndpoint, ResolvedPool]]:
    """(path, endpoint, pool) for every fallback pool; the path names the pool entry,
    e.g. 'endpoints[0].capacity.fallback[1]'."""
    for ep in stack.endpoints:
        for pool in ep.pools[1:]:
            yield f"{ep.path}.{pool.path}", ep, pool


# --------------------------------------------------------------------------------------------- model fit


@dataclass(frozen=True)
class MemoryFit:
    """How a model's weights compare with the accelerator memory available to it."""

    weights_gib: float
    available_gib: float
    devices: int  # devices the model may use: the component's reservation, or the whole instance
    per_device_gib: float
    accelerator_name: str
    accelerator_kind: str
    instance_devices: int
    architecture: str  # the container architecture the instance runs (infra.model.instance_fit)

    @property
    def weights_gib_with_headroom(self) -> float:
        return self.weights_gib / WEIGHTS_MAX_SHARE

    @property
    def share(self) -> float:
        return self.weights_gib / self.available_gib if self.available_gib else float("inf")

    def devices_needed(self) -> int:
        """Devices needed so the weights stay within WEIGHTS_MAX_SHARE."""
        return max(1, math.ceil(self.weights_gib_with_headroom / self.per_device_gib))

    def bigger_instance_hint(self) -> str:
        """How to get enough accelerator memory when the current instance type cannot provide it."""
        need = f"{fmt_amount(self.weights_gib_with_headroom, 0)} GiB of accelerator memory"
        better = cheapest_instance_for(self.weights_gib, self.architecture)
        if better:
            return f"use an instance type with at least {need}, e.g. {better}, or a smaller / quantized model"
        return f"the weights need at least {need}, more than any one instance offers: use a smaller / quantized model"


def memory_fit(workload: ResolvedWorkload, instance_type: str) -> MemoryFit | None:
    """How ``workload`` (as it runs on a pool of ``instance_type``) fits; None when there is nothing to compare:
    no model_size_gb, or an unknown / CPU instance type."""
    size = workload.model_size_gb
    spec = catalog.get(instance_type)
    if size is None or spec is None:
        return None
    if workload.resources is not None:  # a component: what one copy reserves
        devices = workload.resources.accelerators or 0
    else:
        devices = spec.accelerator_count
    return MemoryFit(
        weights_gib=gb_to_gib(size),
        available_gib=devices * spec.accelerator_memory_gib,
        devices=devices,
        per_device_gib=spec.accelerator_memory_gib,
        accelerator_name=spec.accelerator_name,
        accelerator_kind=spec.accelerator_kind,
        instance_devices=spec.accelerator_count,
        architecture=instance_fit.accelerator_architecture(spec),
    )


# --------------------------------------------------------------------------------------------- capacity


@dataclass(frozen=True)
class SharedResource:
    """One resource (accelerators, host memory or CPUs) of an inference-component endpoint at `instances.max`,
    with what each component's copy reserves of it. Only made when every copy fits on one instance (FS006
    reports a copy larger than an instance, which would otherwise be counted again here)."""

    key: str  # the `resources` field: accelerators, memory_mb, cpus
    unit: str  # as messages name it: "accelerator devices", ...
    per_instance: float
    instances: int  # instances.max
    per_copy: tuple[float, ...]  # one per component, in config order (0: the component does not reserve it)

    @property
    def available(self) -> float:
        return self.instances * self.per_instance

    def demand(self, copies: list[int]) -> float:
        """What the components need with ``copies`` copies each (same order as the components)."""
        return sum(n * r for n, r in zip(copies, self.per_copy, strict=True))

    def instances_for(self, demand: float) -> int:
        return math.ceil(demand / self.per_instance)


def shared_resources(ep: ResolvedEndpoint) -> list[SharedResource]:
    """The resources an inference-component endpoint shares among its components at `instances.max`; empty
    for a single-model endpoint, an unknown or CPU instance type, or `instances.max` below 1."""
    spec = catalog.get(ep.instance_type)
    if not ep.components or spec is None or ep.instances.max < 1:
        return []
    out = []
    for key, per_instance, unit in (
        ("accelerators", spec.accelerator_count, "accelerator devices"),
        ("memory_mb", int(spec.memory_gib * 1024), "MB of host memory"),
        ("cpus", spec.vcpus, "vCPUs"),
    ):
        per_copy = tuple(float(getattr(c.workload.resources, key) or 0) for c in ep.components)
        if per_instance <= 0 or any(r > per_instance for r in per_copy):
            continue
        out.append(SharedResource(key, unit, per_instance, ep.instances.max, per_copy))
    return out


def component_rollouts(stack: ResolvedStack) -> Iterator[tuple[ResolvedEndpoint, int, ResolvedComponent, Rollout]]:
    """(endpoint, index, component, its update) for every inference component. `configured_rollouts` holds one
    update per single-model endpoint and one per component, in config order."""
    updates = iter(stack.configured_rollouts)
    for ep in stack.endpoints:
        if ep.model is not None:
            next(updates, None)
            continue
        for j, c in enumerate(ep.components):
            update = next(updates, None)
            if update is not None:
                yield ep, j, c, update
