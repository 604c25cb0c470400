"""Resource names and tags: the single source used by the stacks *and* by live verification / cleanup.

If the stacks and the verifier each built names on their own, a rename in one would make `fastscale
destroy` report a clean account while an endpoint (and its GPU bill) lives on. Everything that names an
AWS resource goes through here.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from fastscale.infra.base import catalog
from fastscale.infra.config import Adopted, EndpointSpec, FastscaleConfig, InferenceComponentSpec, ModelSpec
from fastscale.infra.config.secrets import container_environment
from fastscale.infra.model import capacity
from fastscale.infra.model.update_settings import component_alarm_kinds, rollback_only_endpoint_kinds

#: Every endpoint has one production variant; SageMaker's console default name.
VARIANT_NAME = "AllTraffic"

#: Tag keys fastscale puts on everything it creates (on top of the user's tags).
TAG_STACK = "fastscale:stack"
TAG_ENDPOINT = "fastscale:endpoint"
TAG_MANAGED_BY = "managed-by"
#: The stack's region: IAM roles and CloudWatch dashboards are global, so a project of the same name in
#: another region would otherwise look like this stack's.
TAG_REGION = "fastscale:region"
MANAGED_BY_VALUE = "fastscale"
#: The tags that say which stack owns a resource (teardown proves ownership by them): a change of any of them
#: on a live resource is a change of owner, which `plan` shows as such.
OWNERSHIP_TAGS = (TAG_STACK, TAG_REGION, TAG_MANAGED_BY)

#: Terraform's `name_prefix` appends a 26-character unique suffix; SageMaker names stop at 63 characters.
NAME_PREFIX_SUFFIX_LEN = 26
SAGEMAKER_NAME_MAX = 63
IAM_ROLE_NAME_MAX = 64
#: Hex digits of the content digest that ends every model name (see `model_name`).
MODEL_DIGEST_LEN = 8
#: The Terraform type of a SageMaker model, as `overrides:` name it (infra.model.overrides.MODEL).
MODEL_TYPE = "aws_sagemaker_model"


def stack_name(config: FastscaleConfig) -> str:
    return config.project


def endpoint_name(project: str, endpoint: str) -> str:
    return f"{project}-{endpoint}"


def component_name(project: str, component: str) -> str:
    return f"{project}-{component}"


def endpoint_name_of(project: str, ep: EndpointSpec) -> str:
    """The endpoint's name in AWS: the live name it was adopted under (`adopted.endpoint`), else
    `endpoint_name`."""
    return ep.adopted.endpoint if ep.adopted is not None else endpoint_name(project, ep.name)


def component_name_of(project: str, c: InferenceComponentSpec) -> str:
    """The component's name in AWS: its adopted live name, else `component_name`."""
    return c.adopted.name if c.adopted is not None else component_name(project, c.name)


def execution_role_name(endpoint: str, region: str) -> str:
    """The execution role fastscale creates for an endpoint: `{project}-{endpoint}-sagemaker-{region}`.

    IAM is global while a stack is regional: one project deployed to two regions has two stacks, each with
    its own role, so the region is part of the name (FS016 keeps it within IAM's 64 characters; the
    longest region name has 15). A role shared by the regions would be owned by two Terraform states, and
    the first destroy would take it from the other region's endpoints.
    """
    return f"{endpoint}-sagemaker-{region}"


def former_execution_role_name(endpoint: str) -> str:
    """The name earlier releases gave the execution role (no region): still looked for at teardown."""
    return f"{endpoint}-sagemaker"


