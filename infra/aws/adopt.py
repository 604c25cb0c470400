"""`fastscale adopt`: read a live SageMaker endpoint and write the fastscale config that reproduces it.

Two steps, so the second is tested without AWS:

1. :func:`read_live` describes the endpoint, its configuration, its models, its inference components, their
   scalable targets and scaling policies, and the alarms of those policies (boto3, read-only calls).
2. :func:`build_config` turns that snapshot into config data (a mapping, ready for YAML) whose `adopted`
   blocks keep the live names and make the stack import the live resources, and a list of :class:`Note`
   saying what the first deploy will change (in place) or add, and what stays as AWS set it.

What the config cannot express without replacing the endpoint or its configuration (several variants,
shadow variants, data capture, asynchronous or serverless inference, an explainer, network isolation,
several containers, inline component containers, adapters ...) is refused as a whole
(:class:`AdoptRefused`, one reason per item): a config written anyway would have its first deploy replace
the live endpoint, which is the opposite of adopting it.

Adopting never takes another team's resources. A resource whose `fastscale:stack` tag names another stack
is refused (:class:`OwnedByAnotherStack`) unless the command line hands it over by naming that stack
(``take_over``). An endpoint configuration or model that something else still uses (another endpoint, one of
its components, another endpoint configuration: :mod:`infra.aws.references`) is not adopted: this stack's
destroy, or its next change of the model, would delete it under its other users; the stack creates its own
and the first deploy moves the endpoint (or component) to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from fastscale.infra.aws.clients import ClientsArg, chunks, paginate, resolve, translate_errors
from fastscale.infra.aws.references import InUse, in_use
from fastscale.infra.base.aws_facts import (
    COMPONENT_HIGH_RESOLUTION,
    COMPONENT_INVOCATIONS,
    RESERVED_TAG_PREFIX,
    SERVICE_NAMESPACE,
    TARGET_TRACKING,
    VARIANT_HIGH_RESOLUTION,
    VARIANT_INVOCATIONS,
)
from fastscale.infra.config import EndpointSpec
from fastscale.infra.model.naming import (
    TAG_ENDPOINT,
    TAG_MANAGED_BY,
    TAG_REGION,
    TAG_STACK,
    VARIANT_NAME,
    component_resource_id,
    variant_resource_id,
)

#: Predefined target-tracking metric types -> the config's `autoscaling.metric`.
METRICS = {
    VARIANT_HIGH_RESOLUTION: "high_resolution",
    VARIANT_INVOCATIONS: "invocations",
    COMPONENT_HIGH_RESOLUTION: "high_resolution",
    COMPONENT_INVOCATIONS: "invocations",
}
ROUTING = {"LEAST_OUTSTANDING_REQUESTS": "least_outstanding_requests", "RANDOM": "random",
           "PREFIX_AWARE": "prefix_aware", "KV_AWARE": "kv_aware"}
#: A variant's RoutingConfig keys the config reproduces.
_ROUTING_KEYS = {"RoutingStrategy", "PrefixAwareRoutingConfig"}
#: Application Auto Scaling's cooldowns when a target-tracking policy sets none (the config writes them).
AAS_DEFAULT_COOLDOWN = 300
#: Keys of a live variant the config reproduces; any other key set is refused (see `_variant_refusals`).
_VARIANT_KEYS = {
    "VariantName", "ModelName", "InitialInstanceCount", "InstanceType", "InitialVariantWeight",
    "VolumeSizeInGB", "ModelDataDownloadTimeoutInSeconds", "ContainerStartupHealthCheckTimeoutInSeconds",
    "ManagedInstanceScaling", "RoutingConfig", "InferenceAmiVersion",
}
#: Keys of a live endpoint configuration the config reproduces.
_CONFIG_KEYS = {
    "EndpointConfigName", "EndpointConfigArn", "ProductionVariants", "KmsKeyId", "CreationTime",
    "ExecutionRoleArn", "EnableNetworkIsolation", "ResponseMetadata",
}


class AdoptRefused(Exception):
    """The live endpoint has settings the config cannot reproduce without replacing it: one reason each."""

    def __init__(self, endpoint: str, reasons: list[str]):
        self.endpoint = endpoint
        self.reasons = reasons
        super().__init__(f"{endpoint}: " + "; ".join(reasons))


@dataclass(frozen=True)
class Owned:
    """A live resource tagged for another fastscale stack."""

    kind: str  # endpoint | endpoint configuration | model | inference component | scalable target
    name: str
    stack: str

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "name": self.name, "stack": self.stack}


class OwnedByAnotherStack(Exception):
    """Resources of the endpoint belong to other fastscale stacks (their `fastscale:stack` tag), and the
    command line does not hand them over (``take_over``)."""

    def __init__(self, endpoint: str, owned: list[Owned]):
        self.endpoint = endpoint
        self.owned = owned
        super().__init__(f"{endpoint}: " + "; ".join(f"{o.kind} {o.name} belongs to stack {o.stack}" for o in owned))

    @property
    def stacks(self) -> list[str]:
        return list(dict.fromkeys(o.stack for o in self.owned))


@dataclass(frozen=True)
class Note:
    """One thing the adopted config does not leave exactly as it is live, or leaves as AWS set it.

    `effect`: `kept` (an AWS default the config keeps), `in-place` (the first deploy changes it in
    place), `create` (the first deploy adds it), `not-managed` (stays live, outside the stack)."""

    path: str
    message: str
    effect: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "effect": self.effect, "message": self.message}


@dataclass
class Live:
    """What `read_live` found (the describe responses, as boto3 returns them)."""

    endpoint: dict[str, Any]
    config: dict[str, Any]
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    components: list[dict[str, Any]] = field(default_factory=list)
    #: resource id -> scalable target
    targets: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: resource id -> scaling policies
    policies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: alarm name -> alarm
    alarms: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: ARN -> tags, of the endpoint, its configuration, models, components and scalable targets
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    #: what else uses the configuration and the models: every endpoint, component and configuration of the
    #: region except this endpoint and its components
    uses: InUse = field(default_factory=InUse)


@dataclass
class Adoption:
    data: dict[str, Any]
    notes: list[Note]


# --------------------------------------------------------------------------------------------- read


@translate_errors
def read_live(endpoint: str, region: str, *, clients: ClientsArg = None) -> Live:
    """Describe `endpoint` and everything fastscale would manage of it. Raises `AwsError` (one line) when AWS
    refuses a call, e.g. "Could not find endpoint" for an unknown name."""
    aws = resolve(clients, region)
    sm, aas, cw = aws.sagemaker, aws.autoscaling, aws.cloudwatch
    ep = sm.describe_endpoint(EndpointName=endpoint)
    cfg = sm.describe_endpoint_config(EndpointConfigName=ep["EndpointConfigName"])
    live = Live(endpoint=ep, config=cfg)
    model_names = [v["ModelName"] for v in cfg.get("ProductionVariants", []) if v.get("ModelName")]
    # Components live only on a variant without a model (SageMaker refuses them on one with a model).
    with_components = any(not v.get("ModelName") for v in cfg.get("ProductionVariants", []))
    summaries = (list(paginate(sm, "list_inference_components", "InferenceComponents", EndpointNameEquals=endpoint))
                 if with_components else [])
    for summary in summaries:
        desc = sm.describe_inference_component(InferenceComponentName=summary["InferenceComponentName"])
        live.components.append(desc)
        if desc.get("Specification", {}).get("ModelName"):
            model_names.append(desc["Specification"]["ModelName"])
    for name in dict.fromkeys(model_names):
        live.models[name] = sm.describe_model(ModelName=name)

    resource_ids = [variant_resource_id(endpoint, v["VariantName"]) for v in cfg.get("ProductionVariants", [])]
    resource_ids += [component_resource_id(c["InferenceComponentName"]) for c in live.components]
    if resource_ids:
        for target in paginate(aas, "describe_scalable_targets", "ScalableTargets",
                               ServiceNamespace=SERVICE_NAMESPACE, ResourceIds=resource_ids):
            live.targets[target["ResourceId"]] = target
    for rid in live.targets:
        live.policies[rid] = list(paginate(aas, "describe_scaling_policies", "ScalingPolicies",
                                           ServiceNamespace=SERVICE_NAMESPACE, ResourceId=rid))
    alarm_names = [a["AlarmName"] for ps in live.policies.values() for p in ps for a in p.get("Alarms", [])]
    for start in range(0, len(alarm_names), 100):  # DescribeAlarms takes at most 100 names
        for alarm in paginate(cw, "describe_alarms", "MetricAlarms", AlarmNames=alarm_names[start:start + 100]):
            live.alarms[alarm["AlarmName"]] = alarm

    # Who owns them: SageMaker's own tags, and the scalable targets' through the tagging index.
    arns = [ep["EndpointArn"], cfg["EndpointConfigArn"], *(m["ModelArn"] for m in live.models.values()),
            *(c["InferenceComponentArn"] for c in live.components)]
    for arn in arns:
        live.tags[arn] = {t["Key"]: t["Value"] for t in paginate(sm, "list_tags", "Tags", ResourceArn=arn)}
    target_arns = [t["ScalableTargetARN"] for t in live.targets.values() if t.get("ScalableTargetARN")]
    for batch in chunks(target_arns, 100):  # GetResources takes at most 100 ARNs
        for item in paginate(aws.tagging, "get_resources", "ResourceTagMappingList", ResourceARNList=batch):
            live.tags[item["ResourceARN"]] = {t["Key"]: t["Value"] for t in item.get("Tags", [])}
    # What else uses them: everything in the region but this endpoint and its components.
    components = {c["InferenceComponentName"] for c in live.components}
    live.uses = in_use(aws, configurations=True, skip=lambda kind, name, arn: (
        (kind == "endpoint" and name == endpoint) or (kind == "inference-component" and name in components)))
    return live


# --------------------------------------------------------------------------------------------- build


def default_project(endpoint: str) -> str:
    """A project name from the endpoint's: short enough for the names fastscale derives from it (rule FS016)."""
    return re.sub(r"-+\Z", "", endpoint[:20]) or "adopted"


