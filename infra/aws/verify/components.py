"""The checks of an endpoint's inference components: each one's status (waited for while its endpoint is in
service), endpoint, data caching, image or model, specifications per instance type and copy placement, and copy
count; and that the endpoint runs no component the config does not name.

Functions over a :class:`.report.Checker`, called by :mod:`.live` after :mod:`.endpoint`'s checks; a component's
separate model is checked with :func:`.endpoint.check_model`.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import is_not_found, paginate
from fastscale.infra.aws.verify.endpoint import check_model
from fastscale.infra.aws.verify.report import Checker, text_of
from fastscale.infra.aws.waiters import Poll
from fastscale.infra.model import capacity
from fastscale.infra.model.resolved import ResolvedComponent, ResolvedEndpoint

_COMPONENT_SETTLED = frozenset({"InService", "Failed", "Deleting"})


def check_component(v: Checker, n: ResolvedEndpoint, c: ResolvedComponent, wait: bool) -> None:
    spec = c.workload
    res = f"inference-component/{c.name}"
    sm = v.aws.sagemaker

    def probe() -> Poll:
        try:
            d = sm.describe_inference_component(InferenceComponentName=c.name)
        except ClientError as exc:
            if is_not_found(exc):
                return Poll(True, "does not exist")
            raise
        status = d["InferenceComponentStatus"]
        return Poll(status in _COMPONENT_SETTLED, status, d)

    poll, timed_out = v.observe(f"inference component {c.name} to be InService", probe, wait)
    desc = poll.value
    if desc is None:
        v.record(res, "exists", False, "InService", "does not exist", timed_out)
        return
    reason = desc.get("FailureReason")
    v.compare(
        res,
        "status",
        "InService",
        desc["InferenceComponentStatus"],
        timed_out or (f"FailureReason: {reason}" if reason else ""),
    )
    v.compare(res, "endpoint", n.name, desc.get("EndpointName"))
    specification = desc.get("Specification", {})
    caching = specification.get("DataCacheConfig", {}).get("EnableCaching")
    lost = spec.data_cache and caching is not True
    v.compare(
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
        v.compare(res, "image", spec.image, image)
        if spec.model_data:
            v.compare(res, "model data", spec.model_data, container.get("ArtifactUrl"))
    else:
        v.compare(res, "model", spec.model, specification.get("ModelName"))
    _component_capacity(v, n, res, desc)
    runtime = desc.get("RuntimeConfig", {})
    desired, current = runtime.get("DesiredCopyCount"), runtime.get("CurrentCopyCount")
    copies = c.copies
    if c.scaling.enabled:
        ok, expected = desired is not None and copies.min <= desired <= copies.max, f"{copies.min}..{copies.max}"
    else:
        ok, expected = desired == copies.initial, str(copies.initial)
    v.record(res, "copy count", ok, expected, desired, f"current {current}, desired {desired}")
    if not container and spec.model:
        check_model(v, spec.model, spec)


def _component_capacity(v: Checker, ep: ResolvedEndpoint, res: str, desc: dict[str, Any]) -> None:
    """Per-instance-type specifications (with fallback pools) and copy placement, when configured."""
    several = desc.get("Specifications") or []
    if ep.has_pools:
        expected = ", ".join(dict.fromkeys(p.instance_type for p in ep.pools_by_priority))
        actual = ", ".join(s.get("InstanceType") or "?" for s in several) or "one specification for every type"
        v.compare(res, "specifications per instance type", expected, actual)
    if ep.placement is not None or ep.has_pools:
        specs = several or [desc.get("Specification", {})]
        placements = sorted({_placementtext_of(s.get("SchedulingConfig")) for s in specs})
        v.compare(res, "copy placement", _placementtext_of(_expected_scheduling(ep)), " / ".join(placements))


def check_unexpected_components(v: Checker, n: ResolvedEndpoint) -> None:
    configured = {c.name for c in n.components}
    live = {
        s["InferenceComponentName"]
        for s in paginate(v.aws.sagemaker, "list_inference_components", "InferenceComponents", EndpointNameEquals=n.name)
    }
    extra = sorted(live - configured)
    v.record(
        f"endpoint/{n.name}",
        "inference components",
        not extra,
        ", ".join(sorted(configured)),
        ", ".join(sorted(live)) or "none",
        f"not in the config: {', '.join(extra)}" if extra else "",
    )


def _expected_scheduling(ep: ResolvedEndpoint) -> dict[str, Any] | None:
    placement = ep.placement
    if placement is None:
        return None
    out: dict[str, Any] = {"PlacementStrategy": placement.strategy}
    if placement.az_balance:
        out["AvailabilityZoneBalance"] = {"EnforcementMode": capacity.AZ_BALANCE_PERMISSIVE}
        if placement.max_imbalance is not None:
            out["AvailabilityZoneBalance"]["MaxImbalance"] = placement.max_imbalance
    return out


def _placementtext_of(scheduling: dict[str, Any] | None) -> str:
    if not scheduling:
        return "not set"
    text = str(scheduling.get("PlacementStrategy"))
    balance = scheduling.get("AvailabilityZoneBalance")
    if balance:
        text += f", AZ balance {balance.get('EnforcementMode')}"
        if balance.get("MaxImbalance") is not None:
            text += f" max imbalance {text_of(balance['MaxImbalance'])}"
    return text
