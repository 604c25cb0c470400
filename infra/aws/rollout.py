"""Following a rollout, and telling a rolled-back one from a finished one.

When a deploy changes a live endpoint's configuration or a component's model, SageMaker rolls the new
version out (rolling batches or blue/green traffic shifting) while Terraform waits. Two things are not
visible in Terraform's output:

- progress: which stage the rollout is in (new fleet starting, traffic shifting, baking), read from
  DescribeEndpoint (status, the pending deployment's variant states and instance counts) and
  DescribeInferenceComponent (status, current and desired copies);
- the result: after an automatic rollback the endpoint or component is InService again, on the *old*
  version, and Terraform may report success. So a rollout is judged by what is live at the end: a
  RollingBack status seen on the way, a failure reason written during the deploy, or a live version
  other than the one the apply set all mean the new version is not serving.

A rolled-back deployment names the alarm that stopped it: an alarm the failure reason names, else the
rollback alarm whose history shows a change to ALARM since the deploy started, else one in ALARM now.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from botocore.client import BaseClient
from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import (
    AwsError,
    ClientsArg,
    as_aws_error,
    is_not_found,
    is_throttling,
    resolve,
    translate_errors,
)
from fastscale.infra.aws.waiters import (
    DEFAULT_POLL_INTERVAL,
    SYSTEM_CLOCK,
    Clock,
    Deadline,
    Poll,
    Progress,
    ProgressCallback,
    WaitTimeout,
    wait_until,
)
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.terraform.rollout import ENDPOINT_TYPE

if TYPE_CHECKING:
    from fastscale.infra.terraform.rollout import PlanClassification

ENDPOINT = "endpoint"
COMPONENT = "inference component"

#: Statuses while a rollout (or its rollback) is still moving.
_MOVING = {
    ENDPOINT: frozenset({"Creating", "Updating", "SystemUpdating", "RollingBack"}),
    COMPONENT: frozenset({"Creating", "Updating"}),
}
#: Statuses that end a deployment as failed outright.
_FAILED = frozenset({"Failed", "UpdateRollbackFailed", "OutOfService"})

SUCCEEDED, ROLLED_BACK, FAILED, TIMED_OUT = "succeeded", "rolled_back", "failed", "timed_out"


@dataclass(frozen=True)
class RolloutTarget:
    """One endpoint or component the plan rolls out, and what the apply should leave live on it."""

    kind: str  # ENDPOINT or COMPONENT
    name: str
    address: str
    alarms: tuple[str, ...] = ()  # the planned deployment configuration's rollback alarms
    expected: str | None = None  # endpoint configuration name / model name after the apply; None: unknown


@dataclass(frozen=True)
class Observation:
    elapsed: float
    status: str
    detail: str = ""
    failure_reason: str = ""
    live_version: str | None = None  # endpoint configuration / model name live now
    modified: datetime | None = None
    #: The rollback alarms SageMaker recorded for its last deployment (LastDeploymentConfig).
    deployment_alarms: tuple[str, ...] = ()

    def text(self) -> str:
        return self.status + (f": {self.detail}" if self.detail else "")


@dataclass
class RolloutOutcome:
    target: RolloutTarget
    outcome: str  # SUCCEEDED, ROLLED_BACK, FAILED or TIMED_OUT
    status: str
    why: str = ""
    failure_reason: str = ""
    alarm: str | None = None
    alarm_evidence: str = ""
    observations: list[Observation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome == SUCCEEDED

    def message(self) -> str:
        head = f"{self.target.kind} {self.target.name}"
        if self.outcome == SUCCEEDED:
            return f"{head}: new version in service ({self.status})"
        if self.outcome == TIMED_OUT:
            return f"{head}: still {self.status} when the wait ended; the rollout goes on in SageMaker"
        text = f"{head}: {'rolled back' if self.outcome == ROLLED_BACK else 'deployment failed'} ({self.why})"
        if self.alarm:
            text += f"; alarm {self.alarm} fired ({self.alarm_evidence})"
        elif self.target.alarms:
            text += f"; none of its rollback alarms ({', '.join(self.target.alarms)}) is or was in ALARM"
        if self.failure_reason:
            text += f"; SageMaker says: {self.failure_reason}"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.target.kind,
            "name": self.target.name,
            "address": self.target.address,
            "outcome": self.outcome,
            "ok": self.ok,
            "status": self.status,
            "why": self.why or None,
            "failure_reason": self.failure_reason or None,
            "alarm": self.alarm,
            "alarm_evidence": self.alarm_evidence or None,
            "rollback_alarms": list(self.target.alarms),
            "expected_version": self.target.expected,
            "observations": [
                {"elapsed": round(o.elapsed, 1), "status": o.status, "detail": o.detail or None} for o in self.observations
            ],
        }


# --------------------------------------------------------------------------------------------- describe


def _endpoint_detail(resp: Mapping[str, Any]) -> str:
    pending = resp.get("PendingDeploymentSummary") or {}
    parts = []
    for variant in pending.get("ProductionVariants") or resp.get("ProductionVariants") or []:
        states = [s.get("Status", "") + (f" ({s['StatusMessage']})" if s.get("StatusMessage") else "")
                  for s in variant.get("VariantStatus") or []]
        counts = ""
        if variant.get("DesiredInstanceCount") is not None:
            counts = f"{variant.get('CurrentInstanceCount', 0)} of {variant['DesiredInstanceCount']} instances"
        text = ", ".join(p for p in [", ".join(states), counts] if p)
        if text:
            parts.append(f"{variant.get('VariantName', '?')} {text}")
    if pending.get("EndpointConfigName"):
        parts.insert(0, f"to {pending['EndpointConfigName']}")
    return "; ".join(parts)


def _deployment_alarms(resp: Mapping[str, Any]) -> tuple[str, ...]:
    config = (resp.get("LastDeploymentConfig") or {}).get("AutoRollbackConfiguration") or {}
    return tuple(a["AlarmName"] for a in config.get("Alarms") or [] if a.get("AlarmName"))


def observe(api: BaseClient, target: RolloutTarget, elapsed: float) -> Observation | None:
    """One look at the target (None when it does not exist)."""
    try:
        if target.kind == ENDPOINT:
            resp = api.describe_endpoint(EndpointName=target.name)
            return Observation(elapsed, resp.get("EndpointStatus", "?"), _endpoint_detail(resp),
                               resp.get("FailureReason") or "", resp.get("EndpointConfigName"),
                               resp.get("LastModifiedTime"), _deployment_alarms(resp))
        resp = api.describe_inference_component(InferenceComponentName=target.name)
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise
    runtime = resp.get("RuntimeConfig") or {}
    detail = ""
    if runtime.get("DesiredCopyCount") is not None:
        detail = f"{runtime.get('CurrentCopyCount', 0)} of {runtime['DesiredCopyCount']} copies"
    spec = resp.get("Specification") or {}
    return Observation(elapsed, resp.get("InferenceComponentStatus", "?"), detail, resp.get("FailureReason") or "",
                       spec.get("ModelName"), resp.get("LastModifiedTime"), _deployment_alarms(resp))


# --------------------------------------------------------------------------------------------- judge


def judge(target: RolloutTarget, seen: list[Observation], started: datetime, settled: bool) -> tuple[str, str]:
    """(outcome, why) from what was seen, the last observation being the live state now.

    The live version decides when it is known (an old failure reason left on a resource must not fail a
    good update); otherwise a RollingBack status on the way, or a failure reason written during the deploy.
    """
    if not seen:
        return FAILED, f"the {target.kind} does not exist"
    last = seen[-1]
    if last.status in _FAILED:
        return FAILED, f"status {last.status}"
    if not settled:
        return TIMED_OUT, f"still {last.status}"
    rolled = any(o.status == "RollingBack" for o in seen)
    if target.expected and last.live_version:
        if last.live_version == target.expected:
            return SUCCEEDED, ""
        return ROLLED_BACK, ("SageMaker rolled the update back: " if rolled else "") + (
            f"{last.live_version} is live instead of {target.expected}")
    if rolled:
        return ROLLED_BACK, "SageMaker rolled the update back"
    if last.failure_reason and (last.modified is None or last.modified >= started):
        return ROLLED_BACK, "SageMaker reported a failure during the deploy"
    return SUCCEEDED, ""


def _history_alarm_times(api: BaseClient, name: str, started: datetime) -> list[datetime]:
    """When ``name`` went into ALARM since ``started``, from its state-change history."""
    times = []
    resp = api.describe_alarm_history(AlarmName=name, HistoryItemType="StateUpdate", StartDate=started)
    for item in resp.get("AlarmHistoryItems") or []:
        new_state = ""
        try:
            new_state = str(json.loads(item.get("HistoryData") or "{}").get("newState", {}).get("stateValue", ""))
        except ValueError:
            pass
        if new_state == "ALARM" or (not new_state and "to ALARM" in (item.get("HistorySummary") or "")):
            times.append(item["Timestamp"])
    return times


def find_fired_alarm(cloudwatch: BaseClient, alarms: Iterable[str], failure_reason: str, started: datetime) -> tuple[str | None, str]:
    """(alarm name, how it was found) among the rollback ``alarms``, or (None, "") when none fired."""
    names = list(dict.fromkeys(alarms))
    for name in names:
        if name and name in failure_reason:
            return name, "named in the failure reason"
    fired: list[tuple[datetime, str]] = []
    for name in names:
        fired += [(when, name) for when in _history_alarm_times(cloudwatch, name, started)]
    if fired:
        when, name = min(fired)
        return name, f"went into ALARM at {when:%H:%M:%S %Z}".rstrip()
    if names:
        resp = cloudwatch.describe_alarms(AlarmNames=names[:100])
        for alarm in resp.get("MetricAlarms", []) + resp.get("CompositeAlarms", []):
            if alarm.get("StateValue") == "ALARM":
                return str(alarm["AlarmName"]), "in ALARM now"
    return None, ""


# --------------------------------------------------------------------------------------------- follower


class RolloutFollower:
    """Watches the endpoints and components a deploy rolls out.

    While Terraform applies, :meth:`on_event` (chained to the runner's event callback) takes a look at a
    target whenever Terraform reports it still in progress, at most every ``interval`` seconds, and reports
    what it sees. After the apply, :meth:`finish` waits (bounded) until every target has settled and judges
    each rollout. Errors while looking during the apply are reported, not raised: they must never stop
    Terraform's own run.
    """

    def __init__(
        self,
        targets: Iterable[RolloutTarget],
        started: datetime,
        clients: ClientsArg = None,
        region: str = "us-east-1",
        *,
        clock: Clock = SYSTEM_CLOCK,
        interval: float = DEFAULT_POLL_INTERVAL,
        on_progress: ProgressCallback | None = None,
    ):
        self.targets = {t.address: t for t in targets}
        self.started = started
        self.clients = resolve(clients, region)
        self.clock = clock
        self.interval = interval
        self.on_progress = on_progress
        self.begin = clock.now()
        self.seen: dict[str, list[Observation]] = {a: [] for a in self.targets}
        self._last_look: dict[str, float] = {}
        self.notes: list[str] = []

    def _what(self, target: RolloutTarget) -> str:
        return f"rollout of {target.kind} {target.name}"

    def _look(self, target: RolloutTarget) -> Observation | None:
        self._last_look[target.address] = self.clock.now()
        found = observe(self.clients.sagemaker, target, self.clock.now() - self.begin)
        if found is not None:
            seen = self.seen[target.address]
            if not seen or (seen[-1].status, seen[-1].detail) != (found.status, found.detail):
                seen.append(found)
            else:
                seen[-1] = found  # same state: keep the newest look (failure reason, live version)
        return found

    def on_event(self, event: Any) -> None:
        """``on_event`` hook: a look at a target Terraform reports as still being changed."""
        target = self.targets.get(getattr(event, "address", None) or "")
        if target is None or getattr(event, "kind", "") not in ("apply_start", "apply_progress"):
            return
        last = self._last_look.get(target.address)
        if last is not None and self.clock.now() - last < self.interval:
            return
        try:
            found = self._look(target)
        except (ClientError, AwsError) as exc:
            if not (isinstance(exc, ClientError) and is_throttling(exc)):
                self.notes.append(f"could not read the progress of {target.kind} {target.name}: {as_aws_error(exc) if isinstance(exc, ClientError) else exc}")
            return
        if self.on_progress is not None:
            state = found.text() if found else "not found yet"
            self.on_progress(Progress(self._what(target), state, self.clock.now() - self.begin, 0.0))

    @translate_errors
    def finish(self, timeout: float, expected: Mapping[str, str] | None = None) -> list[RolloutOutcome]:
        """Wait (at most ``timeout`` seconds in all) for every target to settle, then judge each one.
        ``expected`` (SageMaker name -> version) adds what only the apply could tell (see
        :func:`expected_versions`)."""
        deadline = Deadline(timeout, self.clock)
        outcomes = []
        for target in self.targets.values():
            target = replace(target, expected=(expected or {}).get(target.name, target.expected))

            def probe(target: RolloutTarget = target) -> Poll:
                found = self._look(target)
                if found is None:
                    return Poll(True, "not found")
                return Poll(found.status not in _MOVING[target.kind], found.text(), found)

            settled, exists = True, True
            try:
                exists = wait_until(self._what(target), probe, deadline=deadline, interval=self.interval,
                                    on_progress=self.on_progress).value is not None
            except WaitTimeout as exc:
                settled, exists = False, exc.last_value is not None
            seen = self.seen[target.address] if exists else []
            outcome, why = judge(target, seen, self.started, settled)
            last = seen[-1] if seen else None
            result = RolloutOutcome(target, outcome, last.status if last else "not found", why,
                                    last.failure_reason if last else "", observations=list(seen))
            if outcome in (ROLLED_BACK, FAILED):
                alarms = target.alarms + (last.deployment_alarms if last else ())
                result.alarm, result.alarm_evidence = find_fired_alarm(
                    self.clients.cloudwatch, alarms, result.failure_reason, self.started)
            outcomes.append(result)
        return outcomes


def expected_versions(outputs: Mapping[str, Any], components: Mapping[str, str]) -> dict[str, str]:
    """What the apply should leave live, by SageMaker name: each endpoint's configuration (from the stack's
    outputs, which hold ``endpoint_name`` and ``endpoint_config_name`` per endpoint) and each component's
    model (``components``: name -> model name, from the resolved stack: :func:`component_models`)."""
    found = dict(components)
    for value in outputs.values():
        if isinstance(value, Mapping) and value.get("endpoint_name") and value.get("endpoint_config_name"):
            found[str(value["endpoint_name"])] = str(value["endpoint_config_name"])
    return found


def component_models(stack: ResolvedStack) -> dict[str, str]:
    """The model each component of the stack runs, by component name (components on fallback pools run
    one model per pool and are left out)."""
    return {c.name: c.workload.model for ep in stack.endpoints if not ep.has_pools for c in ep.components}


def rollout_targets(classification: PlanClassification) -> list[RolloutTarget]:
    """What to follow: every endpoint and component the plan rolls out (rolling or blue/green)."""
    return [
        RolloutTarget(ENDPOINT if c.type == ENDPOINT_TYPE else COMPONENT, c.name, c.address,
                      c.strategy.alarms if c.strategy else ())
        for c in classification.rollouts if c.name
    ]
