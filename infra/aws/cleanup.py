"""Prove after ``destroy`` that nothing fastscale created is left — and so no GPU bill and no cache.

Terraform forgets a resource as soon as its delete call returns, but SageMaker deletes endpoints and
inference components asynchronously, and a lost or partial state file leaves resources Terraform no
longer knows about. ``verify_cleanup`` therefore asks AWS directly, by the names in ``infra.naming`` and
by the stack tag, and lists every leftover.

Container image caches and inference-component data caches have no API of their own: each belongs to
one endpoint and AWS purges it when it deletes that endpoint. Proving the owners (endpoints and their
components) gone is the proof that the caches are gone.
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
from fastscale.infra.aws_facts import SERVICE_NAMESPACE
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.naming import TAG_STACK, EndpointNames, all_endpoint_names, dashboard_name, stack_name


@dataclass(frozen=True)
class Leftover:
    kind: str  # endpoint, inference-component, endpoint-config, model, scalable-target, scaling-policy,
    #           alarm, dashboard, iam-role, tagged-resource
    name: str
    detail: str = ""
    arn: str = ""

    def __str__(self) -> str:
        return f"{self.kind} {self.name}" + (f": {self.detail}" if self.detail else "")


@dataclass
class CleanupReport:
    leftovers: list[Leftover] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # what was looked for, for people reading the report
    caches: str = ""  # the statement about image / data caches

    @property
    def ok(self) -> bool:
        return not self.leftovers

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "leftovers": [asdict(x) for x in self.leftovers],
            "checked": list(self.checked),
            "caches": self.caches,
        }


def parse_arn(arn: str) -> tuple[str, str, str] | None:
    """(service, resource type, resource name) of an ARN, or None when it is not one."""
    parts = arn.split(":", 5)
    if len(parts) != 6 or parts[0] != "arn":
        return None
    service, resource = parts[2], parts[5]
    for sep in ("/", ":"):
        if sep in resource:
            kind, name = resource.split(sep, 1)
            return service, kind, name
    return service, "", resource


@translate_errors
def verify_cleanup(config: FastscaleConfig, clients: ClientsArg = None) -> CleanupReport:
    """List everything of ``config`` still present in AWS; ``report.ok`` is True only when nothing is."""
    aws = resolve(clients, config)
    report = CleanupReport()
    names = all_endpoint_names(config)
    owners: list[str] = []  # endpoints and components still present: their caches may still exist

    for n in names:
        _endpoint_leftovers(aws, n, report, owners)
    _scaling_leftovers(aws, names, report)
    _alarm_leftovers(aws, names, report)
    _dashboard_leftover(aws, dashboard_name(config), report)
    for n in names:
        if n.execution_role:
            _role_leftover(aws, n.execution_role, report)
    _tagged_leftovers(aws, stack_name(config), report)

    all_owners = [f"endpoint {n.endpoint}" for n in names] + [
        f"inference component {c.name}" for n in names for c in n.components
    ]
    if owners:
        report.caches = (
            "Container image and model data caches may still exist: their owners are still present ("
            + ", ".join(owners)
            + "). AWS purges an endpoint's caches only when it finishes deleting the endpoint."
        )
    else:
        report.caches = (
            "Container image and model data caches are gone: their owners ("
            + ", ".join(all_owners)
            + ") no longer exist, and AWS purges an endpoint's caches with the endpoint (there is no cache API)."
        )
    return report


def _endpoint_leftovers(aws: AwsClients, n: EndpointNames, report: CleanupReport, owners: list[str]) -> None:
    sm = aws.sagemaker
    report.checked.append(f"endpoint {n.endpoint}")
    try:
        desc = sm.describe_endpoint(EndpointName=n.endpoint)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        desc = None
    if desc is not None:
        status = desc.get("EndpointStatus", "")
        detail = (
            "still Deleting: AWS has not finished removing it (nor its caches)"
            if status == "Deleting"
            else f"status {status}: still running (and billing)"
        )
        report.leftovers.append(Leftover("endpoint", n.endpoint, detail, desc.get("EndpointArn", "")))
        owners.append(f"endpoint {n.endpoint} ({status})")
        # Components only exist on a live endpoint (SageMaker refuses to delete an endpoint that still has
        # any), and only on one whose variant names no model: a single-model endpoint cannot carry them.
        if n.spec.uses_inference_components:
            report.checked.append(f"inference components on {n.endpoint}")
            for ic in paginate(sm, "list_inference_components", "InferenceComponents", EndpointNameEquals=n.endpoint):
                status = ic.get("InferenceComponentStatus", "")
                report.leftovers.append(
                    Leftover("inference-component", ic["InferenceComponentName"], f"status {status}", ic.get("InferenceComponentArn", ""))
                )
                owners.append(f"inference component {ic['InferenceComponentName']} ({status})")

    report.checked.append(f"endpoint configurations {n.endpoint_config_prefix}*")
    for cfg in paginate(sm, "list_endpoint_configs", "EndpointConfigs", NameContains=n.endpoint_config_prefix):
        # NameContains matches anywhere in the name; only our prefix is ours.
        if cfg["EndpointConfigName"].startswith(n.endpoint_config_prefix):
            report.leftovers.append(
                Leftover("endpoint-config", cfg["EndpointConfigName"], f"configuration of {n.endpoint}", cfg.get("EndpointConfigArn", ""))
            )

    for model_name in model_names(n):
        report.checked.append(f"model {model_name}")
        try:
            model = sm.describe_model(ModelName=model_name)
        except ClientError as exc:
            if not is_not_found(exc):
                raise
        else:
            report.leftovers.append(Leftover("model", model_name, f"model of {n.endpoint}", model.get("ModelArn", "")))


def model_names(n: EndpointNames) -> list[str]:
    """The SageMaker models of an endpoint: its own (single-model) or one per inference component, and
    those its fallback pools run instead."""
    return [m for m in [n.model, *(c.model for c in n.components), *n.pool_models] if m]


def _resource_ids(names: list[EndpointNames]) -> list[str]:
    rids = []
    for n in names:
        rids.append(n.resource_id)
        rids += [c.resource_id for c in n.components]
    return rids


def _scaling_leftovers(aws: AwsClients, names: list[EndpointNames], report: CleanupReport) -> None:
    aas = aws.autoscaling
    rids = _resource_ids(names)
    report.checked.append("scalable targets and scaling policies of " + ", ".join(rids))
    for batch in chunks(rids, 50):
        for t in paginate(aas, "describe_scalable_targets", "ScalableTargets", ServiceNamespace=SERVICE_NAMESPACE, ResourceIds=batch):
            report.leftovers.append(
                Leftover(
                    "scalable-target",
                    t["ResourceId"],
                    f"{t['ScalableDimension']} min {t['MinCapacity']} max {t['MaxCapacity']}",
                    t.get("ScalableTargetARN", ""),
                )
            )
    for rid in rids:
        for p in paginate(aas, "describe_scaling_policies", "ScalingPolicies", ServiceNamespace=SERVICE_NAMESPACE, ResourceId=rid):
            report.leftovers.append(Leftover("scaling-policy", p["PolicyName"], f"{p.get('PolicyType')} on {rid}", p.get("PolicyARN", "")))


def _alarm_prefixes(names: list[EndpointNames]) -> list[str]:
    prefixes = []
    for n in names:
        prefixes.append(f"{n.endpoint}-")
        prefixes += [f"{c.name}-" for c in n.components]
        # Alarms Application Auto Scaling creates for target tracking go with their policy; any still
        # present means a policy (or its clean-up) was left behind.
        prefixes.append(f"TargetTracking-{n.resource_id}-")
        prefixes += [f"TargetTracking-{c.resource_id}-" for c in n.components]
    return prefixes


def _alarm_leftovers(aws: AwsClients, names: list[EndpointNames], report: CleanupReport) -> None:
    cw = aws.cloudwatch
    named = [a for n in names for a in n.all_alarm_names]
    found: dict[str, dict[str, Any]] = {}
    if named:
        report.checked.append("alarms " + ", ".join(named))
        for batch in chunks(named, 100):
            for alarm in paginate(cw, "describe_alarms", "MetricAlarms", AlarmNames=batch):
                found[alarm["AlarmName"]] = alarm
    prefixes = _alarm_prefixes(names)
    report.checked.append("alarms named " + ", ".join(f"{p}*" for p in prefixes))
    for prefix in prefixes:
        for alarm in paginate(cw, "describe_alarms", "MetricAlarms", AlarmNamePrefix=prefix):
            found.setdefault(alarm["AlarmName"], alarm)
    for name in sorted(found):
        report.leftovers.append(Leftover("alarm", name, "CloudWatch alarm", found[name].get("AlarmArn", "")))


def _dashboard_leftover(aws: AwsClients, name: str, report: CleanupReport) -> None:
    report.checked.append(f"dashboard {name}")
    try:
        d = aws.cloudwatch.get_dashboard(DashboardName=name)
    except ClientError as exc:
        if not is_not_found(exc):
            raise
        return
    report.leftovers.append(Leftover("dashboard", name, "CloudWatch dashboard", d.get("DashboardArn", "")))


def _role_leftover(aws: AwsClients, role: str, report: CleanupReport) -> None:
    report.checked.append(f"IAM role {role}")
    try:
        r = aws.iam.get_role(RoleName=role)
    except ClientError as exc:
        if error_code(exc) != "NoSuchEntity":
            raise
        return
    report.leftovers.append(Leftover("iam-role", role, "execution role", r["Role"].get("Arn", "")))


def _still_exists(aws: AwsClients, arn: str) -> bool:
    """Whether a tagged resource still exists; the tagging index lags deletions by minutes.

    Resource types fastscale knows how to describe are confirmed; anything else is taken at its word.
    """
    parsed = parse_arn(arn)
    if parsed is None:
        return True
    service, kind, name = parsed
    calls = {
        ("sagemaker", "endpoint"): lambda: aws.sagemaker.describe_endpoint(EndpointName=name),
        ("sagemaker", "endpoint-config"): lambda: aws.sagemaker.describe_endpoint_config(EndpointConfigName=name),
        ("sagemaker", "model"): lambda: aws.sagemaker.describe_model(ModelName=name),
        ("sagemaker", "inference-component"): lambda: aws.sagemaker.describe_inference_component(InferenceComponentName=name),
    }
    if service == "cloudwatch" and kind == "alarm":
        return bool(aws.cloudwatch.describe_alarms(AlarmNames=[name]).get("MetricAlarms"))
    call = calls.get((service, kind))
    if call is None:
        return True
    try:
        call()
    except ClientError as exc:
        if is_not_found(exc):
            return False
        raise
    return True


def _tagged_leftovers(aws: AwsClients, stack: str, report: CleanupReport) -> None:
    report.checked.append(f"resources tagged {TAG_STACK}={stack}")
    known = {x.arn for x in report.leftovers if x.arn}
    for item in paginate(aws.tagging, "get_resources", "ResourceTagMappingList", TagFilters=[{"Key": TAG_STACK, "Values": [stack]}]):
        arn = item["ResourceARN"]
        if arn in known or not _still_exists(aws, arn):
            continue
        known.add(arn)
        report.leftovers.append(Leftover("tagged-resource", arn, f"still carries {TAG_STACK}={stack}", arn))
