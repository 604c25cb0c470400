"""How each kind is found and proven the stack's (the ``discover`` of every :class:`~.model.Kind`)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import (
    chunks,
    error_code,
    is_not_found,
    paginate,
)
from fastscale.infra.aws.inventory.model import (
    NO_MARKER,
    NOT_OURS,
    OURS,
    UNPROVEN,
    Ownership,
    Resource,
    arn_parts,
    through,
)
from fastscale.infra.base.aws_facts import (
    COMPONENT_LOG_GROUP,
    ENDPOINT_LOG_GROUP,
    SERVICE_NAMESPACE,
    TARGET_TRACKING_ALARM_PREFIX,
)
from fastscale.infra.model.naming import (
    MANAGED_BY_VALUE,
    MODEL_DIGEST_LEN,
    TAG_MANAGED_BY,
    TAG_REGION,
    TAG_STACK,
    component_resource_id,
    dashboard_owner,
    execution_role_name,
    former_execution_role_name,
    variants_resource_prefix,
)

if TYPE_CHECKING:
    from fastscale.infra.aws.inventory.scan import Scan  # the argument of every discover function

def _endpoint_detail(status: str) -> str:
    if status == "Deleting":
        return "still Deleting: AWS has not finished removing it (nor its caches)"
    return f"status {status}: still running (and billing)"


def discover_endpoints(scan: Scan) -> None:
    exact = scan.wanted("endpoint")
    scan.checked("endpoints " + ", ".join(n.name for n in scan.names) + " (any case) and endpoints tagged with the stack")
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


def discover_components(scan: Scan) -> None:
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
    names = [n.name for n in scan.names] + scan.owned_names("endpoint")
    return list(dict.fromkeys(f"{n.lower()}-" for n in names))


def discover_endpoint_configs(scan: Scan) -> None:
    prefixes = _endpoint_prefixes(scan)
    exact = scan.wanted("endpoint-config")  # adopted configurations keep their live names
    scan.checked("endpoint configurations " + "".join(f"{n}, " for n in exact) + "named "
                 + ", ".join(f"{p}*" for p in prefixes) + " and tagged ones")
    for item, how in scan.sagemaker_candidates(
        "endpoint-config", "list_endpoint_configs", "EndpointConfigs", "EndpointConfigName", "EndpointConfigArn", exact, prefixes
    ):
        arn = item["EndpointConfigArn"]
        name = item["EndpointConfigName"]
        scan.add(Resource("endpoint-config", name, arn, "", "endpoint configuration", how, scan.ownership(scan.sagemaker_tags("endpoint-config", arn))))


def discover_models(scan: Scan) -> None:
    exact = scan.wanted("model")
    # Models of an older content digest (the name ends with a new digest when the image or data change).
    bases = [n.name for n in scan.names if n.model] + [c.name for n in scan.names for c in n.components]
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
    out = {("endpoint", n.name.lower()): True for n in scan.names}
    out |= {("inference-component", c.name.lower()): True for n in scan.names for c in n.components}
    for kind in ("endpoint", "inference-component"):
        for r in scan.inventory.of(kind):
            out.setdefault((kind, r.name.lower()), False)
    return out


def _owner_of_scaling(scan: Scan, rid: str) -> Resource | None:
    parsed = _parse_resource_id(rid)
    return scan.found(*parsed) if parsed else None


def discover_targets(scan: Scan) -> None:
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


def discover_policies(scan: Scan) -> None:
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


def discover_alarms(scan: Scan) -> None:
    cw = scan.aws.cloudwatch
    exact = scan.wanted("alarm")
    found: dict[str, tuple[dict[str, Any], str]] = {}
    named = [n for i in scan.names for n in i.all_alarm_names]
    if named:
        scan.checked("alarms " + ", ".join(named))
        for batch in chunks(named, 100):
            for alarm in paginate(cw, "describe_alarms", "MetricAlarms", AlarmNames=batch):
                found[alarm["AlarmName"]] = (alarm, "name")
    tagged_names = [arn_parts(a)[2] for a in scan.tagged["alarm"]]
    for batch in chunks([n for n in tagged_names if n not in found], 100):
        for alarm in paginate(cw, "describe_alarms", "MetricAlarms", AlarmNames=batch):
            found.setdefault(alarm["AlarmName"], (alarm, "tag"))
    prefixes = [f"{n}-" for n in dict.fromkeys([i.name for i in scan.names] + [c.name for i in scan.names for c in i.components])]
    prefixes += [f"{r.name}-" for r in scan.inventory.resources if r.kind in ("endpoint", "inference-component") and r.ownership.ours]
    # The alarms Application Auto Scaling makes for target tracking are named after the resource id: of any variant
    # of an endpoint (an adopted one's is its live variant), under the names as AWS spells them.
    endpoints = dict.fromkeys([i.name for i in scan.names] + [r.name for r in scan.inventory.of("endpoint")])
    components = dict.fromkeys([c.name for i in scan.names for c in i.components]
                               + [r.name for r in scan.inventory.of("inference-component")])
    prefixes += [f"{TARGET_TRACKING_ALARM_PREFIX}{variants_resource_prefix(n)}" for n in endpoints]
    rids = [component_resource_id(n) for n in components] + [r.name for r in scan.inventory.of("scalable-target")]
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
        # for target tracking (AAS user guide, "Tagging support",
        # https://docs.aws.amazon.com/autoscaling/application/userguide/resource-tagging-support.html), so a stack
        # tag on such an alarm was put there on purpose, and one naming another stack makes it that stack's
        # whatever its name says.
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
    for kind, prefix_of in (("endpoint", variants_resource_prefix),
                            ("inference-component", lambda name: f"{component_resource_id(name)}-")):
        for r in scan.inventory.of(kind):
            if rest.startswith(prefix_of(r.name)):
                return through(r, kind.replace("-", " "))
    return Ownership(NOT_OURS, "its policy, target and endpoint are gone, so nothing proves whose it was; not touched")


def discover_dashboard(scan: Scan) -> None:
    name = scan.resolved.dashboard_name
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
        headers = [f"## {n.name} (" for n in scan.names]
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


def discover_roles(scan: Scan) -> None:
    names = [n.execution_role for n in scan.names if n.execution_role]
    # Endpoints found by tag only (renamed in the config since) had their role named after them.
    renamed = [r.name for r in scan.inventory.of("endpoint") if r.ownership.ours and r.found_by != "name"]
    names += [execution_role_name(e, scan.region) for e in renamed]
    names += [arn_parts(arn)[2].rsplit("/", 1)[-1] for arn in scan.tagged["iam-role"]]
    # The name earlier releases gave the role, without the region: found, proven by its tags (region
    # included) like any other, never a name clash (a stack in another region may own it).
    former = [former_execution_role_name(n.name) for n in scan.names if n.execution_role]
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


def discover_log_groups(scan: Scan) -> None:
    owners: dict[str, tuple[str, str]] = {}
    for n in scan.names:
        owners[ENDPOINT_LOG_GROUP.format(n.name)] = ("endpoint", n.name)
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

