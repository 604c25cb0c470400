"""The checks of an endpoint: its status (waited for until it settles), that it is this stack's, its endpoint
configuration and variant, its instance count and managed instance scaling, its capacity settings (instance
pools, provision timeout, capacity reservation, scale-in policy), and the model of a single-model endpoint.

Functions over a :class:`.report.Checker`; :mod:`.live` calls :func:`check_endpoint` first for every endpoint,
:mod:`.components` uses :func:`check_model` for a component's model.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import is_not_found
from fastscale.infra.aws.inventory import ownership_of_endpoint
from fastscale.infra.aws.verify.report import Checker, text_of
from fastscale.infra.aws.waiters import Poll
from fastscale.infra.model import capacity
from fastscale.infra.model.naming import TAG_STACK
from fastscale.infra.model.resolved import ResolvedEndpoint, ResolvedWorkload

# Statuses after which waiting longer changes nothing (InService is the only good one).
_ENDPOINT_SETTLED = frozenset({"InService", "Failed", "OutOfService", "UpdateRollbackFailed", "Deleting"})


def check_endpoint(v: Checker, n: ResolvedEndpoint) -> dict[str, Any] | None:
    """The endpoint's status (waited for when the verification waits), owner and properties; returns what
    DescribeEndpoint answered (None: it does not exist)."""
    res = f"endpoint/{n.name}"
    sm = v.aws.sagemaker

    def probe() -> Poll:
        try:
            d = sm.describe_endpoint(EndpointName=n.name)
        except ClientError as exc:
            if is_not_found(exc):
                return Poll(True, "does not exist")
            raise
        return Poll(d["EndpointStatus"] in _ENDPOINT_SETTLED, d["EndpointStatus"], d)

    poll, timed_out = v.observe(f"endpoint {n.name} to be InService", probe, v.wait)
    desc: dict[str, Any] | None = poll.value
    if desc is None:
        v.record(res, "exists", False, "InService", "does not exist", timed_out)
    else:
        status = desc["EndpointStatus"]
        reason = desc.get("FailureReason")
        detail = timed_out or (f"FailureReason: {reason}" if reason else "")
        v.compare(res, "status", "InService", status, detail)
        _owner(v, res, desc)
        _endpoint_properties(v, n, desc)
    return desc


def _owner(v: Checker, res: str, desc: dict[str, Any]) -> None:
    """Whether the endpoint of this name is this stack's (the inventory's ownership rules): another
    project's endpoint of the same name, or one made by hand, must not pass for this one."""
    if v.stack is None or not desc.get("EndpointArn"):
        return
    owner = ownership_of_endpoint(v.aws, v.stack, desc["EndpointArn"])
    v.record(
        res,
        "owned by this stack",
        owner.ours,
        f"tagged {TAG_STACK}={v.stack.name}",
        owner.reason,
        "" if owner.ours else "the endpoint of this name is not the one this stack deployed",
    )


