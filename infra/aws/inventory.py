"""What a stack owns in AWS: the one inventory behind destroy's proof, verify-cleanup, sweep, status and
the name check of plan and deploy.

Each resource kind is one :class:`Kind` entry in :data:`KINDS`, declaring how it is found (exact name,
name prefix, tag, or through its owner), how its owner is proven, how it is deleted, where it comes in the
deletion order and whether AWS deletes it asynchronously. Adding a kind is adding one entry there.

**A name or prefix match only finds candidates.** A candidate belongs to the stack only when

* its own tags name this stack (``fastscale:stack``), say ``managed-by=fastscale``, and do not name another
  region (``fastscale:region``; required on global resources such as IAM roles), or
* for what carries no tags of ours, its owner does: a scaling policy through its scalable target, a
  scalable target through the endpoint or component it scales (or its own tags once that is gone), a
  target-tracking alarm through its policy, a log group through its endpoint or component, or
* for the dashboard, the marker line the stack writes into its body (``naming.dashboard_marker``).

Everything else that was found is reported as "belongs to stack X, not touched" or "not created by this
stack, not touched": it is never deleted, never a leftover, never a reason to fail.

SageMaker and IAM compare names without regard to case, so SageMaker resources are listed and matched in
lower case: ``Chat-Prod-Qwen3`` is a candidate for ``chat-prod-qwen3``, to be proven like any other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
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
from fastscale.infra.aws_facts import (
    COMPONENT_LOG_GROUP,
    ENDPOINT_LOG_GROUP,
    SERVICE_NAMESPACE,
    TARGET_TRACKING_ALARM_PREFIX,
)
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.naming import (
    MANAGED_BY_VALUE,
    MODEL_DIGEST_LEN,
    TAG_MANAGED_BY,
    TAG_REGION,
    TAG_STACK,
    adopted_resources,
    all_endpoint_names,
    component_resource_id,
    dashboard_name,
    dashboard_owner,
    execution_role_name,
    former_execution_role_name,
    stack_name,
    variant_resource_id,
)
from fastscale.infra.naming import tags as stack_tags

# --------------------------------------------------------------------------------------------- ownership

OURS = "ours"
OTHER_STACK = "other-stack"
NOT_OURS = "not-ours"
#: Tagged for this stack by a fastscale that did not write the region tag yet, on a global resource: it
#: may be the stack of the same name in another region. Never deleted; not a name clash for plan/deploy
#: (the next deploy of the owning stack adds the tag).
NO_REGION = "no-region"
#: A dashboard laid out as fastscale lays out this stack's, but written before the stack wrote its marker.
#: Never deleted (nothing proves stack and region); not a name clash (the next deploy adds the marker).
NO_MARKER = "no-marker"


@dataclass(frozen=True)
class Ownership:
    verdict: str  # ours | other-stack | not-ours | no-region
    reason: str

    @property
    def ours(self) -> bool:
        return self.verdict == OURS


def tag_ownership(tags: Mapping[str, str] | None, stack: str, region: str, *, global_resource: bool = False) -> Ownership:
    """Who owns a resource, by its tags."""
    tags = tags or {}
    owner = tags.get(TAG_STACK)
    if owner is None:
        return Ownership(NOT_OURS, f"not created by this stack (no {TAG_STACK} tag), not touched")
    where = tags.get(TAG_REGION)
    if owner != stack or (where is not None and where != region):
        return Ownership(OTHER_STACK, f"belongs to stack {owner}" + (f" ({where})" if where and where != region else "") + ", not touched")
    if tags.get(TAG_MANAGED_BY) != MANAGED_BY_VALUE:
        return Ownership(
            NOT_OURS, f"tagged {TAG_STACK}={owner} but not {TAG_MANAGED_BY}={MANAGED_BY_VALUE}: not created by this stack, not touched"
        )
    if where is None and global_resource:
        return Ownership(
            NO_REGION,
            f"tagged {TAG_STACK}={owner} without {TAG_REGION}: global, so it may belong to a stack of the same name in "
            "another region; not touched (the next deploy of its stack adds the tag)",
        )
    return Ownership(OURS, f"tagged {TAG_STACK}={stack}")


def through(owner: Resource, what: str) -> Ownership:
    """The ownership of a resource proven through the resource it belongs to."""
    if owner.ownership.ours:
        return Ownership(OURS, f"through {what} {owner.name} ({owner.ownership.reason})")
    return Ownership(owner.ownership.verdict, f"{what} {owner.name} {owner.ownership.reason}")


UNPROVEN = Ownership(NOT_OURS, "not created by this stack, not touched")


# --------------------------------------------------------------------------------------------- resources


@dataclass
class Resource:
    """One resource found in the account, with how it was found and who owns it."""

    kind: str
    name: str
    arn: str = ""
    status: str = ""
    detail: str = ""  # why it matters, for a leftover
    found_by: str = ""  # name | prefix | tag | owner | former-name (a name earlier releases used)
    ownership: Ownership = UNPROVEN
    data: dict[str, Any] = field(default_factory=dict)  # what deletion needs (ids, dimension, endpoint, base)

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.arn or self.name.lower())

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ownership"] = self.ownership.verdict
        out["reason"] = self.ownership.reason
        del out["data"]
        return out


@dataclass
class Inventory:
    stack: str
    region: str
    resources: list[Resource] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # what was looked for, for people reading the report
    owners_checked: list[str] = field(default_factory=list)  # the cache owners the config names

    def of(self, kind: str) -> list[Resource]:
        return [r for r in self.resources if r.kind == kind]

    @property
    def leftovers(self) -> list[Resource]:
        """What this stack still owns (logs excepted: they are data, kept unless asked)."""
        return [r for r in self.resources if r.ownership.ours and not _is_data(r)]

    @property
    def kept(self) -> list[Resource]:
        """Data of this stack (log groups) that stays unless deletion is asked for explicitly."""
        return [r for r in self.resources if r.ownership.ours and _is_data(r)]

    @property
    def not_touched(self) -> list[Resource]:
        """Found by name, prefix or tag, but not this stack's: shown, never deleted, never a leftover."""
        return [r for r in self.resources if not r.ownership.ours]

    def name_clashes(self) -> list[Resource]:
        """Names the stack creates that exist and are not this stack's (case-insensitively for SageMaker).
        What the config adopts is not a clash: the stack imports it (and tags it) instead of creating it."""
        return [
            r
            for r in self.resources
            if r.found_by == "name" and not _is_data(r) and r.ownership.verdict in (OTHER_STACK, NOT_OURS)
            and not r.data.get("adopted")
        ]

    def caches(self) -> str:
        """What can honestly be said about the container image and data caches, owner by owner.

        Caches have no API; each belongs to one endpoint and goes with it. So the statement is about the
        endpoints and components present under the names the stack uses (or tagged for it), whoever owns
        them: a present one, this stack's or not, may still hold caches; only when none is present are the
        caches gone."""
        present = [r for r in self.resources if r.kind in ("endpoint", "inference-component")]
        if not present:
            return (
                "Container image and model data caches are gone: their owners ("
                + ", ".join(self.owners_checked)
                + ") no longer exist, and AWS purges an endpoint's caches with the endpoint (there is no cache API)."
            )
        lines = []
        for r in present:
            if r.ownership.ours:
                lines.append(f"{_label(r)} {r.name} still exists ({r.status or 'present'}): its caches may remain")
            else:
                lines.append(f"{_label(r)} {r.name} still exists (not this stack's: {r.ownership.reason}): its caches may remain")
        text = "Container image and model data caches may still exist: " + "; ".join(lines) + "."
        names = {f"{_label(r)} {r.name}".lower() for r in present}
        gone = [o for o in self.owners_checked if o.lower() not in names]
        if gone:
            text += " Gone, and their caches with them: " + ", ".join(gone) + "."
        return text + " AWS purges an endpoint's caches only when it finishes deleting the endpoint (there is no cache API)."


