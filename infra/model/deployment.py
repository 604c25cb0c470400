"""How updates roll out: the effective update settings of every endpoint and inference component.

An update (new image, model data or setting) of a live endpoint is a SageMaker deployment:

- an inference component rolls: a batch of new copies starts, takes traffic and is watched for the bake
  time, then the same number of old copies stops, until every copy runs the new version
  (`UpdateInferenceComponent.DeploymentConfig.RollingUpdatePolicy`);
- a single-model endpoint goes blue/green (a new fleet starts, traffic moves to it all at once, as a canary
  or in linear steps, each step baked) or rolls instance batches (`UpdateEndpoint.DeploymentConfig`).

Either way SageMaker watches CloudWatch alarms while it bakes and rolls back when one fires
(`AutoRollbackConfiguration`). The alarms are this stack's own: the endpoint's model-latency and 5xx
alarms for a single-model endpoint, the component's own ones for a component (an endpoint-wide alarm
would roll one component back for another's errors).

This module resolves the config into what the stacks synthesize and the rules check: the strategy, the
bake time (a default derived from the alarms' evaluation window), and the alarm names. Pure Python, like
all of `infra`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fastscale.infra.base.aws_facts import BAKE_TIME_MAX_S
from fastscale.infra.config import (
    BlueGreen,
    ComponentRolling,
    EndpointRolling,
    FastscaleConfig,
)
from fastscale.infra.model.naming import ComponentNames, EndpointNames, all_endpoint_names
from fastscale.infra.model.update_settings import component_settings

#: The stuck-at-zero alarm counts capacity failures per minute.
STUCK_AT_ZERO_PERIOD_S = 60

@dataclass(frozen=True)
class StackAlarm:
    """A health alarm the stack creates: its name, kind, and the window it evaluates."""

    name: str
    kind: str
    period: int
    evaluation_periods: int

    @property
    def window(self) -> int:
        """Seconds of breaching data the alarm needs before it fires (period x evaluation periods)."""
        return self.period * self.evaluation_periods


#: The kind of a component's stuck-at-zero alarm, as rollback alarm lists may name it.
STUCK_AT_ZERO_KIND = "stuck-at-zero"


def endpoint_alarms(names: EndpointNames) -> list[StackAlarm]:
    """The endpoint-level health alarms of an endpoint (latency, 5xx, GPU memory)."""
    a = names.spec.alarms
    return [StackAlarm(name, kind, a.period, a.evaluation_periods) for kind, name in names.alarms.items()]


def component_alarms(names: EndpointNames, c: ComponentNames) -> list[StackAlarm]:
    """A component's own health alarms: its rollback alarms and its stuck-at-zero alarm."""
    a = names.spec.alarms
    out = [StackAlarm(name, kind, a.period, a.evaluation_periods) for kind, name in c.alarms.items()]
    if c.stuck_at_zero_alarm:
        out.append(StackAlarm(c.stuck_at_zero_alarm, STUCK_AT_ZERO_KIND, STUCK_AT_ZERO_PERIOD_S, a.stuck_at_zero_minutes))
    return out


def stack_alarms(every: list[EndpointNames]) -> dict[str, StackAlarm]:
    """Every health alarm of the stack by name (scaling alarms are triggers, not health signals: left out)."""
    out: dict[str, StackAlarm] = {}
    for names in every:
        for alarm in endpoint_alarms(names):
            out[alarm.name] = alarm
        for c in names.components:
            for alarm in component_alarms(names, c):
                out[alarm.name] = alarm
    return out


@dataclass(frozen=True)
class Rollout:
    """The update of one endpoint or component as the stack configures it."""

    target: str  # the endpoint's or component's resource name
    component: str | None  # the component's config name, None for a single-model endpoint
    strategy: Literal["rolling", "blue_green"]
    rolling: ComponentRolling | EndpointRolling | None
    blue_green: BlueGreen | None
    bake_time: int  # seconds, the configured one or the default
    bake_time_set: bool  # configured (True) or derived from the alarms (False)
    settings_path: str  # config path of the strategy's settings
    auto_rollback: bool
    alarms_path: str  # config path of the rollback alarm list
    alarms: tuple[StackAlarm, ...]  # resolved rollback alarms (empty without auto rollback)
    unresolved: tuple[tuple[int, str], ...]  # (index in the list, reference) of names the stack does not create

    @property
    def batch_chosen(self) -> bool:
        """Whether the file sets the rolling batch (the component's own or the endpoint's), rather than
        fastscale's default."""
        return self.rolling is not None and "batch" in self.rolling.model_fields_set

    @property
    def alarm_window(self) -> int:
        """The longest evaluation window among the rollback alarms (0 without any)."""
        return max((a.window for a in self.alarms), default=0)


