"""One endpoint of the config: its models, endpoint configuration, endpoint and inference components.

Two kinds, chosen by the config:

- single-model endpoint: model -> endpoint configuration (variant with `model_name`) -> endpoint; it
  scales by instances;
- inference-component endpoint: endpoint configuration without a model, with `execution_role_arn` and
  managed instance scaling -> endpoint -> one `awscc_sagemaker_inference_component` per component, each
  running its own model; they scale by copies.

Updates. SageMaker models and endpoint configurations are immutable. The configuration gets a fresh name
on every change (`name_prefix`) and `create_before_destroy`, so the endpoint switches to the new one
before the old one is deleted (the endpoint only sees a change when the configuration's name changes).
Terraform extends `create_before_destroy` to what the configuration depends on, the models included,
which is why model names carry a content digest (`infra.model.naming.model_name`): a replacing model never
collides with the one it replaces. Components run a model (`specification.model_name`) rather than an
inline container because an inline container takes its model data only as one `.tar.gz`
(`ArtifactUrl`), while uncompressed S3 prefixes load fastest, and because hashicorp/aws 6.25 cannot put a
VPC on an endpoint configuration, whereas a model carries its own `vpc_config`.

Cut-over count. An update switches the endpoint to the new configuration, and SageMaker starts the new
fleet at that configuration's `InitialInstanceCount` (UpdateEndpoint's `RetainAllVariantProperties`
defaults to false, and hashicorp/aws cannot send it). So the count is a Terraform variable
(`infra.model.cutover`), by default `instances.initial`; `plan` and `deploy` set it to the live count when that
is higher (capped by `instances.max`). `ignore_changes` on it keeps a count change alone from replacing
the configuration (which would start an update for nothing); a configuration replaced for another
reason is created with the count of that moment.

Renames. A component cannot be moved to another endpoint (UpdateInferenceComponent has no endpoint), and
awscc would update its `endpoint_name` in place: each component is replaced when the endpoint's name
changes (`replace_triggered_by` a `terraform_data` holding the name).

`metrics_publish_frequency` and `enhanced_metrics` become the configuration's `MetricsConfig`, which
hashicorp/aws 6.25 does not have, and neither has it instance pools, the provision timeout, a capacity reservation or a scale-in
policy (`stacks.capacity`). When any of them is set, the configuration is an
`awscc_sagemaker_endpoint_config` instead, with the same variant. A fallback pool that runs another model
gets its own SageMaker model (the pool's `model_name_override`); a component with fallback pools gets one
specification per instance type (`specifications`), each with its own model where the pool overrides it.
awscc has no `name_prefix`: its name is the same prefix plus a digest of the configuration's content, so it
changes exactly when the configuration must be replaced, as `name_prefix` would. Tags and the cut-over
count are not in the digest: Cloud Control updates tags in place (`Tags` is the one property of
AWS::SageMaker::EndpointConfig that is not create-only), and the count is left to `ignore_changes`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from fastscale.infra.base import aws_facts
from fastscale.infra.config import (
    AdoptedComponent,
    AdoptedEndpoint,
    EndpointSpec,
    FastscaleConfig,
    InferenceComponentSpec,
    ModelSpec,
    Overrides,
)
from fastscale.infra.config.secrets import container_environment
from fastscale.infra.model import capacity, cutover
from fastscale.infra.model import overrides as override_targets
from fastscale.infra.model.naming import EndpointNames, model_name, tags, with_live_tags
from fastscale.stacks import capacity as capacity_attrs
from fastscale.stacks.resources import awscc, sagemaker
from fastscale.stacks.resources.base import Group, Lifecycle, Ref, Resource, Scope, to_terraform
from fastscale.stacks.resources.builtin import TerraformData, TerraformDataProps
from fastscale.stacks.resources.generated import aws as aws_props
from fastscale.stacks.resources.generated import awscc as awscc_props
from fastscale.stacks.role import ExecutionRole, parse_s3_uri

ROUTING_STRATEGIES = aws_facts.ROUTING_STRATEGIES
#: Hex digits of the content digest that ends an awscc endpoint configuration's name; well inside the
#: 26 characters `infra.rules` reserves after the prefix for Terraform's `name_prefix` suffix.
CONFIG_DIGEST_LEN = 12

EndpointConfigResource = sagemaker.SagemakerEndpointConfiguration | awscc.SagemakerEndpointConfig


def model_data_source(uri: str, accept_eula: bool = False) -> aws_props.ModelDataSource:
    """An S3 prefix is loaded uncompressed (fastest to download); an object is a `.tar.gz` or one file.
    ``accept_eula``: the model's license is accepted (`ModelAccessConfig`, only set when true)."""
    loc = parse_s3_uri(uri)
    if loc is not None and loc.is_prefix:
        kind, compression = sagemaker.S3_PREFIX, sagemaker.COMPRESSION_NONE
    elif uri.endswith((".tar.gz", ".tgz")):
        kind, compression = sagemaker.S3_OBJECT, sagemaker.COMPRESSION_GZIP
    else:
        kind, compression = sagemaker.S3_OBJECT, sagemaker.COMPRESSION_NONE
    return aws_props.ModelDataSource(
        s3_data_source=[
            aws_props.S3DataSource(
                s3_uri=uri,
                s3_data_type=kind,
                compression_type=compression,
                model_access_config=aws_props.ModelAccessConfig(accept_eula=True) if accept_eula else None,
            )
        ]
    )


