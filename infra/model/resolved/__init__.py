"""The resolved stack: a validated config as what it builds, with every name, tag, default, capacity,
scaling, routing, override and adopted name decided once (`resolve`), immutable.

The stacks take a `ResolvedStack` and nothing else of the config: a setting travels config -> `resolve` ->
consumer, so two consumers can never resolve one default two ways. The import-linter contracts in
pyproject.toml keep the raw config classes away from them.
"""

from fastscale.infra.model.resolved.resolve import SCALING_DEFAULTS, as_resolved, resolve
from fastscale.infra.model.resolved.types import (
    FALLBACK_SUGGESTIONS,
    Count,
    DataKey,
    Metrics,
    Placement,
    ResolvedAlarms,
    ResolvedComponent,
    ResolvedEndpoint,
    ResolvedPool,
    ResolvedRouting,
    ResolvedScaling,
    ResolvedStack,
    ResolvedWorkload,
    Resources,
    S3Backend,
    ScaleFromZero,
    ScaleIn,
    ScalingDefaults,
    Secret,
    TaggedResource,
    Vpc,
    ZeroAlarm,
)

__all__ = [
    "FALLBACK_SUGGESTIONS",
    "SCALING_DEFAULTS",
    "Count",
    "DataKey",
    "Metrics",
    "Placement",
    "ResolvedAlarms",
    "ResolvedComponent",
    "ResolvedEndpoint",
    "ResolvedPool",
    "ResolvedRouting",
    "ResolvedScaling",
    "ResolvedStack",
    "ResolvedWorkload",
    "Resources",
    "S3Backend",
    "ScaleFromZero",
    "ScaleIn",
    "ScalingDefaults",
    "Secret",
    "TaggedResource",
    "Vpc",
    "ZeroAlarm",
    "as_resolved",
    "resolve",
]