def _is_data(r: Resource) -> bool:
    kind = KIND.get(r.kind)
    return kind is not None and kind.data


def _label(r: Resource) -> str:
    kind = KIND.get(r.kind)
    return kind.label if kind else r.kind


# --------------------------------------------------------------------------------------------- the scan


def _arn(value: str) -> str:
    """An ARN as the tagging API gives it (some emulators wrap it in a repr)."""
    if value.startswith("arn:"):
        return value
    match = re.search(r"arn:[^'\"\s,()]+", value)
    return match.group(0) if match else value


def _arn_type(arn: str) -> tuple[str, str, str]:
    """(service, resource type, resource name) of an ARN."""
    parts = arn.split(":", 5)
    if len(parts) != 6:
        return "", "", arn
    service, resource = parts[2], parts[5]
    cut = min((i for i in (resource.find("/"), resource.find(":")) if i >= 0), default=-1)
    if cut < 0:
        return service, "", resource
    return service, resource[:cut], resource[cut + 1 :]


class Scan:
    """One look at the account for one stack. Kinds are discovered in :data:`KINDS` order, so a kind
    whose ownership goes through another (a policy through its target) finds that one already proven."""

    def __init__(self, aws: AwsClients, config: FastscaleConfig):
        self.aws = aws
        self.config = config
        self.stack = stack_name(config)
        self.region = config.region
        self.names = all_endpoint_names(config)
        self.adopted = adopted_resources(config)
        self.inventory = Inventory(self.stack, self.region)
        self._keys: set[tuple[str, str]] = set()
        # Resources the tagging index lists with this stack's tag: ARN -> tags, by kind.
        self.tagged: dict[str, dict[str, dict[str, str]]] = {k.name: {} for k in KINDS}
        self.tagged_other: list[tuple[str, dict[str, str]]] = []  # tagged ARNs of no kind fastscale knows
        # Resources the index lists with another stack's tag: ARN -> tags. Their tags win over what their
        # name or owner says (a scalable target of another stack on an endpoint of this one stays theirs).
        self.tagged_by_others: dict[str, dict[str, str]] = {}

    # -- helpers ------------------------------------------------------------------------------------

    def ownership(self, tags: Mapping[str, str] | None, *, global_resource: bool = False) -> Ownership:
        return tag_ownership(tags, self.stack, self.region, global_resource=global_resource)

    def add(self, resource: Resource) -> Resource:
        if resource.found_by == "name":
            resource.data.setdefault("config_path", self.config_path(resource.kind, resource.name))
            if self.is_adopted(resource):
                resource.data["adopted"] = True
        if resource.key not in self._keys:
            self._keys.add(resource.key)
            self.inventory.resources.append(resource)
        return resource

    def is_adopted(self, resource: Resource) -> bool:
        """Whether the config adopts `resource` (an `adopted` block names it, or its scalable target)."""
        if resource.kind == "scaling-policy":
            return ("scalable-target", str(resource.data.get("ResourceId", "")).lower()) in self.adopted
        return (resource.kind, resource.name.lower()) in self.adopted

    def found(self, kind: str, name: str) -> Resource | None:
        lowered = name.lower()
        return next((r for r in self.inventory.resources if r.kind == kind and r.name.lower() == lowered), None)

    def checked(self, text: str) -> None:
        self.inventory.checked.append(text)

    def sagemaker_tags(self, kind: str, arn: str) -> dict[str, str]:
        if arn in self.tagged[kind]:
            return self.tagged[kind][arn]
        pages = paginate(self.aws.sagemaker, "list_tags", "Tags", ResourceArn=arn)
        return {t["Key"]: t["Value"] for t in pages}

    def tag_index(self) -> None:
        by_type = {t: k.name for k in KINDS for t in k.arn_types}
        self.checked(f"resources tagged {TAG_STACK} (Resource Groups Tagging API): this stack's, and other stacks' to leave alone")
        for item in paginate(self.aws.tagging, "get_resources", "ResourceTagMappingList", TagFilters=[{"Key": TAG_STACK}]):
            arn = _arn(item["ResourceARN"])
            tags = {t["Key"]: t["Value"] for t in item.get("Tags", [])}
            if tags.get(TAG_STACK) != self.stack:
                self.tagged_by_others[arn] = tags
                continue
            service, rtype, _ = _arn_type(arn)
            kind = by_type.get((service, rtype))
            if kind is None:
                self.tagged_other.append((arn, tags))
            else:
                self.tagged[kind][arn] = tags

    def sagemaker_candidates(
        self, kind: str, operation: str, key: str, name_field: str, arn_field: str, exact: dict[str, str], prefixes: Iterable[str]
    ) -> list[tuple[dict[str, Any], str]]:
        """Every resource of a SageMaker list call matching (case-insensitively) an exact name, a prefix,
        or a tagged ARN; each with how it was found. Listing everything is what makes the comparison
        case-insensitive, and costs one call per 100 resources."""
        prefixes = [p.lower() for p in prefixes]
        out = []
        for item in paginate(self.aws.sagemaker, operation, key):
            name = item[name_field]
            lowered = name.lower()
            if lowered in exact:
                out.append((item, "name"))
            elif item.get(arn_field) in self.tagged[kind]:
                out.append((item, "tag"))
            elif any(lowered.startswith(p) for p in prefixes):
                out.append((item, "prefix"))
        return out

    def owned_names(self, kind: str) -> list[str]:
        return [r.name for r in self.inventory.of(kind) if r.ownership.ours]

    def config_path(self, kind: str, name: str) -> str:
        return self.wanted(kind).get(name.lower(), "")

    def wanted(self, kind: str) -> dict[str, str]:
        """Exact names the config gives for a kind (lower case) -> config path."""
        out: dict[str, str] = {}
        for i, n in enumerate(self.names):
            path = f"endpoints[{i}]"
            if kind == "endpoint":
                out[n.endpoint.lower()] = f"{path}.name"
            elif kind == "inference-component":
                out |= {c.name.lower(): f"{path}.inference_components[{j}].name" for j, c in enumerate(n.components)}
            elif kind == "model":
                if n.model:
                    out[n.model.lower()] = f"{path}.model"
                out |= {c.model.lower(): f"{path}.inference_components[{j}]" for j, c in enumerate(n.components) if c.model}
                out |= {m.lower(): f"{path}.capacity.fallback" for m in n.pool_models}
            elif kind == "iam-role" and n.execution_role:
                out[n.execution_role.lower()] = f"{path}.name"
            elif kind == "alarm":
                out |= {a.lower(): f"{path}.alarms" for a in n.all_alarm_names}
        if kind == "dashboard" and self.config.dashboard.enabled:
            out[dashboard_name(self.config).lower()] = "dashboard"
        return out


