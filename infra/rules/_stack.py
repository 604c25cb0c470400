"""Helpers shared by the rules about what will be built (`stack_rule`): walking the resolved stack with the
config paths its parts carry, and the capacity arithmetic on what it resolved.

Kept private (leading underscore) so the registry does not import it as a rule module.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import (
    ResolvedComponent,
    ResolvedEndpoint,
    ResolvedStack,
    ResolvedWorkload,
    ScaleFromZero,
)


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