def download_timeout(ep: EndpointSpec, workload: ModelSpec | InferenceComponentSpec) -> int | None:
    return workload.model_download_timeout or ep.model_download_timeout


def health_check_timeout(ep: EndpointSpec, workload: ModelSpec | InferenceComponentSpec) -> int | None:
    return workload.startup_health_check_timeout or ep.startup_health_check_timeout


class SageMakerEndpoint(Group):
    """Everything one `endpoints[]` entry deploys, except auto scaling and alarms (`stacks.scaling`,
    `stacks.monitoring`), which build on `endpoint` and `components`.

    Attributes: `endpoint`, `endpoint_config`, `models` (by model name), `components` (by component name,
    as `infra.model.naming.ComponentNames.name`), `role` (None when the config brings its own) and `role_arn`;
    `refs` holds the reference tokens already made (each new one is a round trip to the jsii runtime).
    """

    def __init__(self, scope: Scope, id_: str, *, config: FastscaleConfig, names: EndpointNames) -> None:
        super().__init__(scope, id_)
        self.config = config
        self.names = names
        ep = self.spec = names.spec
        self.tags = tags(config, ep)
        kept = ep.adopted.tags if ep.adopted is not None else None
        #: The tags of each kind of resource: the stack's, over the live ones an adopted endpoint keeps.
        self.endpoint_tags = with_live_tags(self.tags, kept.endpoint if kept else {})
        self.config_tags = with_live_tags(self.tags, kept.endpoint_config if kept else {})

        self.role: ExecutionRole | None = None
        if ep.execution_role_arn:
            self.role_arn = ep.execution_role_arn
            self._role_ready: list[Resource] = []
        else:
            self.role = ExecutionRole(self, "execution-role", config=config, names=names)
            self.role_arn = self.role.arn
            self._role_ready = [self.role.policy]

        self.models: dict[str, sagemaker.SagemakerModel] = {}
        #: The models of each entry, for its overrides: None -> the endpoint's, component name -> the component's.
        self.entry_models: dict[str | None, list[sagemaker.SagemakerModel]] = {}
        self.components: dict[str, awscc.SagemakerInferenceComponent] = {}
        self.refs: dict[str, str] = {}  # "endpoint_name", "endpoint_config_name", "model:<name>"
        #: priority -> model name, for fallback pools that run another model than the variant's
        self.pool_models: dict[int, str] = {}
        if ep.model is not None:
            assert names.model is not None, "a single-model endpoint names its model"
            model = self._model("model", names.model, ep.model)
            self.pool_models = self._pool_models(ep.model, names.model)
            variant = dict(
                model_name=self.refs[f"model:{names.model}"],
                model_data_download_timeout_in_seconds=download_timeout(ep, ep.model),
                container_startup_health_check_timeout_in_seconds=health_check_timeout(ep, ep.model),
                volume_size_in_gb=ep.volume_size_gb,
            )
            self.endpoint_config = self._endpoint_config(variant, literal_model=names.model)
        else:
            self.endpoint_config = self._endpoint_config({}, literal_model=None)

        self.refs["endpoint_config_name"] = (
            self.endpoint_config.attr("name")
            if isinstance(self.endpoint_config, sagemaker.SagemakerEndpointConfiguration)
            else self.endpoint_config.attr("endpoint_config_name")
        )
        self.endpoint = sagemaker.SagemakerEndpoint(
            self,
            "endpoint",
            aws_props.SagemakerEndpointProps(
                name=names.endpoint, endpoint_config_name=self.refs["endpoint_config_name"], tags=self.endpoint_tags
            ),
        )
        self.refs["endpoint_name"] = self.endpoint.attr("name")
        #: The endpoint's name as a trigger: its components are replaced when it changes (see the docstring).
        self.endpoint_name_trigger = (
            TerraformData(self, "endpoint-name", TerraformDataProps(input=names.endpoint)) if names.components else None
        )
        for c in names.components:
            model = self._model(f"{c.spec.name}-model", c.model, c.spec, owner=c.spec.name)
            self.components[c.name] = self._component(c.spec, c.name, model)
        self._apply_overrides()
        self._import_adopted()

    def _import_adopted(self) -> None:
        """Import blocks (the engine's `import_from`) for the live resources the config adopted: the first
        deploy reads them into the state instead of creating them; once they are in it, the blocks change nothing."""
        adopted = self.spec.adopted
        if adopted is None:
            return
        self.endpoint.import_from(self.names.endpoint)
        if self.names.endpoint_config:
            self.endpoint_config.import_from(self.names.endpoint_config)
        if adopted.model and adopted.model in self.models:
            self.models[adopted.model].import_from(adopted.model)
        for c in self.names.components:
            if c.spec.adopted is not None:
                self.components[c.name].import_from(c.spec.adopted.arn)  # awscc identifies a component by ARN
                if c.spec.adopted.model and c.spec.adopted.model in self.models:
                    self.models[c.spec.adopted.model].import_from(c.spec.adopted.model)

    def _live_tags(self, owner: str | None, kind: str) -> dict[str, str]:
        """The tags of the endpoint's (``owner`` None) or a component's model or component: the stack's, over
        the live ones its `adopted.tags` keeps."""
        if owner is None:
            adopted: AdoptedEndpoint | AdoptedComponent | None = self.spec.adopted
        else:
            adopted = next(c.adopted for c in self.spec.inference_components if c.name == owner)
        return with_live_tags(self.tags, getattr(adopted.tags, kind) if adopted is not None else {})

    # ----------------------------------------------------------------------------------------- overrides

    def _apply_overrides(self) -> None:
        """The config's `overrides:` (infra.model.overrides) onto the resources of their entry, after everything
        fastscale writes: the endpoint's on its configuration, endpoint and model(s), each component's on
        the component and its model(s). Validation has checked the types and paths (FS101-FS103)."""
        ep = self.spec
        apply_overrides(ep.overrides, {
            type(self.endpoint_config).TYPE: [self.endpoint_config],
            override_targets.ENDPOINT: [self.endpoint],
            override_targets.MODEL: self.entry_models.get(None, []),
        }, self.names.endpoint)
        for c in self.names.components:
            apply_overrides(c.spec.overrides, {
                override_targets.INFERENCE_COMPONENT: [self.components[c.name]],
                override_targets.MODEL: self.entry_models.get(c.spec.name, []),
            }, c.name)

    # ----------------------------------------------------------------------------------------- models

    def _model(
        self, id_: str, name: str, workload: ModelSpec | InferenceComponentSpec, *, owner: str | None = None
    ) -> sagemaker.SagemakerModel:
        """A SageMaker model; ``owner`` is the component whose model it is (None: the endpoint's)."""
        ep = self.spec
        source, url = self._model_data(name, workload)
        model = sagemaker.SagemakerModel(
            self,
            id_,
            aws_props.SagemakerModelProps(
                name=name,
                execution_role_arn=self.role_arn,
                primary_container=aws_props.ModelContainer(
                    image=workload.image,
                    environment=container_environment(workload) or None,
                    model_data_source=source,
                    model_data_url=url,
                ),
                vpc_config=aws_props.VpcConfig(
                    security_group_ids=sorted(ep.vpc.security_groups), subnets=sorted(ep.vpc.subnets)
                )
                if ep.vpc
                else None,
                tags=self._live_tags(owner, "model"),
            ),
            depends_on=self._role_ready,
            # Explicit, though Terraform would infer it from the configuration's own create_before_destroy:
            # a component's model is replaced while the component still runs the old one.
            lifecycle=Lifecycle(create_before_destroy=True),
        )
        self.models[name] = model
        self.entry_models.setdefault(owner, []).append(model)
        self.refs[f"model:{name}"] = model.attr("name")
        return model

    def _model_data(
        self, name: str, workload: ModelSpec | InferenceComponentSpec
    ) -> tuple[aws_props.ModelDataSource | None, str | None]:
        """(`model_data_source`, `model_data_url`): the URL for the adopted model when it names its data that way
        (the form is part of the model, and a model cannot change: the other form would replace it). A URL
        cannot carry the license acceptance, so `accept_eula` always takes the source form."""
        if not workload.model_data:
            return None, None
        adopted = workload.adopted if isinstance(workload, InferenceComponentSpec) else self.spec.adopted
        if adopted is not None and adopted.model_data_url and name == adopted.model and not workload.accept_eula:
            return None, workload.model_data
        return model_data_source(workload.model_data, workload.accept_eula), None

    def _pool_models(self, model: ModelSpec, default_name: str) -> dict[int, str]:
        """One more SageMaker model per fallback pool whose model differs (image, data, environment)."""
        out = {}
        for i, pool in enumerate(capacity.pools(self.spec)[1:]):
            on_pool = capacity.model_on(pool, model)
            name = model_name(self.names.endpoint, self.spec, on_pool, self.names.execution_role)
            if name != default_name:
                if name not in self.models:
                    self._model(f"model-pool-{i}", name, on_pool)
                out[pool.priority] = name
        return out

    # ----------------------------------------------------------------------------------------- configuration

    def _variant_fields(self) -> dict:
        ep = self.spec
        fields = dict(
            variant_name=self.names.variant,
            instance_type=ep.instance_type,
            initial_instance_count=self.cutover_count,
        )
        return fields

    @property
    def cutover_count(self) -> Ref:
        """The variant's initial count: the stack's cut-over variable (`infra.model.cutover`), a reference."""
        return Ref(f"${{var.{cutover.variable_name(self.spec)}}}")

    def _endpoint_config(self, single: dict, *, literal_model: str | None) -> EndpointConfigResource:
        ep = self.spec
        uses_components = ep.uses_inference_components
        # No routing: no RoutingConfig at all, SageMaker's default (RANDOM), as on an endpoint made without one.
        routing = ROUTING_STRATEGIES[ep.routing] if ep.routing is not None else None
        prefix = (
            awscc_props.PrefixAwareRoutingConfig(prefix_length=ep.prefix_routing.prefix_length,
                                           concurrency_threshold=ep.prefix_routing.concurrency_threshold)
            if ep.prefix_routing is not None
            else None
        )
        # The count is set at creation only: a count change alone must not replace the configuration, which
        # would start a blue/green update for nothing (see the module's docstring).
        cbd = Lifecycle(create_before_destroy=True, ignore_changes=[cutover.IGNORE_PATH])
        # Inference-component endpoints need the role on the configuration (no model carries it there)
        # and scale their instances themselves (managed instance scaling) as components add copies.
        role_arn = self.role_arn if uses_components else None

        if not capacity.needs_awscc_config(ep):
            scaling = (
                aws_props.ManagedInstanceScaling(
                    status=sagemaker.MANAGED_SCALING_ENABLED,
                    min_instance_count=ep.instances.min,
                    max_instance_count=ep.instances.max,
                )
                if uses_components
                else None
            )
            variant = aws_props.ProductionVariant(
                **self._variant_fields(),
                **single,
                managed_instance_scaling=scaling,
                routing_config=[aws_props.RoutingConfig(routing_strategy=routing)] if routing else None,
                inference_ami_version=ep.inference_ami_version,
            )
            return sagemaker.SagemakerEndpointConfiguration(
                self,
                "endpoint-config",
                aws_props.SagemakerEndpointConfigurationProps(
                    # An adopted configuration keeps its live name (until a change removes `adopted.endpoint_config`).
                    name=self.names.endpoint_config,
                    name_prefix=None if self.names.endpoint_config else self.names.endpoint_config_prefix,
                    production_variants=[variant],
                    execution_role_arn=role_arn,
                    kms_key_arn=ep.kms_key_arn,
                    tags=self.config_tags,
                ),
                depends_on=self._role_ready,
                lifecycle=cbd,
            )

        # Detailed observability is on by default for a new configuration (SageMaker API reference,
        # MetricsConfig): fastscale writes it explicitly, off unless the config turns it on (its scaling, alarms
        # and dashboard read none of those metrics; see EndpointSpec.detailed_observability).
        metrics = awscc_props.MetricsConfig(
            metric_publish_frequency_in_seconds=ep.metrics_publish_frequency,
            enable_enhanced_metrics=True if ep.enhanced_metrics else None,
            enable_detailed_observability=bool(ep.detailed_observability),
        )

        def props(
            name: str, model_name: str | None, role: str | None, pool_models: dict[int, str], *,
            count: int | Ref, with_tags: bool = True,
        ) -> awscc_props.SagemakerEndpointConfigProps:
            scaling = (
                awscc_props.ManagedInstanceScaling(
                    status=sagemaker.MANAGED_SCALING_ENABLED,
                    min_instance_count=ep.instances.min,
                    max_instance_count=ep.instances.max,
                    scale_in_policy=capacity_attrs.scale_in_policy(ep),
                )
                if uses_components
                else None
            )
            fields = dict(single, model_name=model_name) if single else {}
            variant = awscc_props.ProductionVariant(
                variant_name=self.names.variant,
                initial_instance_count=count,
                **capacity_attrs.variant_fields(ep, pool_models),
                **fields,
                managed_instance_scaling=scaling,
                routing_config=(awscc_props.RoutingConfig(routing_strategy=routing, prefix_aware_routing_config=prefix)
                                if routing else None),
                inference_ami_version=ep.inference_ami_version,
            )
            return awscc_props.SagemakerEndpointConfigProps(
                endpoint_config_name=name,
                production_variants=[variant],
                execution_role_arn=role,
                kms_key_id=ep.kms_key_arn,
                metrics_config=metrics,
                tags=awscc.tag_list(self.config_tags) if with_tags else None,
            )

        # The digest is taken over the content with literal stand-ins for the two references (the model's
        # name is known, and the role's ARN only changes with its name), never over reference tokens, whose
        # text depends on construction order and would rename (and so redeploy) the endpoint for nothing.
        # Tags and the count are left out: tags are updated in place, and the count is set at creation only.
        stand_in_role = (ep.execution_role_arn or f"role/{self.names.execution_role}") if uses_components else None
        content = to_terraform(props("", literal_model, stand_in_role, self.pool_models, count=0, with_tags=False))
        # The configuration's overrides change its content as much as its props do (the same digest rule).
        overrides = ep.overrides.get(awscc.SagemakerEndpointConfig.TYPE)
        if overrides:
            content = {"attributes": content, "overrides": overrides}
        digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:CONFIG_DIGEST_LEN]
        name = self.names.endpoint_config or f"{self.names.endpoint_config_prefix}{digest}"
        return awscc.SagemakerEndpointConfig(
            self,
            "endpoint-config",
            props(
                name,
                single.get("model_name"),
                role_arn,
                {priority: self.refs[f"model:{m}"] for priority, m in self.pool_models.items()},
                count=self.cutover_count,
            ),
            depends_on=self._role_ready,
            lifecycle=cbd,
        )

    # ----------------------------------------------------------------------------------------- components

    def _component(
        self, spec: InferenceComponentSpec, name: str, model: sagemaker.SagemakerModel
    ) -> awscc.SagemakerInferenceComponent:
        ep = self.spec
        if capacity.has_pools(ep):
            # One specification per instance type, tried in the pools' priority order.
            single, several = None, [
                self._pool_specification(capacity.component_on(pool, spec),
                                         self._pool_component_model(spec, name, pool, i, model), pool.instance_type)
                for i, pool in sorted(enumerate(capacity.pools(ep)), key=lambda item: item[1].priority)
            ]
        else:
            single, several = self._specification(spec, self.refs[f"model:{model.props.name}"]), None
        return awscc.SagemakerInferenceComponent(
            self,
            spec.name,
            awscc_props.SagemakerInferenceComponentProps(
                inference_component_name=name,
                endpoint_name=self.refs["endpoint_name"],
                variant_name=self.names.variant,
                specification=single,
                specifications=several,
                # The count at creation; from then on auto scaling owns it (see ignore_changes).
                runtime_config=awscc_props.InferenceComponentRuntimeConfig(copy_count=spec.copies.initial),
                tags=awscc.tag_list(self._live_tags(spec.name, "component")),
            ),
            depends_on=[self.endpoint],
            lifecycle=Lifecycle(
                ignore_changes=[awscc.SagemakerInferenceComponent.COPY_COUNT_PATH],
                replace_triggered_by=[self.endpoint_name_trigger.address] if self.endpoint_name_trigger else None,
            ),
        )

    def _pool_component_model(
        self, spec: InferenceComponentSpec, base: str, pool: capacity.Pool, index: int, model: sagemaker.SagemakerModel
    ) -> str:
        """The model reference a component runs on ``pool``: its own, or one more model when the pool
        overrides the image, model data or environment."""
        on_pool = capacity.component_on(pool, spec)
        name = model_name(base, self.spec, on_pool, self.names.execution_role)  # as infra.model.naming names the component's own model
        if name != model.props.name and name not in self.models:
            self._model(f"{spec.name}-model-pool-{index - 1}", name, on_pool, owner=spec.name)
        return self.refs[f"model:{name}"]

    def _specification(self, spec: InferenceComponentSpec, model_ref: str) -> awscc_props.InferenceComponentSpecification:
        ep = self.spec
        timeouts = awscc_props.StartupParameters(
            model_data_download_timeout_in_seconds=download_timeout(ep, spec),
            container_startup_health_check_timeout_in_seconds=health_check_timeout(ep, spec),
        )
        return awscc_props.InferenceComponentSpecification(
            model_name=model_ref,
            compute_resource_requirements=awscc_props.ComputeResourceRequirements(
                min_memory_required_in_mb=spec.resources.memory_mb,
                max_memory_required_in_mb=spec.resources.max_memory_mb,
                number_of_accelerator_devices_required=spec.resources.accelerators,
                number_of_cpu_cores_required=spec.resources.cpus,
            ),
            # Explicit unless the config says null: the API's default when omitted is undocumented (an adopted
            # component made without it keeps it unset, so adopting changes nothing).
            data_cache_config=awscc_props.DataCacheConfig(enable_caching=spec.data_cache) if spec.data_cache is not None else None,
            startup_parameters=timeouts
            if (timeouts.model_data_download_timeout_in_seconds or timeouts.container_startup_health_check_timeout_in_seconds)
            else None,
            scheduling_config=capacity_attrs.scheduling(ep),
        )

    def _pool_specification(
        self, spec: InferenceComponentSpec, model_ref: str, instance_type: str
    ) -> awscc_props.InstanceTypeSpecification:
        """One item of `specifications`: the component's specification on one instance type of the pools."""
        single = self._specification(spec, model_ref)
        return awscc_props.InstanceTypeSpecification(
            instance_type=instance_type,
            model_name=single.model_name,
            compute_resource_requirements=single.compute_resource_requirements,
            data_cache_config=single.data_cache_config,
            startup_parameters=single.startup_parameters,
            scheduling_config=single.scheduling_config,
        )


def apply_overrides(overrides: Overrides, resources: Mapping[str, Sequence[Resource]], where: str) -> None:
    """Each `{type: {path: value}}` of ``overrides`` onto every resource of that type in ``resources`` (what
    the entry ``where`` synthesizes), through the resource layer's `add_override`."""
    for type_, paths in overrides.items():
        if type_ not in resources:
            raise ValueError(f"{where}: overrides target {type_}, which this entry does not synthesize (rule FS101)")
        for resource in resources[type_]:
            for path, value in paths.items():
                resource.add_override(path, value)