def model_name(base: str, ep: EndpointSpec, workload: ModelSpec | InferenceComponentSpec, execution_role: str | None) -> str:
    """`{base}-{digest}`: the name changes exactly when the SageMaker model must be replaced.

    A SageMaker model cannot be updated, only replaced, and the endpoint configuration that uses it is
    created before the old one is destroyed (Terraform then does the same for the model it depends on).
    With a fixed name the new model would collide with the old one still in place, so the name carries a
    digest of every setting that forces a new model: image, model data, EULA acceptance, environment, role,
    VPC and the model's overrides. The role
    is the user's ARN, or the name of the role fastscale creates (``execution_role``), whose ARN changes
    only with its name.
    """
    vpc = {"subnets": sorted(ep.vpc.subnets), "security_groups": sorted(ep.vpc.security_groups)} if ep.vpc else None
    content: dict[str, object] = {
        "image": workload.image,
        "model_data": workload.model_data,
        "environment": container_environment(workload),
        "execution_role_arn": ep.execution_role_arn or (f"role/{execution_role}" if execution_role else None),
        "vpc": vpc,
    }
    if workload.accept_eula:  # only when set, so the names of existing models stay as they were
        content["accept_eula"] = True
    # The model's `overrides:` (the component's, or the endpoint's for its single model) can force a new
    # model as much as the settings above; only when there are any, as for the EULA.
    owner = workload if isinstance(workload, InferenceComponentSpec) else ep
    if owner.overrides.get(MODEL_TYPE):
        content["overrides"] = owner.overrides[MODEL_TYPE]
    digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:MODEL_DIGEST_LEN]
    return f"{base[: SAGEMAKER_NAME_MAX - MODEL_DIGEST_LEN - 1]}-{digest}"


def variant_resource_id(endpoint: str, variant: str = VARIANT_NAME) -> str:
    """Application Auto Scaling resource id of an endpoint variant."""
    return f"{variants_resource_prefix(endpoint)}{variant}"


def variants_resource_prefix(endpoint: str) -> str:
    """What the resource id of every variant of an endpoint begins with (a name holds no `/`): an adopted endpoint's
    variant is its live one (`adopted.variant`), not necessarily `VARIANT_NAME`."""
    return f"endpoint/{endpoint}/variant/"


def component_resource_id(component: str) -> str:
    """Application Auto Scaling resource id of an inference component."""
    return f"inference-component/{component}"


def scalable_target_import_id(resource_id: str, dimension: str, namespace: str = "sagemaker") -> str:
    """How hashicorp/aws imports a scalable target: `<service namespace>/<resource id>/<scalable dimension>`."""
    return f"{namespace}/{resource_id}/{dimension}"


def scaling_policy_import_id(resource_id: str, dimension: str, policy: str, namespace: str = "sagemaker") -> str:
    """How hashicorp/aws imports a scaling policy: the target's import id, then `/<policy name>`."""
    return f"{scalable_target_import_id(resource_id, dimension, namespace)}/{policy}"


@dataclass(frozen=True)
class ComponentNames:
    spec: InferenceComponentSpec
    name: str
    resource_id: str
    target_tracking_policy: str
    scale_from_zero_policy: str | None
    scale_from_zero_alarm: str | None
    stuck_at_zero_alarm: str | None
    model: str = ""  # the SageMaker model the component runs (its container and model data)
    #: kind -> name of the component's own health alarms that roll its updates back (`5xx-errors`, `model-latency`)
    alarms: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EndpointNames:
    spec: EndpointSpec
    endpoint: str
    endpoint_config_prefix: str
    variant: str
    #: The adopted live endpoint configuration's name, kept instead of a fresh name from the prefix.
    endpoint_config: str | None
    model: str | None  # single-model endpoints; each component names its own model
    execution_role: str | None  # None when the user brings their own role
    resource_id: str  # variant scalable target
    target_tracking_policy: str | None  # single-model endpoints scale instances
    alarms: dict[str, str] = field(default_factory=dict)  # kind -> alarm name (operational alarms)
    components: list[ComponentNames] = field(default_factory=list)
    #: Models that fallback pools run instead of the endpoint's or a component's own (see `pool_model_names`).
    pool_models: list[str] = field(default_factory=list)

    @property
    def all_alarm_names(self) -> list[str]:
        names = list(self.alarms.values())
        for c in self.components:
            names += [*c.alarms.values(), *(n for n in (c.scale_from_zero_alarm, c.stuck_at_zero_alarm) if n)]
        return names