# --------------------------------------------------------------------------------------------- discovery per kind


def _endpoint_detail(status: str) -> str:
    if status == "Deleting":
        return "still Deleting: AWS has not finished removing it (nor its caches)"
    return f"status {status}: still running (and billing)"


def _discover_endpoints(scan: Scan) -> None:
    exact = scan.wanted("endpoint")
    scan.checked("endpoints " + ", ".join(n.endpoint for n in scan.names) + " (any case) and endpoints tagged with the stack")
    for item, how in scan.sagemaker_candidates("endpoint", "list_endpoints", "Endpoints", "EndpointName", "EndpointArn", exact, []):
        arn, status = item["EndpointArn"], item.get("EndpointStatus", "")
        scan.add(
            Resource(
                "endpoint",
                item["EndpointName"],
                arn,
                status,
                _endpoint_detail(status),
                how,
                scan.ownership(scan.sagemaker_tags("endpoint", arn)),
            )
        )


def _discover_components(scan: Scan) -> None:
    exact = scan.wanted("inference-component")
    endpoints = {r.name.lower() for r in scan.inventory.of("endpoint") if r.ownership.ours}
    # The stack tags every component it creates: with none in the config and none tagged, nothing of the
    # stack is to be found (one made by hand on its endpoint could not be its own anyway).
    if not exact and not scan.tagged["inference-component"]:
        return
    scan.checked("inference components " + (", ".join(exact) or "-") + ", those on the stack's endpoints, and tagged ones")
    sm = scan.aws.sagemaker
    for item in paginate(sm, "list_inference_components", "InferenceComponents"):
        name, arn = item["InferenceComponentName"], item["InferenceComponentArn"]
        if name.lower() in exact:
            how = "name"
        elif arn in scan.tagged["inference-component"]:
            how = "tag"
        elif item.get("EndpointName", "").lower() in endpoints:
            how = "owner"
        else:
            continue
        status = item.get("InferenceComponentStatus", "")
        r = scan.add(
            Resource(
                "inference-component",
                name,
                arn,
                status,
                f"status {status} on {item.get('EndpointName', '')}",
                how,
                scan.ownership(scan.sagemaker_tags("inference-component", arn)),
                {"endpoint": item.get("EndpointName", "")},
            )
        )
        if r.ownership.ours:
            # Adapters go before their base: only the full description names the base.
            try:
                desc = sm.describe_inference_component(InferenceComponentName=name)
            except ClientError as exc:
                if not is_not_found(exc):
                    raise
                continue
            r.data["base"] = (desc.get("Specification") or {}).get("BaseInferenceComponentName")


