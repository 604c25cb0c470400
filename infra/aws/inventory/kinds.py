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


#: Every kind, in discovery order (a kind proven through another comes after it). `order` is the deletion
#: order across kinds (lower first): alarms and dashboards, then scaling policies and targets, components,
#: endpoints, endpoint configurations and models, log groups, and the role last (SageMaker uses it until then).
KINDS: tuple[Kind, ...] = (
    Kind(
        name="endpoint",
        label="endpoint",
        terraform_types=("aws_sagemaker_endpoint",),
        arn_types=(("sagemaker", "endpoint"),),
        found_by="exact name (any case), tag",
        owner="its tags",
        order=40,
        asynchronous=True,
        discover=discover_endpoints,
        delete=_delete_endpoint,
        status=_status_endpoint,
        blocked=_blocked_endpoint,
    ),
    Kind(
        name="inference-component",
        label="inference component",
        terraform_types=("awscc_sagemaker_inference_component",),
        arn_types=(("sagemaker", "inference-component"),),
        found_by="exact name (any case), on an endpoint of the stack, tag",
        owner="its tags",
        order=30,
        asynchronous=True,
        discover=discover_components,
        delete=_delete_component,
        status=_status_component,
        batches=_adapters_first,
    ),
    Kind(
        name="endpoint-config",
        label="endpoint configuration",
        terraform_types=("aws_sagemaker_endpoint_configuration", "awscc_sagemaker_endpoint_config"),
        arn_types=(("sagemaker", "endpoint-config"),),
        found_by="prefix <endpoint>- (any case), tag",
        owner="its tags",
        order=50,
        asynchronous=False,
        discover=discover_endpoint_configs,
        delete=lambda aws, r: aws.sagemaker.delete_endpoint_config(EndpointConfigName=r.name),
    ),
    Kind(
        name="model",
        label="model",
        terraform_types=("aws_sagemaker_model",),
        arn_types=(("sagemaker", "model"),),
        found_by="exact name, prefix <endpoint or component>- (older digests), tag",
        owner="its tags",
        order=51,
        asynchronous=False,
        discover=discover_models,
        delete=lambda aws, r: aws.sagemaker.delete_model(ModelName=r.name),
    ),
    Kind(
        name="scalable-target",
        label="scalable target",
        terraform_types=("aws_appautoscaling_target",),
        arn_types=(("application-autoscaling", "scalable-target"),),
        found_by="resource id of an endpoint variant or component found above",
        owner="the endpoint or component it scales; once that is gone, its own tags",
        order=21,
        asynchronous=False,
        discover=discover_targets,
        delete=lambda aws, r: aws.autoscaling.deregister_scalable_target(
            ServiceNamespace=r.data["ServiceNamespace"], ResourceId=r.data["ResourceId"],
            ScalableDimension=r.data["ScalableDimension"],
        ),
    ),
    Kind(
        name="scaling-policy",
        label="scaling policy",
        terraform_types=("aws_appautoscaling_policy",),
        arn_types=(),
        found_by="resource id of an endpoint variant or component found above",
        owner="its scalable target (no tags of its own)",
        order=20,
        asynchronous=False,
        discover=discover_policies,
        delete=lambda aws, r: aws.autoscaling.delete_scaling_policy(
            PolicyName=r.data["PolicyName"], ServiceNamespace=r.data["ServiceNamespace"],
            ResourceId=r.data["ResourceId"], ScalableDimension=r.data["ScalableDimension"],
        ),
    ),
    Kind(
        name="alarm",
        label="alarm",
        terraform_types=("aws_cloudwatch_metric_alarm",),
        arn_types=(("cloudwatch", "alarm"),),
        found_by="exact name, prefix <endpoint or component>-, TargetTracking-<resource id>-, tag",
        owner="its tags; a target-tracking alarm through its policy",
        order=10,
        asynchronous=False,
        discover=discover_alarms,
        # One name per call: DeleteAlarms fails as a whole when any listed alarm is already gone.
        delete=lambda aws, r: aws.cloudwatch.delete_alarms(AlarmNames=[r.name]),
    ),
    Kind(
        name="dashboard",
        label="dashboard",
        terraform_types=("aws_cloudwatch_dashboard",),
        arn_types=(),
        found_by="exact name",
        owner="the marker line the stack writes into its body (no tags)",
        order=11,
        asynchronous=False,
        discover=discover_dashboard,
        delete=lambda aws, r: aws.cloudwatch.delete_dashboards(DashboardNames=[r.name]),
    ),
    Kind(
        name="iam-role",
        label="IAM role",
        terraform_types=("aws_iam_role", "aws_iam_role_policy"),
        arn_types=(("iam", "role"),),
        found_by="exact name <endpoint>-sagemaker-<region> (also of endpoints found by tag), "
        "and <endpoint>-sagemaker (earlier releases)",
        owner=f"its tags, {TAG_REGION} included (IAM is global)",
        order=70,
        asynchronous=False,
        discover=discover_roles,
        delete=_delete_role,
        blocked=_blocked_role,
    ),
    Kind(
        name="log-group",
        label="log group",
        terraform_types=(),
        arn_types=(("logs", "log-group"),),
        found_by="exact name /aws/sagemaker/Endpoints/<endpoint>, /aws/sagemaker/InferenceComponents/<component>",
        owner="its tags, else the endpoint or component that writes it",
        order=60,
        asynchronous=False,
        discover=discover_log_groups,
        delete=lambda aws, r: aws.logs.delete_log_group(logGroupName=r.name),
        data=True,
    ),
)

KIND: dict[str, Kind] = {k.name: k for k in KINDS}
