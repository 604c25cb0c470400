"""Every resource kind a stack owns, declared in one place (:data:`KINDS`), with how each is deleted."""

from __future__ import annotations

from fastscale.infra.aws.clients import (
    AwsClients,
    paginate,
)
from fastscale.infra.aws.inventory.discovery import (
    discover_alarms,
    discover_components,
    discover_dashboard,
    discover_endpoint_configs,
    discover_endpoints,
    discover_log_groups,
    discover_models,
    discover_policies,
    discover_roles,
    discover_targets,
)
from fastscale.infra.aws.inventory.model import Inventory, Kind, Resource
from fastscale.infra.model.naming import (
    TAG_REGION,
)


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



#: Every kind, in discovery order (a kind proven through another comes after it).
KINDS: tuple[Kind, ...] = (
    Kind(
        "endpoint", "endpoint", ("aws_sagemaker_endpoint",), (("sagemaker", "endpoint"),),
        "exact name (any case), tag", "its tags", 40, True, discover_endpoints, _delete_endpoint, _status_endpoint,
        blocked=_blocked_endpoint,
    ),
    Kind(
        "inference-component", "inference component", ("awscc_sagemaker_inference_component",),
        (("sagemaker", "inference-component"),), "exact name (any case), on an endpoint of the stack, tag", "its tags",
        30, True, discover_components, _delete_component, _status_component, batches=_adapters_first,
    ),
    Kind(
        "endpoint-config", "endpoint configuration", ("aws_sagemaker_endpoint_configuration", "awscc_sagemaker_endpoint_config"),
        (("sagemaker", "endpoint-config"),), "prefix <endpoint>- (any case), tag", "its tags", 50, False,
        discover_endpoint_configs, lambda aws, r: aws.sagemaker.delete_endpoint_config(EndpointConfigName=r.name),
    ),
    Kind(
        "model", "model", ("aws_sagemaker_model",), (("sagemaker", "model"),),
        "exact name, prefix <endpoint or component>- (older digests), tag", "its tags", 51, False,
        discover_models, lambda aws, r: aws.sagemaker.delete_model(ModelName=r.name),
    ),
    Kind(
        "scalable-target", "scalable target", ("aws_appautoscaling_target",), (("application-autoscaling", "scalable-target"),),
        "resource id of an endpoint variant or component found above",
        "the endpoint or component it scales; once that is gone, its own tags", 21, False, discover_targets,
        lambda aws, r: aws.autoscaling.deregister_scalable_target(
            ServiceNamespace=r.data["ServiceNamespace"], ResourceId=r.data["ResourceId"], ScalableDimension=r.data["ScalableDimension"]
        ),
    ),
    Kind(
        "scaling-policy", "scaling policy", ("aws_appautoscaling_policy",), (),
        "resource id of an endpoint variant or component found above", "its scalable target (no tags of its own)", 20, False,
        discover_policies,
        lambda aws, r: aws.autoscaling.delete_scaling_policy(
            PolicyName=r.data["PolicyName"], ServiceNamespace=r.data["ServiceNamespace"],
            ResourceId=r.data["ResourceId"], ScalableDimension=r.data["ScalableDimension"],
        ),
    ),
    Kind(
        "alarm", "alarm", ("aws_cloudwatch_metric_alarm",), (("cloudwatch", "alarm"),),
        "exact name, prefix <endpoint or component>-, TargetTracking-<resource id>-, tag",
        "its tags; a target-tracking alarm through its policy", 10, False, discover_alarms,
        # One name per call: DeleteAlarms fails as a whole when any listed alarm is already gone.
        lambda aws, r: aws.cloudwatch.delete_alarms(AlarmNames=[r.name]),
    ),
    Kind(
        "dashboard", "dashboard", ("aws_cloudwatch_dashboard",), (), "exact name",
        "the marker line the stack writes into its body (no tags)", 11, False, discover_dashboard,
        lambda aws, r: aws.cloudwatch.delete_dashboards(DashboardNames=[r.name]),
    ),
    Kind(
        "iam-role", "IAM role", ("aws_iam_role", "aws_iam_role_policy"), (("iam", "role"),),
        "exact name <endpoint>-sagemaker-<region> (also of endpoints found by tag), and <endpoint>-sagemaker (earlier releases)",
        f"its tags, {TAG_REGION} included (IAM is global)", 70, False,
        discover_roles, _delete_role, blocked=_blocked_role,
    ),
    Kind(
        "log-group", "log group", (), (("logs", "log-group"),),
        "exact name /aws/sagemaker/Endpoints/<endpoint>, /aws/sagemaker/InferenceComponents/<component>",
        "its tags, else the endpoint or component that writes it", 60, False, discover_log_groups,
        lambda aws, r: aws.logs.delete_log_group(logGroupName=r.name), data=True,
    ),
)

KIND: dict[str, Kind] = {k.name: k for k in KINDS}