def _endpoint_prefixes(scan: Scan) -> list[str]:
    names = [n.endpoint for n in scan.names] + scan.owned_names("endpoint")
    return list(dict.fromkeys(f"{n.lower()}-" for n in names))


def _discover_endpoint_configs(scan: Scan) -> None:
    prefixes = _endpoint_prefixes(scan)
    scan.checked("endpoint configurations named " + ", ".join(f"{p}*" for p in prefixes) + " and tagged ones")
    for item, how in scan.sagemaker_candidates(
        "endpoint-config", "list_endpoint_configs", "EndpointConfigs", "EndpointConfigName", "EndpointConfigArn", {}, prefixes
    ):
        arn = item["EndpointConfigArn"]
        name = item["EndpointConfigName"]
        scan.add(Resource("endpoint-config", name, arn, "", "endpoint configuration", how, scan.ownership(scan.sagemaker_tags("endpoint-config", arn))))


def _discover_models(scan: Scan) -> None:
    exact = scan.wanted("model")
    # Models of an older content digest (the name ends with a new digest when the image or data change).
    bases = [n.endpoint for n in scan.names if n.model] + [c.name for n in scan.names for c in n.components]
    bases += scan.owned_names("endpoint") + scan.owned_names("inference-component")
    prefixes = list(dict.fromkeys(f"{b.lower()}-" for b in bases))
    scan.checked("models " + ", ".join(exact) + ", older digests of them (" + ", ".join(f"{p}*" for p in prefixes) + ") and tagged ones")
    for item, how in scan.sagemaker_candidates("model", "list_models", "Models", "ModelName", "ModelArn", exact, prefixes):
        arn, name = item["ModelArn"], item["ModelName"]
        older = how == "prefix" and re.fullmatch(rf".*-[0-9a-f]{{{MODEL_DIGEST_LEN}}}", name) is not None
        scan.add(
            Resource("model", name, arn, "", "model of an older image or model data" if older else "model", how, scan.ownership(scan.sagemaker_tags("model", arn)))
        )


def _parse_resource_id(rid: str) -> tuple[str, str] | None:
    """(kind, name) of the endpoint or component an Application Auto Scaling resource id scales."""
    parts = rid.split("/")
    if len(parts) == 4 and parts[0] == "endpoint" and parts[2] == "variant":
        return "endpoint", parts[1]
    if len(parts) == 2 and parts[0] == "inference-component":
        return "inference-component", parts[1]
    return None


def _scaled_names(scan: Scan) -> dict[tuple[str, str], bool]:
    """(kind, lower name) of every endpoint / component whose scaling is looked for -> named by the config."""
    out = {("endpoint", n.endpoint.lower()): True for n in scan.names}
    out |= {("inference-component", c.name.lower()): True for n in scan.names for c in n.components}
    for kind in ("endpoint", "inference-component"):
        for r in scan.inventory.of(kind):
            out.setdefault((kind, r.name.lower()), False)
    return out


def _owner_of_scaling(scan: Scan, rid: str) -> Resource | None:
    parsed = _parse_resource_id(rid)
    return scan.found(*parsed) if parsed else None


def _discover_targets(scan: Scan) -> None:
    wanted = _scaled_names(scan)
    scan.checked("scalable targets of " + ", ".join(sorted({n for _, n in wanted})))
    aas = scan.aws.autoscaling
    for t in paginate(aas, "describe_scalable_targets", "ScalableTargets", ServiceNamespace=SERVICE_NAMESPACE):
        rid = t["ResourceId"]
        parsed = _parse_resource_id(rid)
        arn = t.get("ScalableTargetARN", "")
        if parsed is None:
            continue
        named = wanted.get((parsed[0], parsed[1].lower()))
        if named is None and arn not in scan.tagged["scalable-target"]:
            continue
        owner = scan.found(*parsed)
        if arn in scan.tagged_by_others:  # tags win over the owner
            ownership = scan.ownership(scan.tagged_by_others[arn])
        elif owner is not None:
            ownership = through(owner, owner.kind.replace("-", " "))
        elif arn in scan.tagged["scalable-target"]:
            ownership = scan.ownership(scan.tagged["scalable-target"][arn])
        elif arn:
            # Its endpoint or component is gone: the target's own tags (the stack tags every target).
            ownership = scan.ownership(aas.list_tags_for_resource(ResourceARN=arn).get("Tags", {}))
        else:
            ownership = UNPROVEN
        scan.add(
            Resource(
                "scalable-target",
                rid,
                arn,
                "",
                f"{t['ScalableDimension']} min {t['MinCapacity']} max {t['MaxCapacity']}",
                "name" if named else ("owner" if named is not None else "tag"),
                ownership,
                {"ServiceNamespace": t["ServiceNamespace"], "ResourceId": rid, "ScalableDimension": t["ScalableDimension"]},
            )
        )


