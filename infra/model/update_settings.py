"""A component's update settings once its own `deployment` is laid over the endpoint's, and the alarm kinds
rollback watches: what both the names (:mod:`infra.model.naming`, which names those alarms) and the rollouts
(:mod:`infra.model.deployment`) are built from. Pure Python on the config."""

from __future__ import annotations

from dataclasses import dataclass

from fastscale.infra.config import ComponentRolling, EndpointSpec, InferenceComponentSpec

#: Alarm kinds a component has of its own when rollback watches them (metric per `InferenceComponentName`).
COMPONENT_ROLLBACK_KINDS = ("5xx-errors", "model-latency")
#: Alarm kinds the stack creates for rollback even when `alarms.enabled` is false.
ROLLBACK_ONLY_KINDS = COMPONENT_ROLLBACK_KINDS


@dataclass(frozen=True)
class ComponentSettings:
    """A component's update settings once its own `deployment` is laid over the endpoint's."""

    auto_rollback: bool
    rollback_alarms: tuple[str, ...]
    rolling: ComponentRolling
    #: config paths of where each setting came from (the component's override or the endpoint)
    alarms_path: str
    rolling_path: str



def component_settings(ep: EndpointSpec, comp: InferenceComponentSpec, ep_path: str = "", comp_path: str = "") -> ComponentSettings:
    own = comp.deployment
    dep = ep.deployment
    alarms_own = own is not None and own.rollback_alarms is not None
    rolling_own = own is not None and own.rolling is not None
    return ComponentSettings(
        auto_rollback=own.auto_rollback if own is not None and own.auto_rollback is not None else dep.auto_rollback,
        rollback_alarms=tuple(own.rollback_alarms if own is not None and own.rollback_alarms is not None else dep.rollback_alarms),
        rolling=own.rolling if own is not None and own.rolling is not None else dep.components,
        alarms_path=f"{comp_path}.deployment.rollback_alarms" if alarms_own else f"{ep_path}.deployment.rollback_alarms",
        rolling_path=f"{comp_path}.deployment.rolling" if rolling_own else f"{ep_path}.deployment.components",
    )


def component_alarm_kinds(ep: EndpointSpec, comp: InferenceComponentSpec) -> tuple[str, ...]:
    """The kinds of alarm a component has of its own for rollback: those its rollback names."""
    settings = component_settings(ep, comp)
    if not settings.auto_rollback:
        return ()
    return tuple(k for k in COMPONENT_ROLLBACK_KINDS if k in settings.rollback_alarms)


def rollback_only_endpoint_kinds(ep: EndpointSpec) -> tuple[str, ...]:
    """Endpoint alarm kinds created for rollback alone: a single-model endpoint whose operational alarms are
    off still gets the 5xx and latency alarms its rollback watches."""
    if ep.alarms.enabled or ep.model is None or not ep.deployment.auto_rollback:
        return ()
    return tuple(k for k in ROLLBACK_ONLY_KINDS if k in ep.deployment.rollback_alarms)


