"""Prove with boto3 that what the stack built is live and configured as the YAML file says.

Terraform reporting "apply complete" only means the API calls were accepted: the endpoint may still be
Creating (or end up Failed), and a scaling policy on the wrong metric type deploys without complaint but
reacts in minutes instead of seconds. ``verify_live`` reads every resource back and compares it with the
config, one :class:`Check` per property, so a report names exactly what differs.

``wait=True`` (after a deploy) waits for endpoints and inference components to leave their transient
states; ``wait=False`` (``fastscale status``) takes one look and reports what is live and what differs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import (
    AwsClients,
    ClientsArg,
    chunks,
    error_code,
    is_not_found,
    paginate,
    resolve,
    translate_errors,
)
from fastscale.infra.aws.inventory import ownership_of_endpoint
from fastscale.infra.aws.waiters import (
    DEFAULT_POLL_INTERVAL,
    SYSTEM_CLOCK,
    Clock,
    Deadline,
    Poll,
    ProgressCallback,
    WaitTimeout,
    wait_until,
)
from fastscale.infra.base.aws_facts import (
    COMPONENT_COPIES,
    NO_CAPACITY_METRIC,
    NS_INVOCATIONS,
    SCALE_FROM_ZERO_STEP,
    SERVICE_NAMESPACE,
    TARGET_TRACKING,
    VARIANT_INSTANCES,
)
from fastscale.infra.config import Autoscaling, EndpointSpec, FastscaleConfig, InferenceComponentSpec, ModelSpec
from fastscale.infra.model import capacity
from fastscale.infra.model.detection import WorkloadKind, scaling_metric
from fastscale.infra.model.naming import TAG_STACK, ComponentNames, EndpointNames, all_endpoint_names, dashboard_name

#: Default bound on a whole verification: creating a GPU endpoint and its components can take 20+ minutes.
DEFAULT_VERIFY_TIMEOUT = 3600.0


# Statuses after which waiting longer changes nothing (InService is the only good one).
_ENDPOINT_SETTLED = frozenset({"InService", "Failed", "OutOfService", "UpdateRollbackFailed", "Deleting"})
_COMPONENT_SETTLED = frozenset({"InService", "Failed", "Deleting"})



# --------------------------------------------------------------------------------------------- report


@dataclass(frozen=True)
class Check:
    """One property of one live resource compared with the config."""

    resource: str  # kind/name, e.g. "inference-component/assist-qwen3-8b"
    check: str  # what was compared, e.g. "target-tracking metric"
    ok: bool
    expected: str | None = None
    actual: str | None = None
    detail: str = ""

    def __str__(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        text = f"{mark} {self.resource}: {self.check}"
        if not self.ok and (self.expected is not None or self.actual is not None):
            text += f": expected {self.expected}, got {self.actual}"
        elif self.ok and self.actual is not None:
            text += f": {self.actual}"
        if self.detail:
            text += f" ({self.detail})"
        return text


@dataclass
class VerificationReport:
    checks: list[Check] = field(default_factory=list)
    waited: bool = True  # False for a one-look status report

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "waited": self.waited,
            "failures": len(self.failures),
            "checks": [asdict(c) for c in self.checks],
        }


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    same: bool = expected == actual
    return same


# --------------------------------------------------------------------------------------------- capacity texts


def _capacity_configured(ep: EndpointSpec) -> bool:
    cap = ep.capacity
    return bool(cap.fallback or cap.provision_timeout is not None or cap.reservation_arn or ep.scale_in is not None)


def _seconds(value: Any) -> str:
    return "not set" if value is None else f"{_text(value)} s"


def _pools_text(ep: EndpointSpec) -> str:
    if not capacity.has_pools(ep):
        return f"instance type {ep.instance_type}"
    return ", ".join(f"{p.priority}: {p.instance_type}" for p in capacity.pools_by_priority(ep))


def _live_pools_text(variant: dict[str, Any]) -> str:
    pools = variant.get("InstancePools")
    if not pools:
        return f"instance type {variant.get('InstanceType')}"
    return ", ".join(f"{_text(p.get('Priority'))}: {p.get('InstanceType')}" for p in sorted(pools, key=lambda p: p.get("Priority", 0)))


def _scale_in_text(ep: EndpointSpec) -> str:
    policy = ep.scale_in
    if policy is None:
        return "not set"
    cooldown = policy.cooldown_minutes if policy.cooldown_minutes is not None else capacity.SCALE_IN_DEFAULT_COOLDOWN_MINUTES
    step = policy.max_step if policy.max_step is not None else capacity.SCALE_IN_DEFAULT_STEP
    return f"{policy.strategy}, cooldown {cooldown} min, step {step}"


def _live_scale_in_text(policy: dict[str, Any] | None) -> str:
    if not policy:
        return "not set"
    cooldown = policy.get("CooldownInMinutes", capacity.SCALE_IN_DEFAULT_COOLDOWN_MINUTES)
    step = policy.get("MaximumStepSize", capacity.SCALE_IN_DEFAULT_STEP)
    return f"{policy.get('Strategy')}, cooldown {_text(cooldown)} min, step {_text(step)}"


def _expected_scheduling(ep: EndpointSpec) -> dict[str, Any] | None:
    placement = ep.capacity.placement
    if placement is None:
        return None
    out: dict[str, Any] = {"PlacementStrategy": placement.strategy}
    if placement.az_balance is not None:
        out["AvailabilityZoneBalance"] = {"EnforcementMode": capacity.AZ_BALANCE_PERMISSIVE}
        if placement.az_balance.max_imbalance is not None:
            out["AvailabilityZoneBalance"]["MaxImbalance"] = placement.az_balance.max_imbalance
    return out


def _placement_text(scheduling: dict[str, Any] | None) -> str:
    if not scheduling:
        return "not set"
    text = str(scheduling.get("PlacementStrategy"))
    balance = scheduling.get("AvailabilityZoneBalance")
    if balance:
        text += f", AZ balance {balance.get('EnforcementMode')}"
        if balance.get("MaxImbalance") is not None:
            text += f" max imbalance {_text(balance['MaxImbalance'])}"
    return text


# --------------------------------------------------------------------------------------------- verifier


@translate_errors
def verify_live(
    config: FastscaleConfig,
    clients: ClientsArg = None,
    wait: bool = True,
    timeout: float = DEFAULT_VERIFY_TIMEOUT,
    on_progress: ProgressCallback | None = None,
    *,
    clock: Clock = SYSTEM_CLOCK,
    interval: float = DEFAULT_POLL_INTERVAL,
) -> VerificationReport:
    """Read back every resource of ``config`` and compare it with the config.

    ``timeout`` bounds all waits together; a wait that runs out becomes a failed check naming what it
    waited for and what it last saw. Never raises for a wrong deployment, only for AWS being unusable
    (:class:`infra.aws.clients.AwsError`).
    """
    verifier = _Verifier(resolve(clients, config), Deadline(timeout, clock), wait, interval, on_progress)
    verifier.config = config
    for names in all_endpoint_names(config):
        verifier.endpoint(names)
    if config.dashboard.enabled:
        verifier.dashboard(dashboard_name(config))
    return VerificationReport(verifier.checks, waited=wait)


class _Verifier:
    def __init__(
        self,
        aws: AwsClients,
        deadline: Deadline,
        wait: bool,
        interval: float,
        on_progress: ProgressCallback | None,
    ):
        self.aws = aws
        self.deadline = deadline
        self.wait = wait
        self.interval = interval
        self.on_progress = on_progress
        self.checks: list[Check] = []
        self.config: FastscaleConfig | None = None

    # ----------------------------------------------------------------- helpers

    def compare(self, resource: str, check: str, expected: Any, actual: Any, detail: str = "") -> bool:
        ok = _same(expected, actual)
        self.checks.append(Check(resource, check, ok, _text(expected), _text(actual), detail))
        return ok

    def record(self, resource: str, check: str, ok: bool, expected: Any = None, actual: Any = None, detail: str = "") -> bool:
        self.checks.append(Check(resource, check, ok, _text(expected), _text(actual), detail))
        return ok

    def observe(self, what: str, probe: Any, wait: bool) -> tuple[Poll, str]:
        """One look, or a wait until settled; returns the last observation and a timeout message if any."""
        if not wait:
            return probe(), ""
        try:
            return wait_until(what, probe, deadline=self.deadline, interval=self.interval, on_progress=self.on_progress), ""
        except WaitTimeout as exc:
            return Poll(False, exc.last_state, exc.last_value), str(exc)

    # ----------------------------------------------------------------- endpoint

    def endpoint(self, n: EndpointNames) -> None:
        ep = n.spec
        res = f"endpoint/{n.endpoint}"
        sm = self.aws.sagemaker

        def probe() -> Poll:
            try:
                d = sm.describe_endpoint(EndpointName=n.endpoint)
            except ClientError as exc:
                if is_not_found(exc):
                    return Poll(True, "does not exist")
                raise
            return Poll(d["EndpointStatus"] in _ENDPOINT_SETTLED, d["EndpointStatus"], d)

        poll, timed_out = self.observe(f"endpoint {n.endpoint} to be InService", probe, self.wait)
        desc = poll.value
        if desc is None:
            self.record(res, "exists", False, "InService", "does not exist", timed_out)
        else:
            status = desc["EndpointStatus"]
            reason = desc.get("FailureReason")
            detail = timed_out or (f"FailureReason: {reason}" if reason else "")
            self.compare(res, "status", "InService", status, detail)
            self._owner(res, desc)
            self._endpoint_properties(n, desc)
        endpoint_live = desc is not None and desc["EndpointStatus"] == "InService"

        if ep.model is not None and n.model:
            self._model(n.model, ep.model)
        else:
            for c in n.components:
                self._component(n, c, wait=self.wait and endpoint_live)
            if desc is not None:
                self._unexpected_components(n)
        if n.execution_role:
            self._role(n.execution_role)
        policy_arns = self._scaling(n)
        self._alarms(n, policy_arns)

    def _owner(self, res: str, desc: dict[str, Any]) -> None:
        """Whether the endpoint of this name is this stack's (the inventory's ownership rules): another
        project's endpoint of the same name, or one made by hand, must not pass for this one."""
        if self.config is None or not desc.get("EndpointArn"):
            return
        owner = ownership_of_endpoint(self.aws, self.config, desc["EndpointArn"])
        self.record(
            res,
            "owned by this stack",
            owner.ours,
            f"tagged {TAG_STACK}={self.config.project}",
            owner.reason,
            "" if owner.ours else "the endpoint of this name is not the one this stack deployed",
        )

    def _endpoint_properties(self, n: EndpointNames, desc: dict[str, Any]) -> None:
        ep = n.spec
        res = f"endpoint/{n.endpoint}"
        config_name = desc.get("EndpointConfigName", "")
        # An adopted configuration keeps its live name until a change gives it a fresh one from the prefix.
        ours = config_name.startswith(n.endpoint_config_prefix) or config_name == n.endpoint_config
        self.record(
            res,
            "endpoint configuration",
            ours,
            n.endpoint_config or f"{n.endpoint_config_prefix}*",
            config_name,
            "" if ours else "the endpoint uses a configuration fastscale did not create",
        )
        variants = {v["VariantName"]: v for v in desc.get("ProductionVariants", [])}
        variant = variants.get(n.variant)
        if variant is None:
            self.record(res, "variant", False, n.variant, ", ".join(sorted(variants)) or "none")
            return
        desired = variant.get("DesiredInstanceCount")
        current = variant.get("CurrentInstanceCount")
        lo, hi = ep.instances.min, ep.instances.max
        self.record(
            res,
            "instance count",
            desired is not None and lo <= desired <= hi,
            f"{lo}..{hi}",
            desired,
            f"current {current}, desired {desired}",
        )
        if ep.uses_inference_components:
            mis = variant.get("ManagedInstanceScaling") or {}
            actual = (
                f"{mis.get('Status')} min {mis.get('MinInstanceCount')} max {mis.get('MaxInstanceCount')}" if mis else "not set"
            )
            self.compare(res, "managed instance scaling", f"ENABLED min {lo} max {hi}", actual)
        if _capacity_configured(ep):
            self._capacity(n, config_name, variant)

    def _capacity(self, n: EndpointNames, config_name: str, live_variant: dict[str, Any]) -> None:
        """Pools, provision timeout, reservation and scale-in policy, as the endpoint's configuration has them
        (DescribeEndpoint does not report priorities or the timeout)."""
        ep = n.spec
        res = f"endpoint/{n.endpoint}"
        try:
            desc = self.aws.sagemaker.describe_endpoint_config(EndpointConfigName=config_name)
        except ClientError as exc:
            if not is_not_found(exc):
                raise
            self.record(res, "endpoint configuration exists", False, config_name, "does not exist")
            return
        variant: dict[str, Any] = next(
            (v for v in desc.get("ProductionVariants", []) if v.get("VariantName") == n.variant), {}
        )
        running = ", ".join(
            f"{p['InstanceType']}: {p.get('CurrentInstanceCount', 0)}" for p in live_variant.get("InstancePools") or []
        )
        self.compare(
            res,
            "instance pools",
            _pools_text(ep),
            _live_pools_text(variant),
            f"instances now {running}" if running else "",
        )
        self.compare(
            res, "provision timeout", _seconds(ep.capacity.provision_timeout), _seconds(variant.get("VariantInstanceProvisionTimeoutInSeconds"))
        )
        live_reservation = variant.get("CapacityReservationConfig") or {}
        self.compare(
            res,
            "capacity reservation",
            f"{capacity.RESERVATIONS_ONLY} {ep.capacity.reservation_arn}" if ep.capacity.reservation_arn else "not set",
            f"{live_reservation.get('CapacityReservationPreference')} {live_reservation.get('MlReservationArn')}"
            if live_reservation
            else "not set",
        )
        if ep.uses_inference_components:
            live_policy = (variant.get("ManagedInstanceScaling") or {}).get("ScaleInPolicy")
            self.compare(res, "scale-in policy", _scale_in_text(ep), _live_scale_in_text(live_policy))

    def _model(self, name: str, workload: ModelSpec | InferenceComponentSpec) -> None:
        res = f"model/{name}"
        try:
            desc = self.aws.sagemaker.describe_model(ModelName=name)
        except ClientError as exc:
            if not is_not_found(exc):
                raise
            self.record(res, "exists", False, "exists", "does not exist")
            return
        container = desc.get("PrimaryContainer") or (desc.get("Containers") or [{}])[0]
        self.compare(res, "image", workload.image, container.get("Image"))
        if workload.model_data:
            source = container.get("ModelDataUrl") or container.get("ModelDataSource", {}).get("S3DataSource", {}).get("S3Uri")
            self.compare(res, "model data", workload.model_data, source)

    # ----------------------------------------------------------------- inference components

    def _component(self, n: EndpointNames, c: ComponentNames, wait: bool) -> None:
        spec: InferenceComponentSpec = c.spec
        res = f"inference-component/{c.name}"
        sm = self.aws.sagemaker

        def probe() -> Poll:
            try:
                d = sm.describe_inference_component(InferenceComponentName=c.name)
            except ClientError as exc:
                if is_not_found(exc):
                    return Poll(True, "does not exist")
                raise
            status = d["InferenceComponentStatus"]
            return Poll(status in _COMPONENT_SETTLED, status, d)

        poll, timed_out = self.observe(f"inference component {c.name} to be InService", probe, wait)
        desc = poll.value
        if desc is None:
            self.record(res, "exists", False, "InService", "does not exist", timed_out)
            return
        reason = desc.get("FailureReason")
        self.compare(
            res,
            "status",
            "InService",
            desc["InferenceComponentStatus"],
            timed_out or (f"FailureReason: {reason}" if reason else ""),
        )
        self.compare(res, "endpoint", n.endpoint, desc.get("EndpointName"))
        specification = desc.get("Specification", {})
        caching = specification.get("DataCacheConfig", {}).get("EnableCaching")
        lost = spec.data_cache and caching is not True
        self.compare(
            res,
            "data caching (DataCacheConfig.EnableCaching)",
            spec.data_cache,
            "not set" if caching is None else caching,
            "new copies will not reuse the image and model cached on an instance" if lost else "",
        )
        container = specification.get("Container")
        if container:
            # The container given inline on the component.
            image = container.get("DeployedImage", {}).get("SpecifiedImage") or container.get("Image")
            self.compare(res, "image", spec.image, image)
            if spec.model_data:
                self.compare(res, "model data", spec.model_data, container.get("ArtifactUrl"))
        else:
            self.compare(res, "model", c.model, specification.get("ModelName"))
        self._component_capacity(n.spec, res, desc)
        runtime = desc.get("RuntimeConfig", {})
        desired, current = runtime.get("DesiredCopyCount"), runtime.get("CurrentCopyCount")
        copies = spec.copies
        if spec.autoscaling.enabled:
            ok, expected = desired is not None and copies.min <= desired <= copies.max, f"{copies.min}..{copies.max}"
        else:
            ok, expected = desired == copies.initial, str(copies.initial)
        self.record(res, "copy count", ok, expected, desired, f"current {current}, desired {desired}")
        if not container and c.model:
            self._model(c.model, spec)

    def _component_capacity(self, ep: EndpointSpec, res: str, desc: dict[str, Any]) -> None:
        """Per-instance-type specifications (with fallback pools) and copy placement, when configured."""
        several = desc.get("Specifications") or []
        if capacity.has_pools(ep):
            expected = ", ".join(dict.fromkeys(p.instance_type for p in capacity.pools_by_priority(ep)))
            actual = ", ".join(s.get("InstanceType") or "?" for s in several) or "one specification for every type"
            self.compare(res, "specifications per instance type", expected, actual)
        if ep.capacity.placement is not None or capacity.has_pools(ep):
            specs = several or [desc.get("Specification", {})]
            placements = sorted({_placement_text(s.get("SchedulingConfig")) for s in specs})
            self.compare(res, "copy placement", _placement_text(_expected_scheduling(ep)), " / ".join(placements))

    def _unexpected_components(self, n: EndpointNames) -> None:
        configured = {c.name for c in n.components}
        live = {
            s["InferenceComponentName"]
            for s in paginate(self.aws.sagemaker, "list_inference_components", "InferenceComponents", EndpointNameEquals=n.endpoint)
        }
        extra = sorted(live - configured)
        self.record(
            f"endpoint/{n.endpoint}",
            "inference components",
            not extra,
            ", ".join(sorted(configured)),
            ", ".join(sorted(live)) or "none",
            f"not in the config: {', '.join(extra)}" if extra else "",
        )

    # ----------------------------------------------------------------- IAM, scaling, alarms, dashboard

    def _role(self, role: str) -> None:
        try:
            self.aws.iam.get_role(RoleName=role)
        except ClientError as exc:
            if error_code(exc) != "NoSuchEntity":
                raise
            self.record(f"iam-role/{role}", "exists", False, "exists", "does not exist")
            return
        self.record(f"iam-role/{role}", "exists", True)

    def _scaling(self, n: EndpointNames) -> dict[str, str]:
        """Check scalable targets and policies; returns step-policy name -> ARN for the alarm checks."""
        ep = n.spec
        wanted: list[tuple[str, str, int, int, str | None, WorkloadKind, Autoscaling, ComponentNames | None]] = []
        if ep.model is not None and ep.model.autoscaling.enabled:
            wanted.append(
                (n.resource_id, VARIANT_INSTANCES, ep.instances.min, ep.instances.max, n.target_tracking_policy, "model", ep.model.autoscaling, None)
            )
        for c in n.components:
            if c.spec.autoscaling.enabled:
                cp = c.spec.copies
                wanted.append((c.resource_id, COMPONENT_COPIES, cp.min, cp.max, c.target_tracking_policy, "component", c.spec.autoscaling, c))
        if not wanted:
            return {}
        aas = self.aws.autoscaling
        targets: dict[tuple[str, str], dict[str, Any]] = {}
        for ids in chunks([w[0] for w in wanted], 50):
            for t in paginate(aas, "describe_scalable_targets", "ScalableTargets", ServiceNamespace=SERVICE_NAMESPACE, ResourceIds=ids):
                targets[(t["ResourceId"], t["ScalableDimension"])] = t

        step_arns: dict[str, str] = {}
        for rid, dim, lo, hi, tt_name, kind, autoscaling, comp in wanted:
            res = f"scalable-target/{rid}"
            target = targets.get((rid, dim))
            if target is None:
                self.record(res, "registered", False, f"{dim} min {lo} max {hi}", "not registered")
            else:
                self.compare(res, "capacity", f"min {lo} max {hi}", f"min {target['MinCapacity']} max {target['MaxCapacity']}")
            policies = {
                p["PolicyName"]: p
                for p in paginate(aas, "describe_scaling_policies", "ScalingPolicies", ServiceNamespace=SERVICE_NAMESPACE, ResourceId=rid)
            }
            if tt_name:
                self._target_tracking(tt_name, policies.get(tt_name), scaling_metric(kind, autoscaling).predefined_metric_type, autoscaling)
            if comp is not None and comp.scale_from_zero_policy:
                arn = self._step_policy(comp.scale_from_zero_policy, policies.get(comp.scale_from_zero_policy), autoscaling)
                if arn:
                    step_arns[comp.scale_from_zero_policy] = arn
        return step_arns

    def _target_tracking(self, name: str, policy: dict[str, Any] | None, expected_metric: str, autoscaling: Autoscaling) -> None:
        res = f"scaling-policy/{name}"
        if policy is None:
            self.record(res, "exists", False, f"{TARGET_TRACKING} on {expected_metric}", "does not exist")
            return
        if not self.compare(res, "policy type", TARGET_TRACKING, policy.get("PolicyType")):
            return
        cfg = policy.get("TargetTrackingScalingPolicyConfiguration", {})
        predefined = cfg.get("PredefinedMetricSpecification", {}).get("PredefinedMetricType")
        actual = predefined or ("a customized metric" if cfg.get("CustomizedMetricSpecification") else "none")
        detail = ""
        if predefined != expected_metric:
            detail = (
                "only the predefined HighResolution types give 10-second target tracking (scale-out in ~30 s)"
                if autoscaling.metric == "high_resolution"
                else "the config asks for the 1-minute invocations metric"
            )
        self.compare(res, "target-tracking metric", expected_metric, actual, detail)
        self.compare(res, "target value", autoscaling.target_concurrency, cfg.get("TargetValue"))
        self.compare(
            res,
            "cooldowns",
            f"scale-in {autoscaling.scale_in_cooldown} s, scale-out {autoscaling.scale_out_cooldown} s",
            f"scale-in {cfg.get('ScaleInCooldown', 0)} s, scale-out {cfg.get('ScaleOutCooldown', 0)} s",
        )

    def _step_policy(self, name: str, policy: dict[str, Any] | None, autoscaling: Autoscaling) -> str | None:
        res = f"scaling-policy/{name}"
        expected = SCALE_FROM_ZERO_STEP.describe(autoscaling.scale_from_zero.cooldown)
        if policy is None:
            self.record(res, "exists", False, expected, "does not exist")
            return None
        cfg = policy.get("StepScalingPolicyConfiguration", {})
        steps = cfg.get("StepAdjustments", [])
        step_text = ", ".join(
            f"{s.get('ScalingAdjustment', 0):+d} at >= {_text(s.get('MetricIntervalLowerBound'))}" for s in steps
        ) or "no steps"
        actual = (
            f"{policy.get('PolicyType')} {cfg.get('AdjustmentType')} {step_text}, "
            f"{cfg.get('MetricAggregationType')}, cooldown {cfg.get('Cooldown')} s"
        )
        self.compare(res, "scale-from-zero step policy", expected, actual)
        return policy.get("PolicyARN")

    def _alarms(self, n: EndpointNames, step_arns: dict[str, str]) -> None:
        names = n.all_alarm_names
        if not names:
            return
        found: dict[str, dict[str, Any]] = {}
        for batch in chunks(names, 100):
            for described in paginate(self.aws.cloudwatch, "describe_alarms", "MetricAlarms", AlarmNames=batch):
                found[described["AlarmName"]] = described
        wiring = {c.scale_from_zero_alarm: c for c in n.components if c.scale_from_zero_alarm}
        for name in names:
            alarm = found.get(name)
            res = f"alarm/{name}"
            if alarm is None:
                self.record(res, "exists", False, "exists", "does not exist")
                continue
            comp = wiring.get(name)
            if comp is None:
                self.record(res, "exists", True)
            else:
                self._scale_from_zero_alarm(res, alarm, comp, step_arns.get(comp.scale_from_zero_policy or ""))

    def _scale_from_zero_alarm(self, res: str, alarm: dict[str, Any], comp: ComponentNames, policy_arn: str | None) -> None:
        zero = comp.spec.autoscaling.scale_from_zero
        self.compare(
            res, "metric", f"{NS_INVOCATIONS} {NO_CAPACITY_METRIC}", f"{alarm.get('Namespace')} {alarm.get('MetricName')}"
        )
        dims = ", ".join(f"{d['Name']}={d['Value']}" for d in alarm.get("Dimensions", [])) or "none"
        self.compare(res, "dimension", f"InferenceComponentName={comp.name}", dims)
        self.compare(res, "statistic", "Sum", alarm.get("Statistic") or alarm.get("ExtendedStatistic"))
        self.compare(
            res,
            "threshold",
            "GreaterThanOrEqualToThreshold 1",
            f"{alarm.get('ComparisonOperator')} {_text(alarm.get('Threshold'))}",
            "" if alarm.get("ComparisonOperator") == "GreaterThanOrEqualToThreshold" else "the first failed request must trip the alarm",
        )
        self.compare(
            res,
            "period",
            f"{zero.period} s x {zero.evaluation_periods}",
            f"{alarm.get('Period')} s x {alarm.get('EvaluationPeriods')}",
        )
        actions = alarm.get("AlarmActions", [])
        if policy_arn is None:
            self.record(
                res,
                "wired to step policy",
                False,
                f"action {comp.scale_from_zero_policy}",
                ", ".join(actions) or "no actions",
                "the step policy does not exist, so nothing adds the first copy",
            )
        else:
            self.record(
                res,
                "wired to step policy",
                policy_arn in actions,
                policy_arn,
                ", ".join(actions) or "no actions",
                "" if policy_arn in actions else "a component scaled to zero will never get its first copy back",
            )

    def dashboard(self, name: str) -> None:
        res = f"dashboard/{name}"
        try:
            self.aws.cloudwatch.get_dashboard(DashboardName=name)
        except ClientError as exc:
            if not is_not_found(exc):
                raise
            self.record(res, "exists", False, "exists", "does not exist")
            return
        self.record(res, "exists", True)