def _discover_policies(scan: Scan) -> None:
    wanted = _scaled_names(scan)
    targets = {r.name: r for r in scan.inventory.of("scalable-target")}
    scan.checked("scaling policies on those resources")
    for p in paginate(scan.aws.autoscaling, "describe_scaling_policies", "ScalingPolicies", ServiceNamespace=SERVICE_NAMESPACE):
        rid = p["ResourceId"]
        parsed = _parse_resource_id(rid)
        target = targets.get(rid)
        if parsed is None or ((parsed[0], parsed[1].lower()) not in wanted and target is None):
            continue
        owner = _owner_of_scaling(scan, rid)
        if target is not None:
            ownership = through(target, "scalable target")
        elif owner is not None:
            ownership = through(owner, owner.kind.replace("-", " "))
        else:
            ownership = Ownership(NOT_OURS, "its scalable target and what it scaled are gone, so nothing proves whose it was; not touched")
        scan.add(
            Resource(
                "scaling-policy",
                p["PolicyName"],
                p.get("PolicyARN", ""),
                "",
                f"{p.get('PolicyType')} on {rid}",
                "name" if wanted.get((parsed[0], parsed[1].lower())) else "owner",
                ownership,
                {
                    "PolicyName": p["PolicyName"],
                    "ServiceNamespace": p["ServiceNamespace"],
                    "ResourceId": rid,
                    "ScalableDimension": p["ScalableDimension"],
                    "alarms": [a.get("AlarmName") for a in p.get("Alarms", [])],
                },
            )
        )


def _discover_alarms(scan: Scan) -> None:
    cw = scan.aws.cloudwatch
    exact = scan.wanted("alarm")
    found: dict[str, tuple[dict[str, Any], str]] = {}
    named = [n for i in scan.names for n in i.all_alarm_names]
    if named:
        scan.checked("alarms " + ", ".join(named))
        for batch in chunks(named, 100):
            for alarm in paginate(cw, "describe_alarms", "MetricAlarms", AlarmNames=batch):
                found[alarm["AlarmName"]] = (alarm, "name")
    tagged_names = [_arn_type(a)[2] for a in scan.tagged["alarm"]]
    for batch in chunks([n for n in tagged_names if n not in found], 100):
        for alarm in paginate(cw, "describe_alarms", "MetricAlarms", AlarmNames=batch):
            found.setdefault(alarm["AlarmName"], (alarm, "tag"))
    scaled = _scaled_names(scan)
    prefixes = [f"{n}-" for n in dict.fromkeys([i.endpoint for i in scan.names] + [c.name for i in scan.names for c in i.components])]
    prefixes += [f"{r.name}-" for r in scan.inventory.resources if r.kind in ("endpoint", "inference-component") and r.ownership.ours]
    # The alarms Application Auto Scaling makes for target tracking are named after the resource id.
    rids = [variant_resource_id(n) if k == "endpoint" else component_resource_id(n) for k, n in scaled]
    rids += [r.name for r in scan.inventory.of("scalable-target")]
    prefixes += [f"{TARGET_TRACKING_ALARM_PREFIX}{rid}-" for rid in rids]
    prefixes = list(dict.fromkeys(prefixes))
    scan.checked("alarms named " + ", ".join(f"{p}*" for p in prefixes))
    for prefix in prefixes:
        for alarm in paginate(cw, "describe_alarms", "MetricAlarms", AlarmNamePrefix=prefix):
            found.setdefault(alarm["AlarmName"], (alarm, "prefix"))
    policies = scan.inventory.of("scaling-policy")
    for name in sorted(found):
        alarm, how = found[name]
        arn = alarm.get("AlarmArn", "")
        tags = scan.tagged["alarm"].get(arn)
        if tags is None:
            tags = {t["Key"]: t["Value"] for t in cw.list_tags_for_resource(ResourceARN=arn).get("Tags", [])}
        # Tags win over names: Application Auto Scaling tags only scalable targets, never the alarms it makes
        # for target tracking (AAS user guide, "Tagging support"), so a stack tag on such an alarm was put
        # there on purpose, and one naming another stack makes it that stack's whatever its name says.
        if name.startswith(TARGET_TRACKING_ALARM_PREFIX) and TAG_STACK not in tags:
            ownership = _target_tracking_alarm_owner(scan, name, policies)
            detail = "target-tracking alarm left behind by its policy"
        else:
            ownership = scan.ownership(tags)
            detail = "target-tracking alarm" if name.startswith(TARGET_TRACKING_ALARM_PREFIX) else "CloudWatch alarm"
        if name.lower() in exact:
            how = "name"
        scan.add(Resource("alarm", name, arn, alarm.get("StateValue", ""), detail, how, ownership))