def adopted_resources(config: FastscaleConfig) -> set[tuple[str, str]]:
    """(inventory kind, lower-case name) of every live resource the config adopts (`adopted` blocks): made
    outside fastscale and so not tagged as the stack's until the first deploy imports and tags them (endpoint,
    endpoint configuration, models, inference components, scalable targets). Scalable
    targets are named by their resource id; the scaling policies on an adopted target go with it."""
    out: set[tuple[str, str]] = set()
    for ep in config.endpoints:
        adopted = ep.adopted
        if adopted is None:
            continue
        names = endpoint_names(config, ep)
        out.add(("endpoint", names.endpoint.lower()))
        if names.endpoint_config:
            out.add(("endpoint-config", names.endpoint_config.lower()))
        workloads: list[tuple[Adopted | None, str]] = [(adopted, names.resource_id)]
        workloads += [(c.spec.adopted, c.resource_id) for c in names.components]
        for block, resource_id in workloads:
            if block is None:
                continue
            if block.model:
                out.add(("model", block.model.lower()))
            if block.scalable_target:
                out.add(("scalable-target", resource_id.lower()))
        out |= {("inference-component", c.name.lower()) for c in names.components if c.spec.adopted is not None}
    return out


OPERATIONAL_ALARMS = ("model-latency", "5xx-errors", "gpu-memory")


def operational_alarms(ep: EndpointSpec) -> tuple[str, ...]:
    """The operational alarm kinds of an endpoint: no GPU-memory alarm on Neuron (Inferentia / Trainium)
    instances, which publish no GPU metrics (it could never fire, and would still be billed). With
    `alarms.enabled` false, only the ones automatic rollback of a single-model endpoint watches."""
    if not ep.alarms.enabled:
        return tuple(k for k in OPERATIONAL_ALARMS if k in rollback_only_endpoint_kinds(ep))
    return tuple(k for k in OPERATIONAL_ALARMS if k != "gpu-memory" or catalog.publishes_gpu_metrics(ep.instance_type))


def endpoint_names(config: FastscaleConfig, ep: EndpointSpec) -> EndpointNames:
    project = config.project
    ep_name = endpoint_name_of(project, ep)
    adopted = ep.adopted
    role = None if ep.execution_role_arn else execution_role_name(ep_name, config.region)
    components = []
    for c in ep.inference_components:
        ic = component_name_of(project, c)
        zero = c.copies.min == 0 and c.autoscaling.enabled
        components.append(
            ComponentNames(
                spec=c,
                name=ic,
                resource_id=component_resource_id(ic),
                target_tracking_policy=(c.adopted and c.adopted.scaling_policy) or f"{ic}-target-tracking",
                scale_from_zero_policy=f"{ic}-scale-from-zero" if zero else None,
                scale_from_zero_alarm=f"{ic}-no-capacity" if zero else None,
                stuck_at_zero_alarm=f"{ic}-stuck-at-zero" if (zero and ep.alarms.enabled) else None,
                model=(c.adopted and c.adopted.model) or model_name(ic, ep, c, role),
                alarms={kind: f"{ic}-{kind}" for kind in component_alarm_kinds(ep, c)},
            )
        )
    return EndpointNames(
        spec=ep,
        endpoint=ep_name,
        # `<project>-<name>-` even for an adopted endpoint, whose live name may leave no room for the suffix.
        endpoint_config_prefix=f"{endpoint_name(project, ep.name)}-",
        variant=adopted.variant if adopted else VARIANT_NAME,
        endpoint_config=adopted.endpoint_config if adopted else None,
        model=((adopted and adopted.model) or model_name(ep_name, ep, ep.model, role)) if ep.model is not None else None,
        execution_role=role,
        resource_id=variant_resource_id(ep_name, adopted.variant if adopted else VARIANT_NAME),
        target_tracking_policy=((adopted and adopted.scaling_policy) or f"{ep_name}-target-tracking")
        if ep.model is not None and ep.model.autoscaling.enabled
        else None,
        alarms={kind: f"{ep_name}-{kind}" for kind in operational_alarms(ep)},
        components=components,
        pool_models=pool_model_names(ep_name, ep, components, role),
    )