def default_bake_time(alarms: tuple[StackAlarm, ...], fallback: StackAlarm) -> int:
    """The longest evaluation window plus one period (the last datapoint arrives after its period ends), at most
    the API's maximum. Without rollback alarms, the window of the endpoint's latency and 5xx alarms."""
    longest = max(alarms or (fallback,), key=lambda a: (a.window + a.period))
    return min(longest.window + longest.period, BAKE_TIME_MAX_S)


def _resolve(
    refs: tuple[str, ...], own: list[StackAlarm], endpoint: list[StackAlarm], everything: dict[str, StackAlarm]
) -> tuple[tuple[StackAlarm, ...], tuple[tuple[int, str], ...]]:
    """Kinds resolve to the target's own alarm of that kind first, then the endpoint's; names to any health
    alarm of the stack."""
    found: list[StackAlarm] = []
    missing: list[tuple[int, str]] = []
    for i, ref in enumerate(refs):
        by_kind = [a for a in own if a.kind == ref] or [a for a in endpoint if a.kind == ref]
        alarm = by_kind[0] if by_kind else everything.get(ref)
        if alarm is None:
            missing.append((i, ref))
        elif alarm not in found:
            found.append(alarm)
    return tuple(found), tuple(missing)


def rollouts(config: FastscaleConfig) -> list[Rollout]:
    """The update of every single-model endpoint and every inference component, in config order."""
    every = all_endpoint_names(config)
    everything = stack_alarms(every)
    return [r for i, names in enumerate(every) for r in endpoint_rollouts(names, everything, f"endpoints[{i}]")]


def endpoint_rollouts(names: EndpointNames, everything: dict[str, StackAlarm], ep_path: str) -> list[Rollout]:
    """The rollouts of one endpoint: itself (single model) or each of its components."""
    ep = names.spec
    a = ep.alarms
    fallback = StackAlarm("", "", a.period, a.evaluation_periods)
    ep_alarms = endpoint_alarms(names)
    if ep.model is not None:
        dep = ep.deployment
        refs = tuple(dep.rollback_alarms) if dep.auto_rollback else ()
        found, missing = _resolve(refs, ep_alarms, [], everything)
        if dep.rolling is not None and dep.blue_green is None:
            strategy: Literal["rolling", "blue_green"] = "rolling"
            rolling: EndpointRolling | None = dep.rolling
            blue_green: BlueGreen | None = None
            bake, where = dep.rolling.bake_time, f"{ep_path}.deployment.rolling"
        else:
            strategy, rolling, blue_green = "blue_green", None, dep.blue_green or BlueGreen()
            bake, where = blue_green.bake_time, f"{ep_path}.deployment.blue_green"
        return [
            Rollout(
                target=names.endpoint,
                component=None,
                strategy=strategy,
                rolling=rolling,
                blue_green=blue_green,
                bake_time=bake if bake is not None else default_bake_time(found, fallback),
                bake_time_set=bake is not None,
                settings_path=where,
                auto_rollback=dep.auto_rollback,
                alarms_path=f"{ep_path}.deployment.rollback_alarms",
                alarms=found,
                unresolved=missing,
            )
        ]
    out = []
    for j, c in enumerate(names.components):
        s = component_settings(ep, c.spec, ep_path, f"{ep_path}.inference_components[{j}]")
        refs = s.rollback_alarms if s.auto_rollback else ()
        found, missing = _resolve(refs, component_alarms(names, c), ep_alarms, everything)
        bake = s.rolling.bake_time
        out.append(
            Rollout(
                target=c.name,
                component=c.spec.name,
                strategy="rolling",
                rolling=s.rolling,
                blue_green=None,
                bake_time=bake if bake is not None else default_bake_time(found, fallback),
                bake_time_set=bake is not None,
                settings_path=s.rolling_path,
                auto_rollback=s.auto_rollback,
                alarms_path=s.alarms_path,
                alarms=found,
                unresolved=missing,
            )
        )
    return out