def _target_tracking_alarm_owner(scan: Scan, name: str, policies: list[Resource]) -> Ownership:
    for p in policies:
        if name in p.data.get("alarms", []):
            return through(p, "target-tracking policy")
    rest = name[len(TARGET_TRACKING_ALARM_PREFIX) :]
    for target in scan.inventory.of("scalable-target"):
        if rest.startswith(f"{target.name}-"):
            return through(target, "scalable target")
    for kind, rid_of in (("endpoint", variant_resource_id), ("inference-component", component_resource_id)):
        for r in scan.inventory.of(kind):
            if rest.startswith(f"{rid_of(r.name)}-"):
                return through(r, kind.replace("-", " "))
    return Ownership(NOT_OURS, "its policy, target and endpoint are gone, so nothing proves whose it was; not touched")


def _discover_dashboard(scan: Scan) -> None:
    name = dashboard_name(scan.config)
    scan.checked(f"dashboard {name}")
    cw = scan.aws.cloudwatch
    for entry in paginate(cw, "list_dashboards", "DashboardEntries", DashboardNamePrefix=name):
        if entry["DashboardName"] != name:
            continue
        try:
            body = cw.get_dashboard(DashboardName=name).get("DashboardBody", "")
        except ClientError as exc:
            if is_not_found(exc):
                continue
            raise
        marker = dashboard_owner(body)
        headers = [f"## {n.endpoint} (" for n in scan.names]
        if marker is None and any(h in body for h in headers):
            ownership = Ownership(
                NO_MARKER,
                "laid out for this stack's endpoints but without the fastscale marker (written before it existed): "
                "not touched; the next deploy adds the marker",
            )
        elif marker is None:
            ownership = Ownership(NOT_OURS, "carries no fastscale marker: not created by this stack, not touched")
        else:
            ownership = scan.ownership({TAG_STACK: marker[0], TAG_REGION: marker[1], TAG_MANAGED_BY: MANAGED_BY_VALUE})
            if ownership.ours:
                ownership = Ownership(OURS, f"its marker names {TAG_STACK}={marker[0]}, {TAG_REGION}={marker[1]}")
        scan.add(Resource("dashboard", name, entry.get("DashboardArn", ""), "", "CloudWatch dashboard", "name", ownership))


def _discover_roles(scan: Scan) -> None:
    names = [n.execution_role for n in scan.names if n.execution_role]
    # Endpoints found by tag only (renamed in the config since) had their role named after them.
    renamed = [r.name for r in scan.inventory.of("endpoint") if r.ownership.ours and r.found_by != "name"]
    names += [execution_role_name(e, scan.region) for e in renamed]
    names += [_arn_type(arn)[2].rsplit("/", 1)[-1] for arn in scan.tagged["iam-role"]]
    # The name earlier releases gave the role, without the region: found, proven by its tags (region
    # included) like any other, never a name clash (a stack in another region may own it).
    former = [former_execution_role_name(n.endpoint) for n in scan.names if n.execution_role]
    former += [former_execution_role_name(e) for e in renamed]
    names = list(dict.fromkeys(names + former))
    if not names:
        return
    scan.checked("IAM roles " + ", ".join(names))
    exact = scan.wanted("iam-role")
    former_names = {f.lower() for f in former}
    for name in names:
        try:
            role = scan.aws.iam.get_role(RoleName=name)["Role"]
        except ClientError as exc:
            if error_code(exc) == "NoSuchEntity":
                continue
            raise
        tags = {t["Key"]: t["Value"] for t in role.get("Tags", [])}
        scan.add(
            Resource(
                "iam-role",
                role["RoleName"],
                role.get("Arn", ""),
                "",
                "execution role (with its inline policies)",
                "name" if name.lower() in exact else ("former-name" if name.lower() in former_names else "owner"),
                scan.ownership(tags, global_resource=True),
            )
        )


def _discover_log_groups(scan: Scan) -> None:
    owners: dict[str, tuple[str, str]] = {}
    for n in scan.names:
        owners[ENDPOINT_LOG_GROUP.format(n.endpoint)] = ("endpoint", n.endpoint)
        for c in n.components:
            owners[COMPONENT_LOG_GROUP.format(c.name)] = ("inference-component", c.name)
    for r in scan.inventory.of("endpoint"):
        owners.setdefault(ENDPOINT_LOG_GROUP.format(r.name), ("endpoint", r.name))
    for r in scan.inventory.of("inference-component"):
        owners.setdefault(COMPONENT_LOG_GROUP.format(r.name), ("inference-component", r.name))
    scan.checked("log groups " + ", ".join(owners))
    logs = scan.aws.logs
    for name, (kind, owner_name) in owners.items():
        for group in paginate(logs, "describe_log_groups", "logGroups", logGroupNamePrefix=name):
            if group["logGroupName"] != name:
                continue
            arn = group.get("logGroupArn") or group.get("arn", "").removesuffix(":*")
            tags = logs.list_tags_for_resource(resourceArn=arn).get("tags", {}) if arn else {}
            owner = scan.found(kind, owner_name)
            proven_by_owner = False
            if TAG_STACK in tags:
                ownership = scan.ownership(tags)
            elif owner is not None:
                ownership = through(owner, kind.replace("-", " "))
                proven_by_owner = True
            else:
                ownership = Ownership(
                    NOT_OURS, f"its {kind.replace('-', ' ')} no longer exists and it carries no {TAG_STACK} tag, so nothing proves whose logs these are; not touched"
                )
            scan.add(
                Resource(
                    "log-group",
                    name,
                    arn,
                    "",
                    f"logs of {kind.replace('-', ' ')} {owner_name}, {group.get('storedBytes', 0)} bytes",
                    "name",
                    ownership,
                    {"untagged": proven_by_owner},
                )
            )


