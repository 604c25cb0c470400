"""Delete what a failed or partial ``destroy`` left behind, in the order AWS allows.

The order matters and is forced by AWS:

1. alarms fastscale created (deleting a step policy does not delete the alarm that triggers it);
2. scaling policies, then scalable targets;
3. inference components, adapters before their base. Deletion is asynchronous and refused while a
   component is Creating or Updating: retry, then poll until "Could not find inference component";
4. endpoints: refused with "Cannot delete endpoint with inference component associated" until the
   components are really gone, so retry, then poll until the endpoint is gone;
5. endpoint configurations, then models;
6. the IAM execution role last: SageMaker still uses it while it finishes deleting endpoints.

Every step is idempotent (not found = already gone), so a sweep can be re-run after an interruption.
Leftovers are found by the names in ``infra.naming`` and by the tags fastscale puts on everything
(``fastscale:stack`` = the project and ``managed-by`` = fastscale), which also catches resources of
endpoints since renamed or removed from the config.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.cleanup import model_names, parse_arn
from fastscale.infra.aws.clients import (
    AwsClients,
    ClientsArg,
    chunks,
    describe_error,
    error_code,
    is_access_error,
    is_not_found,
    is_throttling,
    paginate,
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
    WaitTimeout,
    wait_until,
)
from fastscale.infra.aws_facts import SERVICE_NAMESPACE
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.naming import (
    TAG_MANAGED_BY,
    TAG_STACK,
    all_endpoint_names,
    component_resource_id,
    dashboard_name,
    stack_name,
    variant_resource_id,
)

#: Default bound on a whole sweep: deleting GPU endpoints and their components takes minutes each.
DEFAULT_SWEEP_TIMEOUT = 3600.0

DELETED = "deleted"
ALREADY_GONE = "already-gone"
WOULD_DELETE = "would-delete"
FAILED = "failed"
SKIPPED = "skipped"


@dataclass(frozen=True)
class SweepAction:
    kind: str  # same vocabulary as cleanup.Leftover.kind
    name: str
    status: str  # deleted | already-gone | would-delete | failed | skipped
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.status}: {self.kind} {self.name}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class SweepReport:
    dry_run: bool
    actions: list[SweepAction] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(a.status == FAILED for a in self.actions)

    def by_status(self, status: str) -> list[SweepAction]:
        return [a for a in self.actions if a.status == status]

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "dry_run": self.dry_run, "actions": [asdict(a) for a in self.actions]}


#: Receives a Progress while waiting and a SweepAction when a resource is dealt with.
SweepProgressCallback = Callable[[Progress | SweepAction], None]


@dataclass
class _Component:
    name: str
    endpoint: str
    status: str
    base: str | None


@dataclass
class _Plan:
    alarms: list[str] = field(default_factory=list)
    dashboard: str | None = None
    policies: list[dict[str, Any]] = field(default_factory=list)
    targets: list[dict[str, Any]] = field(default_factory=list)
    components: list[_Component] = field(default_factory=list)
    endpoints: dict[str, str] = field(default_factory=dict)  # name -> status
    endpoint_configs: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)  # tagged ARNs of types sweep does not delete
    not_ours: list[str] = field(default_factory=list)  # stack tag without managed-by=fastscale


def _add(items: list[str], name: str) -> None:
    if name not in items:
        items.append(name)


@translate_errors
def sweep(
    config: FastscaleConfig,
    clients: ClientsArg = None,
    dry_run: bool = False,
    on_progress: SweepProgressCallback | None = None,
    timeout: float = DEFAULT_SWEEP_TIMEOUT,
    *,
    clock: Clock = SYSTEM_CLOCK,
    interval: float = DEFAULT_POLL_INTERVAL,
) -> SweepReport:
    """Find every leftover of ``config`` and delete it in the safe order (``dry_run``: only list them).

    A resource that cannot be deleted is reported as failed and the sweep goes on with the others,
    except that the execution role is kept while an endpoint or component it serves is still there.
    """
    aws = resolve(clients, config)
    sweeper = _Sweeper(aws, dry_run, on_progress, Deadline(timeout, clock), interval)
    plan = _discover(aws, config)
    sweeper.run(plan)
    return sweeper.report


# --------------------------------------------------------------------------------------------- discovery


#: Tagged resource types sweep deletes: (ARN service, ARN resource type) -> kind.
_TAGGED_KINDS = {
    ("sagemaker", "endpoint"): "endpoint",
    ("sagemaker", "inference-component"): "inference-component",
    ("sagemaker", "endpoint-config"): "endpoint-config",
    ("sagemaker", "model"): "model",
    ("cloudwatch", "alarm"): "alarm",
}


def _tagged(aws: AwsClients, stack: str, plan: _Plan) -> dict[str, list[str]]:
    """Names of the resources tagged with the stack, by kind; the ones sweep will not delete go into plan.

    Only what also carries managed-by=fastscale is deleted: a stack tag alone may have been copied onto
    something made by hand, which verify_cleanup still reports but sweep leaves to its owner.
    """
    found: dict[str, list[str]] = {kind: [] for kind in _TAGGED_KINDS.values()}
    for item in paginate(aws.tagging, "get_resources", "ResourceTagMappingList", TagFilters=[{"Key": TAG_STACK, "Values": [stack]}]):
        arn = item["ResourceARN"]
        tags = {t["Key"]: t["Value"] for t in item.get("Tags", [])}
        if tags.get(TAG_MANAGED_BY) != "fastscale":
            _add(plan.not_ours, arn)
            continue
        service, kind, name = parse_arn(arn) or ("", "", arn)
        if (service, kind) in _TAGGED_KINDS:
            _add(found[_TAGGED_KINDS[(service, kind)]], name)
        elif (service, kind) != ("iam", "role"):  # roles are handled by name, after everything that uses them
            _add(plan.unsupported, arn)
    return found


def _response_field(call: Callable[..., Any], key: str, **kwargs: Any) -> Callable[[], Any]:
    """A call to make later (each time the returned function is called), reading one field of its response."""
    return lambda: call(**kwargs)[key]


def _endpoint_status(aws: AwsClients, name: str) -> str | None:
    try:
        status: str = aws.sagemaker.describe_endpoint(EndpointName=name)["EndpointStatus"]
        return status
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise


def _discover(aws: AwsClients, config: FastscaleConfig) -> _Plan:
    plan = _Plan()
    sm = aws.sagemaker
    names = all_endpoint_names(config)
    tagged = _tagged(aws, stack_name(config), plan)
    component_names = tagged["inference-component"]

    # Endpoints named by the config; a single-model endpoint cannot carry components, so only the
    # others are listed. Endpoints found only by tag are of unknown kind: list theirs too.
    candidates = [(n.endpoint, n.spec.uses_inference_components) for n in names]
    candidates += [(e, True) for e in tagged["endpoint"] if e not in {n.endpoint for n in names}]
    for endpoint, may_have_components in candidates:
        status = _endpoint_status(aws, endpoint)
        if status is None:
            continue
        plan.endpoints[endpoint] = status
        if may_have_components:
            for ic in paginate(sm, "list_inference_components", "InferenceComponents", EndpointNameEquals=endpoint):
                _add(component_names, ic["InferenceComponentName"])
    for n in names:
        for cfg in paginate(sm, "list_endpoint_configs", "EndpointConfigs", NameContains=n.endpoint_config_prefix):
            if cfg["EndpointConfigName"].startswith(n.endpoint_config_prefix):
                _add(plan.endpoint_configs, cfg["EndpointConfigName"])
        for model in model_names(n):
            try:
                sm.describe_model(ModelName=model)
            except ClientError as exc:
                if not is_not_found(exc):
                    raise
            else:
                _add(plan.models, model)
    for name in tagged["endpoint-config"]:
        _add(plan.endpoint_configs, name)
    for name in tagged["model"]:
        _add(plan.models, name)

    for name in component_names:
        try:
            d = sm.describe_inference_component(InferenceComponentName=name)
        except ClientError as exc:
            if is_not_found(exc):
                continue
            raise
        base = (d.get("Specification") or {}).get("BaseInferenceComponentName")
        plan.components.append(_Component(name, d.get("EndpointName", ""), d["InferenceComponentStatus"], base))

    # Alarms: the names fastscale gives plus tagged ones, kept only if they exist.
    wanted_alarms = [a for n in names for a in n.all_alarm_names] + tagged["alarm"]
    for batch in chunks(list(dict.fromkeys(wanted_alarms)), 100):
        for alarm in paginate(aws.cloudwatch, "describe_alarms", "MetricAlarms", AlarmNames=batch):
            _add(plan.alarms, alarm["AlarmName"])
    try:
        aws.cloudwatch.get_dashboard(DashboardName=dashboard_name(config))
        plan.dashboard = dashboard_name(config)
    except ClientError as exc:
        if not is_not_found(exc):
            raise

    rids = [n.resource_id for n in names] + [variant_resource_id(e) for e in plan.endpoints if e not in {n.endpoint for n in names}]
    rids += [c.resource_id for n in names for c in n.components] + [component_resource_id(c.name) for c in plan.components]
    rids = list(dict.fromkeys(rids))
    aas = aws.autoscaling
    for batch in chunks(rids, 50):
        plan.targets += paginate(aas, "describe_scalable_targets", "ScalableTargets", ServiceNamespace=SERVICE_NAMESPACE, ResourceIds=batch)
    for rid in rids:
        plan.policies += paginate(aas, "describe_scaling_policies", "ScalingPolicies", ServiceNamespace=SERVICE_NAMESPACE, ResourceId=rid)

    for n in names:
        if n.execution_role:
            try:
                aws.iam.get_role(RoleName=n.execution_role)
            except ClientError as exc:
                if error_code(exc) != "NoSuchEntity":
                    raise
            else:
                _add(plan.roles, n.execution_role)
    return plan


# --------------------------------------------------------------------------------------------- deletion


@dataclass
class _Pending:
    """An asynchronously deleted resource: delete (retried while refused), then poll until gone."""

    kind: str
    name: str
    delete: Callable[[], Any]
    describe: Callable[[], str]  # current status; raises a not-found ClientError once gone
    requested: bool = False
    note: str = "delete not requested yet"


class _Sweeper:
    def __init__(
        self,
        aws: AwsClients,
        dry_run: bool,
        on_progress: SweepProgressCallback | None,
        deadline: Deadline,
        interval: float,
    ):
        self.aws = aws
        self.dry_run = dry_run
        self.on_progress = on_progress
        self.deadline = deadline
        self.interval = interval
        self.report = SweepReport(dry_run=dry_run)

    def record(self, kind: str, name: str, status: str, detail: str = "") -> SweepAction:
        action = SweepAction(kind, name, status, detail)
        self.report.actions.append(action)
        if self.on_progress is not None:
            self.on_progress(action)
        return action

    def failed(self, kind: str) -> list[SweepAction]:
        return [a for a in self.report.actions if a.kind == kind and a.status == FAILED]

    def once(self, kind: str, name: str, call: Callable[[], Any], detail: str = "") -> bool:
        """A synchronous delete. Returns False when it failed."""
        if self.dry_run:
            self.record(kind, name, WOULD_DELETE, detail)
            return True
        try:
            call()
        except ClientError as exc:
            if is_not_found(exc):
                self.record(kind, name, ALREADY_GONE)
                return True
            self.record(kind, name, FAILED, describe_error(exc))
            return False
        self.record(kind, name, DELETED, detail)
        return True

    def run(self, plan: _Plan) -> None:
        self._alarms(plan)
        self._scaling(plan)
        self._components(plan)
        self._endpoints(plan)
        sm = self.aws.sagemaker
        for name in plan.endpoint_configs:
            self.once("endpoint-config", name, partial(sm.delete_endpoint_config, EndpointConfigName=name))
        for name in plan.models:
            self.once("model", name, partial(sm.delete_model, ModelName=name))
        self._roles(plan)
        for arn in plan.unsupported:
            self.record("tagged-resource", arn, SKIPPED, "not a resource type fastscale deletes: delete it by hand")
        for arn in plan.not_ours:
            self.record(
                "tagged-resource", arn, SKIPPED, f"tagged {TAG_STACK} but not {TAG_MANAGED_BY}=fastscale: left to its owner"
            )

    # ----------------------------------------------------------------- 1-2: alarms, dashboard, scaling

    def _alarms(self, plan: _Plan) -> None:
        cw = self.aws.cloudwatch
        for name in plan.alarms:
            # One name per call: DeleteAlarms fails as a whole when any listed alarm is already gone.
            self.once("alarm", name, partial(cw.delete_alarms, AlarmNames=[name]))
        if plan.dashboard:
            self.once("dashboard", plan.dashboard, lambda: cw.delete_dashboards(DashboardNames=[plan.dashboard]))

    def _scaling(self, plan: _Plan) -> None:
        aas = self.aws.autoscaling
        # Deregistering a target deletes its policies; deleting them first anyway also clears a policy
        # whose target is already gone, and keeps each step visible in the report.
        for p in plan.policies:
            self.once(
                "scaling-policy",
                p["PolicyName"],
                partial(
                    aas.delete_scaling_policy,
                    PolicyName=p["PolicyName"],
                    ServiceNamespace=p["ServiceNamespace"],
                    ResourceId=p["ResourceId"],
                    ScalableDimension=p["ScalableDimension"],
                ),
                f"on {p['ResourceId']}",
            )
        for t in plan.targets:
            self.once(
                "scalable-target",
                t["ResourceId"],
                partial(
                    aas.deregister_scalable_target,
                    ServiceNamespace=t["ServiceNamespace"], ResourceId=t["ResourceId"], ScalableDimension=t["ScalableDimension"],
                ),
                t["ScalableDimension"],
            )

    # ----------------------------------------------------------------- 3-4: components, endpoints

    def _components(self, plan: _Plan) -> None:
        sm = self.aws.sagemaker
        adapters = [c for c in plan.components if c.base]
        bases = [c for c in plan.components if not c.base]
        for phase, group in (("adapter inference components", adapters), ("inference components", bases)):
            if not group:
                continue
            if self.dry_run:
                for c in group:
                    self.record("inference-component", c.name, WOULD_DELETE, f"on {c.endpoint}, status {c.status}")
                continue
            items = [
                _Pending(
                    "inference-component",
                    c.name,
                    partial(sm.delete_inference_component, InferenceComponentName=c.name),
                    _response_field(sm.describe_inference_component, "InferenceComponentStatus", InferenceComponentName=c.name),
                    requested=c.status == "Deleting",
                )
                for c in group
            ]
            self._delete_and_wait(f"{phase} {', '.join(c.name for c in group)} to be deleted", items)

    def _endpoints(self, plan: _Plan) -> None:
        sm = self.aws.sagemaker
        blocked = {c.endpoint for c in plan.components if c.name in {a.name for a in self.failed("inference-component")}}
        items = []
        for name, status in plan.endpoints.items():
            if name in blocked:
                self.record("endpoint", name, SKIPPED, "an inference component on it could not be deleted")
            elif self.dry_run:
                self.record("endpoint", name, WOULD_DELETE, f"status {status}")
            else:
                items.append(
                    _Pending(
                        "endpoint",
                        name,
                        partial(sm.delete_endpoint, EndpointName=name),
                        _response_field(sm.describe_endpoint, "EndpointStatus", EndpointName=name),
                        requested=status == "Deleting",
                    )
                )
        if items:
            self._delete_and_wait(f"endpoints {', '.join(i.name for i in items)} to be deleted", items)

    def _delete_and_wait(self, what: str, items: list[_Pending]) -> None:
        pending = list(items)

        def probe() -> Poll:
            for it in list(pending):
                if not it.requested:
                    try:
                        it.delete()
                    except ClientError as exc:
                        if is_not_found(exc):
                            pending.remove(it)
                            self.record(it.kind, it.name, ALREADY_GONE)
                        elif is_access_error(exc):
                            pending.remove(it)
                            self.record(it.kind, it.name, FAILED, describe_error(exc))
                        else:
                            # Transient state, components still attached, throttling: try again next round.
                            it.note = f"delete refused, retrying: {describe_error(exc)}"
                        continue
                    it.requested = True
                try:
                    status = it.describe()
                except ClientError as exc:
                    if is_not_found(exc):
                        pending.remove(it)
                        self.record(it.kind, it.name, DELETED)
                    elif is_throttling(exc):
                        it.note = "throttled, still polling"
                    else:
                        it.note = describe_error(exc)
                    continue
                if status == "Failed":
                    # A failed resource is deleted by asking again.
                    it.requested = False
                it.note = status
            if not pending:
                return Poll(True, "all deleted")
            return Poll(False, "; ".join(f"{it.name}: {it.note}" for it in pending))

        try:
            wait_until(what, probe, deadline=self.deadline, interval=self.interval, on_progress=self.on_progress)
        except WaitTimeout as exc:
            for it in pending:
                self.record(it.kind, it.name, FAILED, f"timed out after {exc.timeout:.0f}s; last seen: {it.note}")

    # ----------------------------------------------------------------- 6: IAM role

    def _roles(self, plan: _Plan) -> None:
        still_there = [a.name for a in self.report.actions if a.kind in ("endpoint", "inference-component") and a.status in (FAILED, SKIPPED)]
        for role in plan.roles:
            if still_there:
                self.record("iam-role", role, SKIPPED, "kept while SageMaker still needs it for " + ", ".join(still_there))
            elif self.dry_run:
                self.record("iam-role", role, WOULD_DELETE, "with its inline policies")
            else:
                self._delete_role(role)

    def _delete_role(self, role: str) -> None:
        iam = self.aws.iam
        removed: list[str] = []
        try:
            # A role cannot be deleted while it has inline or attached policies.
            for policy in list(paginate(iam, "list_role_policies", "PolicyNames", RoleName=role)):
                iam.delete_role_policy(RoleName=role, PolicyName=policy)
                removed.append(f"inline policy {policy}")
            for attached in list(paginate(iam, "list_attached_role_policies", "AttachedPolicies", RoleName=role)):
                iam.detach_role_policy(RoleName=role, PolicyArn=attached["PolicyArn"])
                removed.append(f"detached {attached['PolicyArn']}")
            iam.delete_role(RoleName=role)
        except ClientError as exc:
            if error_code(exc) == "NoSuchEntity" and not removed:
                self.record("iam-role", role, ALREADY_GONE)
            elif error_code(exc) == "NoSuchEntity":
                self.record("iam-role", role, DELETED, "; ".join(removed))
            else:
                self.record("iam-role", role, FAILED, describe_error(exc))
            return
        self.record("iam-role", role, DELETED, "; ".join(removed))