def _endpoint_properties(v: Checker, n: ResolvedEndpoint, desc: dict[str, Any]) -> None:
    ep = n
    res = f"endpoint/{n.name}"
    config_name = desc.get("EndpointConfigName", "")
    # An adopted configuration keeps its live name until a change gives it a fresh one from the prefix.
    ours = config_name.startswith(n.endpoint_config_prefix) or config_name == n.endpoint_config
    v.record(
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
        v.record(res, "variant", False, n.variant, ", ".join(sorted(variants)) or "none")
        return
    desired = variant.get("DesiredInstanceCount")
    current = variant.get("CurrentInstanceCount")
    lo, hi = ep.instances.min, ep.instances.max
    v.record(
        res,
        "instance count",
        desired is not None and lo <= desired <= hi,
        f"{lo}..{hi}",
        desired,
        f"current {current}, desired {desired}",
    )
    if ep.uses_components:
        mis = variant.get("ManagedInstanceScaling") or {}
        actual = (
            f"{mis.get('Status')} min {mis.get('MinInstanceCount')} max {mis.get('MaxInstanceCount')}" if mis else "not set"
        )
        v.compare(res, "managed instance scaling", f"ENABLED min {lo} max {hi}", actual)
    if _capacity_configured(ep):
        _capacity(v, n, config_name, variant)


def _capacity(v: Checker, n: ResolvedEndpoint, config_name: str, live_variant: dict[str, Any]) -> None:
    """Pools, provision timeout, reservation and scale-in policy, as the endpoint's configuration has them
    (DescribeEndpoint does not report priorities or the timeout)."""
    ep = n
    res = f"endpoint/{n.name}"
    try:
        desc = v.aws.sagemaker.describe_endpoint_config(EndpointConfigName=config_name)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        v.record(res, "endpoint configuration exists", False, config_name, "does not exist")
        return
    variant: dict[str, Any] = next(
        (v for v in desc.get("ProductionVariants", []) if v.get("VariantName") == n.variant), {}
    )
    running = ", ".join(
        f"{p['InstanceType']}: {p.get('CurrentInstanceCount', 0)}" for p in live_variant.get("InstancePools") or []
    )
    v.compare(
        res,
        "instance pools",
        _poolstext_of(ep),
        _live_poolstext_of(variant),
        f"instances now {running}" if running else "",
    )
    v.compare(
        res, "provision timeout", _seconds(ep.provision_timeout), _seconds(variant.get("VariantInstanceProvisionTimeoutInSeconds"))
    )
    live_reservation = variant.get("CapacityReservationConfig") or {}
    v.compare(
        res,
        "capacity reservation",
        f"{capacity.RESERVATIONS_ONLY} {ep.reservation_arn}" if ep.reservation_arn else "not set",
        f"{live_reservation.get('CapacityReservationPreference')} {live_reservation.get('MlReservationArn')}"
        if live_reservation
        else "not set",
    )
    if ep.uses_components:
        live_policy = (variant.get("ManagedInstanceScaling") or {}).get("ScaleInPolicy")
        v.compare(res, "scale-in policy", _scale_intext_of(ep), _live_scale_intext_of(live_policy))


def check_model(v: Checker, name: str, workload: ResolvedWorkload) -> None:
    res = f"model/{name}"
    try:
        desc = v.aws.sagemaker.describe_model(ModelName=name)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        v.record(res, "exists", False, "exists", "does not exist")
        return
    container = desc.get("PrimaryContainer") or (desc.get("Containers") or [{}])[0]
    v.compare(res, "image", workload.image, container.get("Image"))
    if workload.model_data:
        source = container.get("ModelDataUrl") or container.get("ModelDataSource", {}).get("S3DataSource", {}).get("S3Uri")
        v.compare(res, "model data", workload.model_data, source)


def _capacity_configured(ep: ResolvedEndpoint) -> bool:
    return bool(ep.has_pools or ep.provision_timeout is not None or ep.reservation_arn or ep.scale_in is not None)


def _seconds(value: Any) -> str:
    return "not set" if value is None else f"{text_of(value)} s"


def _poolstext_of(ep: ResolvedEndpoint) -> str:
    if not ep.has_pools:
        return f"instance type {ep.instance_type}"
    return ", ".join(f"{p.priority}: {p.instance_type}" for p in ep.pools_by_priority)


def _live_poolstext_of(variant: dict[str, Any]) -> str:
    pools = variant.get("InstancePools")
    if not pools:
        return f"instance type {variant.get('InstanceType')}"
    return ", ".join(f"{text_of(p.get('Priority'))}: {p.get('InstanceType')}" for p in sorted(pools, key=lambda p: p.get("Priority", 0)))


def _scale_intext_of(ep: ResolvedEndpoint) -> str:
    policy = ep.scale_in
    if policy is None:
        return "not set"
    cooldown = policy.cooldown_minutes if policy.cooldown_minutes is not None else capacity.SCALE_IN_DEFAULT_COOLDOWN_MINUTES
    step = policy.max_step if policy.max_step is not None else capacity.SCALE_IN_DEFAULT_STEP
    return f"{policy.strategy}, cooldown {cooldown} min, step {step}"


def _live_scale_intext_of(policy: dict[str, Any] | None) -> str:
    if not policy:
        return "not set"
    cooldown = policy.get("CooldownInMinutes", capacity.SCALE_IN_DEFAULT_COOLDOWN_MINUTES)
    step = policy.get("MaximumStepSize", capacity.SCALE_IN_DEFAULT_STEP)
    return f"{policy.get('Strategy')}, cooldown {text_of(cooldown)} min, step {text_of(step)}"