# --------------------------------------------------------------------------------------------- deletion per kind


def _delete_endpoint(aws: AwsClients, r: Resource) -> None:
    aws.sagemaker.delete_endpoint(EndpointName=r.name)


def _status_endpoint(aws: AwsClients, r: Resource) -> str:
    return str(aws.sagemaker.describe_endpoint(EndpointName=r.name)["EndpointStatus"])


def _delete_component(aws: AwsClients, r: Resource) -> None:
    aws.sagemaker.delete_inference_component(InferenceComponentName=r.name)


def _status_component(aws: AwsClients, r: Resource) -> str:
    return str(aws.sagemaker.describe_inference_component(InferenceComponentName=r.name)["InferenceComponentStatus"])


def _delete_role(aws: AwsClients, r: Resource) -> str:
    """A role cannot be deleted while it has policies: inline ones go with it, managed ones are detached
    (a managed policy may be shared; it is never deleted)."""
    iam = aws.iam
    removed = []
    for policy in list(paginate(iam, "list_role_policies", "PolicyNames", RoleName=r.name)):
        iam.delete_role_policy(RoleName=r.name, PolicyName=policy)
        removed.append(f"inline policy {policy}")
    for attached in list(paginate(iam, "list_attached_role_policies", "AttachedPolicies", RoleName=r.name)):
        iam.detach_role_policy(RoleName=r.name, PolicyArn=attached["PolicyArn"])
        removed.append(f"detached {attached['PolicyArn']}")
    iam.delete_role(RoleName=r.name)
    return "; ".join(removed)


def _adapters_first(resources: list[Resource]) -> list[list[Resource]]:
    adapters = [r for r in resources if r.data.get("base")]
    return [group for group in (adapters, [r for r in resources if not r.data.get("base")]) if group]


def _blocked_endpoint(r: Resource, inventory: Inventory, failed: set[tuple[str, str]]) -> str:
    on_it = [c for c in inventory.of("inference-component") if c.data.get("endpoint", "").lower() == r.name.lower()]
    stuck = [c.name for c in on_it if c.key in failed]
    if stuck:
        return "an inference component on it could not be deleted: " + ", ".join(stuck)
    foreign = [c for c in on_it if not c.ownership.ours]
    if foreign:
        return "inference components on it are not this stack's (" + "; ".join(f"{c.name} {c.ownership.reason}" for c in foreign) + ")"
    return ""


def _blocked_role(r: Resource, inventory: Inventory, failed: set[tuple[str, str]]) -> str:
    still = [x.name for x in inventory.resources if x.kind in ("endpoint", "inference-component") and x.key in failed]
    return "kept while SageMaker still needs it for " + ", ".join(still) if still else ""


def _none_blocked(r: Resource, inventory: Inventory, failed: set[tuple[str, str]]) -> str:
    return ""


@dataclass(frozen=True)
class Kind:
    """One kind of resource a stack owns, declared in one place."""

    name: str  # the kind in every report
    label: str  # in sentences
    terraform_types: tuple[str, ...]  # what the stacks synthesize for it (none: made by AWS itself)
    arn_types: tuple[tuple[str, str], ...]  # (service, ARN resource type) the tagging index lists it as
    found_by: str  # how candidates are found (for the docs and --help)
    owner: str  # how ownership is proven
    order: int  # deletion order: lower first
    asynchronous: bool  # AWS deletes it in the background: poll until gone
    discover: Callable[[Scan], None]
    delete: Callable[[AwsClients, Resource], Any]
    status: Callable[[AwsClients, Resource], str] | None = None  # asynchronous kinds: current status
    batches: Callable[[list[Resource]], list[list[Resource]]] = lambda rs: [rs] if rs else []
    blocked: Callable[[Resource, Inventory, set[tuple[str, str]]], str] = _none_blocked
    data: bool = False  # holds data (logs): reported, deleted only when asked explicitly