def build_config(live: Live, region: str, project: str, take_over: tuple[str, ...] = ()) -> Adoption:
    """The config data reproducing `live`, and the notes on what differs. Raises `OwnedByAnotherStack` when
    something of it is tagged for another stack that ``take_over`` does not name, then `AdoptRefused`."""
    ep, cfg = live.endpoint, live.config
    name = ep["EndpointName"]
    notes: list[Note] = []
    _check_owners(live, project, take_over, notes)
    refusals = _refusals(live)
    if refusals:
        raise AdoptRefused(name, refusals)
    variant = cfg["ProductionVariants"][0]
    path = "endpoints[0]"
    shared = _Shared(live, notes, path)
    adopted: dict[str, Any] = {"endpoint": name}
    if not shared.config(variant.get("ModelName")):
        adopted["endpoint_config"] = cfg["EndpointConfigName"]
    if variant["VariantName"] != VARIANT_NAME:
        adopted["variant"] = variant["VariantName"]
    spec: dict[str, Any] = {"name": "main", "instance_type": variant["InstanceType"]}

    routing_config = variant.get("RoutingConfig") or {}
    strategy = routing_config.get("RoutingStrategy")
    spec["routing"] = ROUTING[strategy] if strategy else None
    prefix = routing_config.get("PrefixAwareRoutingConfig")
    if prefix:
        spec["prefix_routing"] = {"prefix_length": prefix.get("PrefixLength"),
                                  "concurrency_threshold": prefix.get("ConcurrencyThreshold")}
    if variant.get("InferenceAmiVersion"):
        spec["inference_ami_version"] = variant["InferenceAmiVersion"]
    if strategy is None:
        notes.append(Note(f"{path}.routing", "no RoutingConfig on the live variant: kept unset (SageMaker's default, "
                          "RANDOM); `least_outstanding_requests` would need a new endpoint configuration", "kept"))
    if cfg.get("KmsKeyId"):
        spec["kms_key_arn"] = cfg["KmsKeyId"]
    for key, src in (("volume_size_gb", "VolumeSizeInGB"), ("model_download_timeout", "ModelDataDownloadTimeoutInSeconds"),
                     ("startup_health_check_timeout", "ContainerStartupHealthCheckTimeoutInSeconds")):
        if variant.get(src) is not None:
            spec[key] = variant[src]
    # Adding automatic rollback adds the endpoint's AutoRollbackConfiguration, which hashicorp/aws can only
    # do by replacing the endpoint (ForceNew).
    spec["deployment"] = {"auto_rollback": False}
    notes.append(Note(f"{path}.deployment.auto_rollback", "off, as on the live endpoint: turning it on replaces the "
                      "endpoint (hashicorp/aws cannot add AutoRollbackConfiguration in place)", "kept"))
    if ep.get("DeploymentConfig"):
        notes.append(Note(f"{path}.deployment", "the live endpoint's DeploymentConfig (update policy) is replaced in "
                          "place by fastscale's blue/green policy", "in-place"))

    rid = variant_resource_id(name, variant["VariantName"])
    if variant.get("ModelName"):
        model = live.models[variant["ModelName"]]
        spec["execution_role_arn"] = model["ExecutionRoleArn"]
        if model.get("VpcConfig"):
            spec["vpc"] = {"subnets": model["VpcConfig"]["Subnets"], "security_groups": model["VpcConfig"]["SecurityGroupIds"]}
        workload, url = _workload(model)
        if "endpoint_config" in adopted:  # else the model is shared: the stack makes its own
            adopted["model"] = variant["ModelName"]
            if url:
                adopted["model_data_url"] = True
        count = variant["InitialInstanceCount"]
        workload["autoscaling"], bounds = _autoscaling(live, rid, f"{path}.model.autoscaling", adopted, notes)
        spec["instances"] = {"initial": count, "min": bounds[0] if bounds else count, "max": bounds[1] if bounds else count}
        spec["model"] = workload
    else:
        spec["execution_role_arn"] = cfg["ExecutionRoleArn"]
        scaling = variant["ManagedInstanceScaling"]
        spec["instances"] = {"initial": variant["InitialInstanceCount"], "min": scaling["MinInstanceCount"],
                             "max": scaling["MaxInstanceCount"]}
        if rid in live.targets:
            notes.append(Note(f"{path}.instances", f"the variant's scalable target ({rid}) is not managed: managed "
                              "instance scaling follows the components' copies; deregister it after the first deploy",
                              "not-managed"))
        spec["inference_components"] = [
            _component(live, c, f"{path}.inference_components[{i}]", notes, shared) for i, c in enumerate(live.components)
        ]
    kept = _kept_tags(live, {"endpoint": ep.get("EndpointArn"),  # of what is adopted: the rest stays outside the stack
                             "endpoint_config": cfg.get("EndpointConfigArn") if "endpoint_config" in adopted else None,
                             "model": live.models.get(adopted.get("model") or "", {}).get("ModelArn")},
                      f"{path}.adopted.tags", notes)
    if kept:
        adopted["tags"] = kept
    spec["adopted"] = adopted
    _awscc_configuration(spec, path, notes)
    notes.append(Note(path, "fastscale's tags (fastscale:stack, fastscale:endpoint, managed-by) are added to every "
                      "adopted resource; the live tags are kept (`adopted.tags`)", "in-place"))
    notes.append(Note(f"{path}.alarms", "fastscale's operational alarms and the stack's dashboard are created", "create"))
    data = {"project": project, "region": region, "endpoints": [spec]}
    return Adoption(data=data, notes=notes)