def pool_model_names(ep_name: str, ep: EndpointSpec, components: list[ComponentNames], execution_role: str | None) -> list[str]:
    """The extra SageMaker models of an endpoint's fallback pools: one per pool whose override changes what
    makes a model (image, model data, environment), named as the model it replaces on that pool."""
    out: list[str] = []
    for pool in capacity.pools(ep)[1:]:
        if ep.model is not None:
            own = model_name(ep_name, ep, ep.model, execution_role)
            names = [model_name(ep_name, ep, capacity.model_on(pool, ep.model), execution_role)]
        else:
            own = None
            names = [
                n
                for c in components
                if (n := model_name(c.name, ep, capacity.component_on(pool, c.spec), execution_role)) != c.model
            ]
        out += [n for n in names if n != own and n not in out]
    return out


def all_endpoint_names(config: FastscaleConfig) -> list[EndpointNames]:
    return [endpoint_names(config, ep) for ep in config.endpoints]


def dashboard_name(config: FastscaleConfig) -> str:
    return f"{config.project}-fastscale"


def dashboard_marker(config: FastscaleConfig) -> str:
    """The line the stack writes into its dashboard: a dashboard carries no tags (the Terraform resource
    has none), so this is what proves, at teardown, which stack and region a dashboard belongs to."""
    return f"Managed by fastscale: {TAG_STACK}={stack_name(config)}, {TAG_REGION}={config.region}."


_MARKER_RE = re.compile(re.escape(TAG_STACK) + r"=([A-Za-z0-9-]+), " + re.escape(TAG_REGION) + r"=([a-z0-9-]+)\.")


def dashboard_owner(body: str) -> tuple[str, str] | None:
    """(stack, region) named by the marker in a dashboard body, or None when it carries none."""
    try:
        widgets = json.loads(body).get("widgets", [])
    except (ValueError, AttributeError):
        return None
    for widget in widgets if isinstance(widgets, list) else []:
        markdown = (widget.get("properties") or {}).get("markdown") if isinstance(widget, dict) else None
        match = _MARKER_RE.search(markdown) if isinstance(markdown, str) else None
        if match:
            return match.group(1), match.group(2)
    return None


def tags(config: FastscaleConfig, endpoint: EndpointSpec | None = None, *, global_resource: bool = False) -> dict[str, str]:
    """User tags plus fastscale's own; fastscale's keys win so cleanup can always find what it made.

    ``global_resource`` (IAM roles): also the region, since a stack of the same name in another region
    would otherwise look like the owner. Regional resources are found only in their own region, and adding
    the tag to them would rename (and so replace) content-named ones such as endpoint configurations.
    """
    out = dict(config.tags)
    out[TAG_STACK] = stack_name(config)
    if global_resource:
        out[TAG_REGION] = config.region
    else:
        out.pop(TAG_REGION, None)
    out[TAG_MANAGED_BY] = MANAGED_BY_VALUE
    if endpoint is not None:
        out[TAG_ENDPOINT] = endpoint_name_of(config.project, endpoint)
    return dict(sorted(out.items()))


def with_live_tags(stack_tags: dict[str, str], live: Mapping[str, str]) -> dict[str, str]:
    """An adopted resource's tags: its live tags kept (`adopted.tags`), under the stack's, which win on a key."""
    return dict(sorted({**live, **stack_tags}.items()))