#: Every kind, in discovery order (a kind proven through another comes after it).
KINDS: tuple[Kind, ...] = (
    Kind(
        "endpoint", "endpoint", ("aws_sagemaker_endpoint",), (("sagemaker", "endpoint"),),
        "exact name (any case), tag", "its tags", 40, True, _discover_endpoints, _delete_endpoint, _status_endpoint,
        blocked=_blocked_endpoint,
    ),
    Kind(
        "inference-component", "inference component", ("awscc_sagemaker_inference_component",),
        (("sagemaker", "inference-component"),), "exact name (any case), on an endpoint of the stack, tag", "its tags",
        30, True, _discover_components, _delete_component, _status_component, batches=_adapters_first,
    ),
    Kind(
        "endpoint-config", "endpoint configuration", ("aws_sagemaker_endpoint_configuration", "awscc_sagemaker_endpoint_config"),
        (("sagemaker", "endpoint-config"),), "prefix <endpoint>- (any case), tag", "its tags", 50, False,
        _discover_endpoint_configs, lambda aws, r: aws.sagemaker.delete_endpoint_config(EndpointConfigName=r.name),
    ),
    Kind(
        "model", "model", ("aws_sagemaker_model",), (("sagemaker", "model"),),
        "exact name, prefix <endpoint or component>- (older digests), tag", "its tags", 51, False,
        _discover_models, lambda aws, r: aws.sagemaker.delete_model(ModelName=r.name),
    ),
    Kind(
        "scalable-target", "scalable target", ("aws_appautoscaling_target",), (("application-autoscaling", "scalable-target"),),
        "resource id of an endpoint variant or component found above",
        "the endpoint or component it scales; once that is gone, its own tags", 21, False, _discover_targets,
        lambda aws, r: aws.autoscaling.deregister_scalable_target(
            ServiceNamespace=r.data["ServiceNamespace"], ResourceId=r.data["ResourceId"], ScalableDimension=r.data["ScalableDimension"]
        ),
    ),
    Kind(
        "scaling-policy", "scaling policy", ("aws_appautoscaling_policy",), (),
        "resource id of an endpoint variant or component found above", "its scalable target (no tags of its own)", 20, False,
        _discover_policies,
        lambda aws, r: aws.autoscaling.delete_scaling_policy(
            PolicyName=r.data["PolicyName"], ServiceNamespace=r.data["ServiceNamespace"],
            ResourceId=r.data["ResourceId"], ScalableDimension=r.data["ScalableDimension"],
        ),
    ),
    Kind(
        "alarm", "alarm", ("aws_cloudwatch_metric_alarm",), (("cloudwatch", "alarm"),),
        "exact name, prefix <endpoint or component>-, TargetTracking-<resource id>-, tag",
        "its tags; a target-tracking alarm through its policy", 10, False, _discover_alarms,
        # One name per call: DeleteAlarms fails as a whole when any listed alarm is already gone.
        lambda aws, r: aws.cloudwatch.delete_alarms(AlarmNames=[r.name]),
    ),
    Kind(
        "dashboard", "dashboard", ("aws_cloudwatch_dashboard",), (), "exact name",
        "the marker line the stack writes into its body (no tags)", 11, False, _discover_dashboard,
        lambda aws, r: aws.cloudwatch.delete_dashboards(DashboardNames=[r.name]),
    ),
    Kind(
        "iam-role", "IAM role", ("aws_iam_role", "aws_iam_role_policy"), (("iam", "role"),),
        "exact name <endpoint>-sagemaker-<region> (also of endpoints found by tag), and <endpoint>-sagemaker (earlier releases)",
        f"its tags, {TAG_REGION} included (IAM is global)", 70, False,
        _discover_roles, _delete_role, blocked=_blocked_role,
    ),
    Kind(
        "log-group", "log group", (), (("logs", "log-group"),),
        "exact name /aws/sagemaker/Endpoints/<endpoint>, /aws/sagemaker/InferenceComponents/<component>",
        "its tags, else the endpoint or component that writes it", 60, False, _discover_log_groups,
        lambda aws, r: aws.logs.delete_log_group(logGroupName=r.name), data=True,
    ),
)

KIND: dict[str, Kind] = {k.name: k for k in KINDS}


@translate_errors
def take_inventory(config: FastscaleConfig, clients: ClientsArg = None) -> Inventory:
    """Everything of ``config``'s stack in the account, and everything found by its names that is not its own."""
    scan = Scan(resolve(clients, config), config)
    scan.tag_index()
    for kind in KINDS:
        kind.discover(scan)
    inventory = scan.inventory
    for arn, tags in scan.tagged_other:
        ownership = scan.ownership(tags)
        detail = "a resource type fastscale does not create or delete: delete it by hand"
        inventory.resources.append(Resource("tagged-resource", arn, arn, "", detail, "tag", ownership if not ownership.ours else Ownership(NOT_OURS, f"tagged {TAG_STACK}={scan.stack}, but " + detail)))
    inventory.owners_checked = [f"endpoint {n.endpoint}" for n in scan.names] + [
        f"inference component {c.name}" for n in scan.names for c in n.components
    ]
    return inventory


def claim_log_groups(inventory: Inventory, config: FastscaleConfig, clients: ClientsArg = None) -> list[str]:
    """Tag the stack's log groups that only their endpoint or component proves its own, while that owner
    still exists: once the endpoint is deleted, nothing else could prove them, and `sweep --delete-logs`
    would have to leave them. Returns the names tagged."""
    aws = resolve(clients, config)
    claimed = []
    for r in inventory.kept:
        if r.data.get("untagged") and r.arn:
            try:
                aws.logs.tag_resource(resourceArn=r.arn, tags=stack_tags(config))
            except ClientError:
                continue  # best effort (e.g. no logs:TagResource): the logs stay, reported as kept
            r.data["untagged"] = False
            claimed.append(r.name)
    return claimed


def ownership_of_endpoint(aws: AwsClients, config: FastscaleConfig, arn: str) -> Ownership:
    """Who owns a live endpoint (for `status`): its tags."""
    tags = {t["Key"]: t["Value"] for t in paginate(aws.sagemaker, "list_tags", "Tags", ResourceArn=arn)}
    return tag_ownership(tags, stack_name(config), config.region)