def _awscc_configuration(spec: dict[str, Any], path: str, notes: list[Note]) -> None:
    """A live configuration the config can only express as awscc's (prefix- or KV-aware routing, an AMI or
    instance type hashicorp/aws's validation does not know) is not kept: awscc imports a configuration by ARN
    and every attribute of it is create-only (rule FS112). The first deploy creates a new one instead."""
    try:
        reasons = EndpointSpec.model_validate(spec).awscc_config_reasons
    except ValueError:
        return  # what does not validate is reported when the written config is validated
    live = spec["adopted"].pop("endpoint_config", None) if reasons else None
    if live is None:
        return  # nothing to say, or not kept already (something else uses it)
    settings = ", ".join(setting for setting, _ in reasons)
    notes.append(Note(f"{path}.adopted", f"the live endpoint configuration {live} is not kept: {settings} make the "
                      "configuration awscc's, which cannot import it by name (FS112); the first deploy creates a new "
                      "configuration and the endpoint switches to it (an update, not a replacement)", "create"))


def _workload(model: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """(image, model data and environment of a model's container, whether its data is a ModelDataUrl)."""
    container = model["PrimaryContainer"]
    out: dict[str, Any] = {"image": container["Image"]}
    url = bool(container.get("ModelDataUrl"))
    data = container.get("ModelDataUrl") or ((container.get("ModelDataSource") or {}).get("S3DataSource") or {}).get("S3Uri")
    if data:
        out["model_data"] = data
    if container.get("Environment"):
        out["environment"] = dict(container["Environment"])
    return out, url


def _autoscaling(
    live: Live, rid: str, path: str, adopted: dict[str, Any], notes: list[Note]
) -> tuple[dict[str, Any], tuple[int, int] | None]:
    """The `autoscaling` of a workload from its live scalable target and target-tracking policy, and the
    target's (min, max)."""
    target = live.targets.get(rid)
    if target is None:
        return {"enabled": False}, None
    adopted["scalable_target"] = True
    out: dict[str, Any] = {"enabled": True}
    policies = live.policies.get(rid, [])
    tracking = [p for p in policies if p.get("PolicyType") == TARGET_TRACKING]
    chosen = next((p for p in tracking if (p["TargetTrackingScalingPolicyConfiguration"].get(
        "PredefinedMetricSpecification") or {}).get("PredefinedMetricType") in METRICS), None)
    if chosen is not None:
        conf = chosen["TargetTrackingScalingPolicyConfiguration"]
        adopted["scaling_policy"] = chosen["PolicyName"]
        out["metric"] = METRICS[conf["PredefinedMetricSpecification"]["PredefinedMetricType"]]
        out.update(_tracking_target(out["metric"], conf["TargetValue"], path, notes))
        out["scale_in_cooldown"] = conf.get("ScaleInCooldown", AAS_DEFAULT_COOLDOWN)
        out["scale_out_cooldown"] = conf.get("ScaleOutCooldown", AAS_DEFAULT_COOLDOWN)
        if conf.get("DisableScaleIn"):
            notes.append(Note(f"{path}", f"policy {chosen['PolicyName']} disables scale-in: the first deploy turns "
                              "scale-in on (in place)", "in-place"))
    else:
        notes.append(Note(f"{path}", "no target-tracking policy on a predefined SageMaker metric: the first deploy "
                          "creates fastscale's (high-resolution concurrency)", "create"))
    for p in policies:
        if p is not chosen:
            alarms = ", ".join(a["AlarmName"] for a in p.get("Alarms", [])) or "none"
            notes.append(Note(f"{path}", f"policy {p['PolicyName']} ({p.get('PolicyType')}, alarms: {alarms}) is not "
                              "managed by the stack and stays as it is: delete it if fastscale's policies replace it",
                              "not-managed"))
    return out, (target["MinCapacity"], target["MaxCapacity"])


def _tracking_target(metric: str, value: float, path: str, notes: list[Note]) -> dict[str, Any]:
    """The config keys of a live policy's TargetValue, in its metric's unit: an invocations policy's target
    counts requests per minute per instance or copy, not concurrent requests."""
    if metric != "invocations":
        return {"target_concurrency": value}
    notes.append(Note(f"{path}.target_invocations", f"the live policy tracks invocations per minute (target {value:g}): "
                      "kept as it is; FS025 says why the 10-second concurrency metric reacts sooner", "kept"))
    return {"target_invocations": value}


def _component(live: Live, ic: dict[str, Any], path: str, notes: list[Note], shared: _Shared) -> dict[str, Any]:
    name = ic["InferenceComponentName"]
    spec = ic["Specification"]
    model = live.models[spec["ModelName"]]
    workload, url = _workload(model)
    adopted: dict[str, Any] = {"name": name, "arn": ic["InferenceComponentArn"]}
    if not shared.component_model(spec["ModelName"], path, name):
        adopted["model"] = spec["ModelName"]
        if url:
            adopted["model_data_url"] = True
    req = spec["ComputeResourceRequirements"]
    resources: dict[str, Any] = {"memory_mb": req["MinMemoryRequiredInMb"]}
    for key, src in (("accelerators", "NumberOfAcceleratorDevicesRequired"), ("max_memory_mb", "MaxMemoryRequiredInMb"),
                     ("cpus", "NumberOfCpuCoresRequired")):
        if req.get(src) is not None:
            resources[key] = int(req[src]) if float(req[src]).is_integer() else req[src]
    out: dict[str, Any] = {"name": name, **workload, "resources": resources}
    startup = spec.get("StartupParameters") or {}
    if startup.get("ModelDataDownloadTimeoutInSeconds") is not None:
        out["model_download_timeout"] = startup["ModelDataDownloadTimeoutInSeconds"]
    if startup.get("ContainerStartupHealthCheckTimeoutInSeconds") is not None:
        out["startup_health_check_timeout"] = startup["ContainerStartupHealthCheckTimeoutInSeconds"]
    cache = spec.get("DataCacheConfig")
    out["data_cache"] = cache["EnableCaching"] if cache else None
    if not cache:
        notes.append(Note(f"{path}.data_cache", "no DataCacheConfig on the live component: kept unset (set `true` to "
                          "cache image and model on each instance; that update rolls the component's copies)", "kept"))
    copies = (ic.get("RuntimeConfig") or {}).get("DesiredCopyCount", 1)
    out["autoscaling"], bounds = _autoscaling(live, component_resource_id(name), f"{path}.autoscaling", adopted, notes)
    out["copies"] = {"initial": max(copies, 1), "min": bounds[0] if bounds else copies, "max": bounds[1] if bounds else copies}
    if bounds and bounds[0] == 0:
        notes.append(Note(f"{path}.copies.min", "scale to zero: fastscale creates its own scale-from-zero step policy "
                          "and NoCapacityInvocationFailures alarm; delete any live pair after the first deploy",
                          "create"))
    kept = _kept_tags(live, {"component": ic.get("InferenceComponentArn"),
                             "model": model.get("ModelArn") if "model" in adopted else None},
                      f"{path}.adopted.tags", notes)
    if kept:
        adopted["tags"] = kept
    out["adopted"] = adopted
    return out


#: Tag keys fastscale writes itself on every resource of its stacks: rewritten, not kept.
_OWN_TAG_KEYS = frozenset({TAG_STACK, TAG_ENDPOINT, TAG_MANAGED_BY, TAG_REGION})


def _kept_tags(live: Live, arns: dict[str, str | None], path: str, notes: list[Note]) -> dict[str, dict[str, str]]:
    """`adopted.tags`: per kind of resource (key of ``arns``), the live tags the stack keeps on it, so that the
    first deploy removes none. AWS's reserved `aws:` keys cannot be set (nor removed) by anyone: left out,
    and AWS keeps them. fastscale's own keys are rewritten with this stack's values."""
    out: dict[str, dict[str, str]] = {}
    for kind, arn in arns.items():
        tags = live.tags.get(arn or "", {})
        reserved = sorted(k for k in tags if k.lower().startswith(RESERVED_TAG_PREFIX))
        own = sorted(k for k in tags if k in _OWN_TAG_KEYS)
        kept = {k: v for k, v in sorted(tags.items()) if k not in reserved and k not in own}
        if kept:
            out[kind] = kept
        if reserved:
            notes.append(Note(f"{path}.{kind}", f"{', '.join(reserved)}: reserved for AWS (the '{RESERVED_TAG_PREFIX}' "
                              "prefix), so not written into the config; AWS keeps them on the live resource", "kept"))
        if own:
            notes.append(Note(f"{path}.{kind}", f"{', '.join(own)}: fastscale's own tag keys, rewritten with this "
                              "stack's values", "in-place"))
    return out
def _check_owners(live: Live, project: str, take_over: tuple[str, ...], notes: list[Note]) -> None:
    """Refuse what another stack's tags claim, unless ``take_over`` names that stack (then say what follows)."""
    found = [("endpoint", live.endpoint["EndpointName"], live.endpoint["EndpointArn"]),
             ("endpoint configuration", live.config["EndpointConfigName"], live.config["EndpointConfigArn"])]
    found += [("model", n, m["ModelArn"]) for n, m in live.models.items()]
    found += [("inference component", c["InferenceComponentName"], c["InferenceComponentArn"]) for c in live.components]
    found += [("scalable target", rid, t.get("ScalableTargetARN", "")) for rid, t in live.targets.items()]
    owned = [Owned(kind, name, stack) for kind, name, arn in found
             if (stack := live.tags.get(arn, {}).get(TAG_STACK)) is not None and stack != project]
    refused = [o for o in owned if o.stack not in take_over]
    if refused:
        raise OwnedByAnotherStack(live.endpoint["EndpointName"], refused)
    for o in owned:
        notes.append(Note("endpoints[0].adopted", f"{o.kind} {o.name} is tagged {TAG_STACK}={o.stack}: handed over with "
                          f"--take-over-from {o.stack}; the first deploy re-tags it for this stack (`plan` shows the "
                          f"ownership change) and needs --take-over-from {o.stack} too", "in-place"))


class _Shared:
    """Decides which live configuration and models are adopted: not those that something other than this
    endpoint and its components uses (another endpoint, its components, another configuration)."""

    def __init__(self, live: Live, notes: list[Note], path: str):
        self.live = live
        self.notes = notes
        self.path = path
        self.config_adopted = False

    def _users(self, kind: str, name: str) -> list[str] | None:
        """Who else uses it (described for people), or None when nobody does."""
        uses = self.live.uses
        if uses.unknown:
            return [f"(cannot tell: {uses.unknown})"]
        mine = ("endpoint-config", self.live.config["EndpointConfigName"]) if self.config_adopted else None
        users = [u for u in uses.of(kind, name) if u != mine]
        return [f"{k.replace('-', ' ').replace('config', 'configuration')} {n}" for k, n in users] or None

    def config(self, model: str | None) -> bool:
        """Whether the endpoint configuration is shared (and so not adopted); ``model``: its variant's model,
        which must be adopted with it (a configuration names its model)."""
        name = self.live.config["EndpointConfigName"]
        users = self._users("endpoint-config", name)
        if users is None:
            self.config_adopted = True
            model_users = self._users("model", model) if model else None
            self.config_adopted = model_users is None
            if model_users is None:
                return False
            self._note("endpoint_config", f"model {model} is also used by {', '.join(model_users)}: neither it nor "
                       f"endpoint configuration {name}, which names it, is adopted, so no destroy or model change of "
                       "this stack can delete them; the stack creates its own model and configuration (same settings) "
                       "and the first deploy moves the endpoint to them (blue/green)")
        else:
            self._note("endpoint_config", f"endpoint configuration {name} is also used by {', '.join(users)}: it is not "
                       "adopted (nor its model), so no destroy of this stack can delete it; the stack creates its own "
                       "configuration and model (same settings) and the first deploy moves the endpoint to them (blue/green)")
        self.notes.append(Note(f"{self.path}.adopted", f"endpoint configuration {name} and what it names stay live "
                               "outside the stack once the endpoint has moved off it", "not-managed"))
        return True

    def component_model(self, model: str, path: str, component: str) -> bool:
        """Whether a component's model is shared (and so not adopted)."""
        users = self._users("model", model)
        if users is None:
            return False
        self.notes.append(Note(f"{path}.adopted", f"model {model} is also used by {', '.join(users)}: not adopted, so no "
                               "destroy or model change of this stack can delete it; the stack creates its own model (same "
                               f"image, data and role) and the first deploy rolls component {component} onto it", "create"))
        return True

    def _note(self, key: str, message: str) -> None:
        self.notes.append(Note(f"{self.path}.adopted.{key}", message, "create"))


def _refusals(live: Live) -> list[str]:
    """Every setting of the live endpoint the config cannot reproduce without replacing what it adopts."""
    cfg, out = live.config, []
    variants = cfg.get("ProductionVariants", [])
    if len(variants) != 1:
        out.append(f"{len(variants)} production variants: a fastscale endpoint has exactly one")
    for key in sorted(set(cfg) - _CONFIG_KEYS):
        if cfg[key]:
            out.append(f"the endpoint configuration sets {key}, which fastscale does not model")
    if cfg.get("EnableNetworkIsolation"):
        out.append("the endpoint configuration enables network isolation, which fastscale does not model")
    for v in variants[:1]:
        for key in sorted(set(v) - _VARIANT_KEYS):
            if v[key]:
                out.append(f"variant {v['VariantName']} sets {key}, which fastscale does not model")
        if v.get("InitialVariantWeight", 1.0) != 1.0:
            out.append(f"variant {v['VariantName']} has weight {v['InitialVariantWeight']}: fastscale sends none (1.0)")
        if not v.get("InstanceType"):
            out.append(f"variant {v['VariantName']} has no instance type (serverless): fastscale needs one")
        if v.get("ModelName") and live.components:
            out.append("the variant has a model and inference components")
        routing = v.get("RoutingConfig") or {}
        if routing.get("RoutingStrategy") is not None and routing["RoutingStrategy"] not in ROUTING:
            out.append(f"variant {v['VariantName']} routes with {routing['RoutingStrategy']}: fastscale routes with "
                       f"{' or '.join(sorted(ROUTING))} (or SageMaker's default)")
        elif set(routing) - _ROUTING_KEYS:
            out.append(f"variant {v['VariantName']} sets {', '.join(sorted(set(routing) - _ROUTING_KEYS))} in its "
                       "RoutingConfig, which fastscale does not model")
        if v.get("ModelName") and (v.get("ManagedInstanceScaling") or {}).get("Status") == "ENABLED":
            out.append(f"variant {v['VariantName']} has a model and managed instance scaling: fastscale scales a "
                       "single-model endpoint with Application Auto Scaling only, which would need a new configuration")
        if not v.get("ModelName"):
            scaling = v.get("ManagedInstanceScaling") or {}
            if scaling.get("Status") != "ENABLED":
                out.append("an inference-component endpoint without managed instance scaling: fastscale always "
                           "enables it, which would need a new endpoint configuration")
            if not live.components:
                out.append("the variant has neither a model nor inference components")
            if scaling.get("ScaleInPolicy"):
                out.append("managed instance scaling sets a ScaleInPolicy: adopt does not map it yet")
    for name, model in live.models.items():
        if model.get("Containers"):
            out.append(f"model {name} has several containers: fastscale runs one")
        if model.get("EnableNetworkIsolation"):
            out.append(f"model {name} enables network isolation, which fastscale does not model")
        container = model.get("PrimaryContainer") or {}
        extra = sorted(k for k in set(container) - {"Image", "ModelDataUrl", "ModelDataSource", "Environment", "Mode"} if container[k])
        if extra:
            out.append(f"model {name} sets {', '.join(extra)} on its container, which fastscale does not model")
        if container.get("Mode", "SingleModel") != "SingleModel":
            out.append(f"model {name} is a multi-model container (Mode {container['Mode']})")
        source = (container.get("ModelDataSource") or {}).get("S3DataSource")
        if source and not _source_matches(source):
            out.append(f"model {name} loads {source.get('S3Uri')} as {source.get('S3DataType')}/"
                       f"{source.get('CompressionType')}, which fastscale derives otherwise from the URI")
    for policies in live.policies.values():
        for policy in policies:
            if policy.get("PolicyType") == TARGET_TRACKING and "/" in policy.get("PolicyName", ""):
                out.append(f"scaling policy {policy['PolicyName']!r} has '/' in its name: hashicorp/aws imports a "
                           "policy by an ID it splits on '/', so it cannot be imported; rename it first")
    role = cfg.get("ExecutionRoleArn")
    for c in live.components:
        spec = c.get("Specification") or {}
        if not spec.get("ModelName"):
            out.append(f"component {c['InferenceComponentName']} runs an inline container: fastscale components run a model")
        if spec.get("BaseInferenceComponentName"):
            out.append(f"component {c['InferenceComponentName']} is an adapter: fastscale does not model adapters")
        runs = live.models.get(spec.get("ModelName", ""))
        if runs is not None and role and runs.get("ExecutionRoleArn") != role:
            out.append(f"model {spec['ModelName']} runs as {runs.get('ExecutionRoleArn')}, not as the endpoint's role")
        if runs is not None and runs.get("VpcConfig"):
            out.append(f"model {spec['ModelName']} has a VPC configuration: adopt does not map it for components yet")
    return out


def _source_matches(source: dict[str, Any]) -> bool:
    uri = str(source.get("S3Uri", ""))
    if uri.endswith("/"):
        expected = ("S3Prefix", "None")
    elif uri.endswith((".tar.gz", ".tgz")):
        expected = ("S3Object", "Gzip")
    else:
        expected = ("S3Object", "None")
    return (source.get("S3DataType"), source.get("CompressionType")) == expected and not source.get("ModelAccessConfig")
