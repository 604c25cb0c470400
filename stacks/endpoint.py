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
from typing import Any

from fastscale.infra.model import cutover
from fastscale.infra.model import overrides as override_targets
from fastscale.infra.model.resolved import ResolvedComponent, ResolvedEndpoint, ResolvedWorkload
from fastscale.stacks import capacity as capacity_attrs
from fastscale.stacks.resources import awscc, sagemaker
from fastscale.stacks.resources.base import Group, Lifecycle, Ref, Resource, Scope, to_terraform
from fastscale.stacks.resources.builtin import TerraformData, TerraformDataProps
from fastscale.stacks.resources.generated import aws as aws_props
from fastscale.stacks.resources.generated import awscc as awscc_props
from fastscale.stacks.role import ExecutionRole, parse_s3_uri

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


class SageMakerEndpoint(Group):
    """Everything one `endpoints[]` entry deploys, except auto scaling and alarms (`stacks.scaling`,
    `stacks.monitoring`), which build on `endpoint` and `components`.

    Attributes: `endpoint`, `endpoint_config`, `models` (by model name), `components` (by component name,
    as `ResolvedComponent.name`), `role` (None when the config brings its own) and `role_arn`;
    `refs` holds the Terraform references the rest of the stack takes from it (`endpoint_name`,
    `endpoint_config_name`, `model:<name>`), under one key each.
    """

    def __init__(self, scope: Scope, id_: str, *, endpoint: ResolvedEndpoint) -> None:
        super().__init__(scope, id_)
        ep = self.resolved = endpoint

        self.role: ExecutionRole | None = None
        if ep.execution_role_arn:
            self.role_arn = ep.execution_role_arn
            self._role_ready: list[Resource] = []
        else:
            self.role = ExecutionRole(self, "execution-role", endpoint=ep)
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
            self._model("model", ep.model)
            self.pool_models = self._pool_models(ep.model)
            variant = dict(
                model_name=self.refs[f"model:{ep.model.model}"],
                model_data_download_timeout_in_seconds=ep.model.download_timeout,
                container_startup_health_check_timeout_in_seconds=ep.model.health_check_timeout,
                volume_size_in_gb=ep.volume_size_gb,
            )
            self.endpoint_config = self._endpoint_config(variant, literal_model=ep.model.model)
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
                name=ep.name, endpoint_config_name=self.refs["endpoint_config_name"], tags=dict(ep.endpoint_tags)
            ),
        )
        self.refs["endpoint_name"] = self.endpoint.attr("name")
        #: The endpoint's name as a trigger: its components are replaced when it changes (see the docstring).
        self.endpoint_name_trigger = (
            TerraformData(self, "endpoint-name", TerraformDataProps(input=ep.name)) if ep.components else None
        )
        for c in ep.components:
            model = self._model(f"{c.key}-model", c.workload, owner=c.key)
            self.components[c.name] = self._component(c, model)
        self._apply_overrides()
        self._import_adopted()

    def _import_adopted(self) -> None:
        """Import blocks (the engine's `import_from`) for the live resources the config adopted: the first
        deploy reads them into the state instead of creating them; once they are in it, the blocks change nothing."""
        ep = self.resolved
        if not ep.adopted:
            return
        self.endpoint.import_from(ep.name)
        if ep.endpoint_config:
            self.endpoint_config.import_from(ep.endpoint_config)
        if ep.adopted_model and ep.adopted_model in self.models:
            self.models[ep.adopted_model].import_from(ep.adopted_model)
        for c in ep.components:
            if c.adopted_arn is not None:
                self.components[c.name].import_from(c.adopted_arn)  # awscc identifies a component by ARN
                adopted_model = c.workload.adopted_model
                if adopted_model and adopted_model in self.models:
                    self.models[adopted_model].import_from(adopted_model)

    # ----------------------------------------------------------------------------------------- overrides

    def _apply_overrides(self) -> None:
        """The config's `overrides:` (infra.model.overrides) onto the resources of their entry, after everything
        fastscale writes: the endpoint's on its configuration, endpoint and model(s), each component's on
        the component and its model(s). Validation has checked the types and paths (FS101-FS103)."""
        ep = self.resolved
        apply_overrides(ep.overrides, {
            type(self.endpoint_config).TYPE: [self.endpoint_config],
            override_targets.ENDPOINT: [self.endpoint],
            override_targets.MODEL: self.entry_models.get(None, []),
        }, ep.name)
        for c in ep.components:
            apply_overrides(c.overrides, {
                override_targets.INFERENCE_COMPONENT: [self.components[c.name]],
                override_targets.MODEL: self.entry_models.get(c.key, []),
            }, c.name)

    # ----------------------------------------------------------------------------------------- models

    def _model(self, id_: str, workload: ResolvedWorkload, *, owner: str | None = None) -> sagemaker.SagemakerModel:
        """The SageMaker model of ``workload``; ``owner`` is the component whose model it is (None: the endpoint's)."""
        ep = self.resolved
        source, url = self._model_data(workload)
        model = sagemaker.SagemakerModel(
            self,
            id_,
            aws_props.SagemakerModelProps(
                name=workload.model,
                execution_role_arn=self.role_arn,
                primary_container=aws_props.ModelContainer(
                    image=workload.image,
                    environment=dict(workload.environment) or None,
                    model_data_source=source,
                    model_data_url=url,
                ),
                vpc_config=aws_props.VpcConfig(
                    security_group_ids=list(ep.vpc.security_groups), subnets=list(ep.vpc.subnets)
                )
                if ep.vpc
                else None,
                tags=dict(workload.model_tags),
            ),
            depends_on=self._role_ready,
            # Explicit, though Terraform would infer it from the configuration's own create_before_destroy:
            # a component's model is replaced while the component still runs the old one.
            lifecycle=Lifecycle(create_before_destroy=True),
        )
        self.models[workload.model] = model
        self.entry_models.setdefault(owner, []).append(model)
        self.refs[f"model:{workload.model}"] = model.attr("name")
        return model

    @staticmethod
    def _model_data(workload: ResolvedWorkload) -> tuple[aws_props.ModelDataSource | None, str | None]:
        """(`model_data_source`, `model_data_url`): the URL for the adopted model when it names its data that way
        (`ResolvedWorkload.model_data_as_url`)."""
        if not workload.model_data:
            return None, None
        if workload.model_data_as_url:
            return None, workload.model_data
        return model_data_source(workload.model_data, workload.accept_eula), None

    def _pool_models(self, model: ResolvedWorkload) -> dict[int, str]:
        """One more SageMaker model per fallback pool whose model differs (image, data, environment)."""
        out = {}
        ep = self.resolved
        for pool, on_pool in zip(ep.pools[1:], ep.model_on_pools[1:], strict=True):
            if on_pool.model != model.model:
                if on_pool.model not in self.models:
                    self._model(f"model-pool-{pool.index - 1}", on_pool)
                out[pool.priority] = on_pool.model
        return out

    # ----------------------------------------------------------------------------------------- configuration

    def _variant_fields(self) -> dict:
        ep = self.resolved
        fields = dict(
            variant_name=ep.variant,
            instance_type=ep.instance_type,
            initial_instance_count=self.cutover_count,
        )
        return fields

    @property
    def cutover_count(self) -> Ref:
        """The variant's initial count: the stack's cut-over variable (`infra.model.cutover`), a reference."""
        return Ref(f"${{var.{self.resolved.cutover_variable}}}")

    def _endpoint_config(self, single: dict, *, literal_model: str | None) -> EndpointConfigResource:
        ep = self.resolved
        uses_components = ep.uses_components
        # No routing: no RoutingConfig at all, SageMaker's default (RANDOM), as on an endpoint made without one.
        routing = ep.routing.strategy
        prefix = (
            awscc_props.PrefixAwareRoutingConfig(prefix_length=ep.routing.prefix_length,
                                           concurrency_threshold=ep.routing.concurrency_threshold)
            if ep.routing.prefix_length is not None
            else None
        )
        # The count is set at creation only: a count change alone must not replace the configuration, which
        # would start a blue/green update for nothing (see the module's docstring).
        cbd = Lifecycle(create_before_destroy=True, ignore_changes=[cutover.IGNORE_PATH])
        # Inference-component endpoints need the role on the configuration (no model carries it there)
        # and scale their instances themselves (managed instance scaling) as components add copies.
        role_arn = self.role_arn if uses_components else None

        if not ep.awscc_config:
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
                    name=ep.endpoint_config,
                    name_prefix=None if ep.endpoint_config else ep.endpoint_config_prefix,
                    production_variants=[variant],
                    execution_role_arn=role_arn,
                    kms_key_arn=ep.kms_key_arn,
                    tags=dict(ep.config_tags),
                ),
                depends_on=self._role_ready,
                lifecycle=cbd,
            )

        # Detailed observability is on by default for a new configuration (SageMaker API reference,
        # MetricsConfig): fastscale writes it explicitly, off unless the config turns it on (its scaling, alarms
        # and dashboard read none of those metrics; see EndpointSpec.detailed_observability).
        metrics = awscc_props.MetricsConfig(
            metric_publish_frequency_in_seconds=ep.metrics.publish_frequency,
            enable_enhanced_metrics=True if ep.metrics.enhanced else None,
            enable_detailed_observability=ep.metrics.detailed_observability,
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
                variant_name=ep.variant,
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
                tags=awscc.tag_list(dict(ep.config_tags)) if with_tags else None,
            )

        # The digest is taken over the content with literal stand-ins for the two references (the model's
        # name is known, and the role's ARN only changes with its name), never over reference tokens, whose
        # text depends on construction order and would rename (and so redeploy) the endpoint for nothing.
        # Tags and the count are left out: tags are updated in place, and the count is set at creation only.
        stand_in_role = (ep.execution_role_arn or f"role/{ep.execution_role}") if uses_components else None
        content = to_terraform(props("", literal_model, stand_in_role, self.pool_models, count=0, with_tags=False))
        # The configuration's overrides change its content as much as its props do (the same digest rule).
        overrides = ep.overrides.get(awscc.SagemakerEndpointConfig.TYPE)
        if overrides:
            content = {"attributes": content, "overrides": dict(overrides)}
        digest = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()[:CONFIG_DIGEST_LEN]
        name = ep.endpoint_config or f"{ep.endpoint_config_prefix}{digest}"
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

    def _component(self, c: ResolvedComponent, model: sagemaker.SagemakerModel) -> awscc.SagemakerInferenceComponent:
        ep = self.resolved
        if ep.has_pools:
            # One specification per instance type, tried in the pools' priority order.
            single, several = None, [
                self._pool_specification(c, c.on_pools[pool.index], self._pool_component_model(c, pool.index, model),
                                         pool.instance_type)
                for pool in ep.pools_by_priority
            ]
        else:
            single, several = self._specification(c.workload, c.data_cache, self.refs[f"model:{model.props.name}"]), None
        return awscc.SagemakerInferenceComponent(
            self,
            c.key,
            awscc_props.SagemakerInferenceComponentProps(
                inference_component_name=c.name,
                endpoint_name=self.refs["endpoint_name"],
                variant_name=ep.variant,
                specification=single,
                specifications=several,
                # The count at creation; from then on auto scaling owns it (see ignore_changes).
                runtime_config=awscc_props.InferenceComponentRuntimeConfig(copy_count=c.copies.initial),
                tags=awscc.tag_list(dict(c.tags)),
            ),
            depends_on=[self.endpoint],
            lifecycle=Lifecycle(
                ignore_changes=[awscc.SagemakerInferenceComponent.COPY_COUNT_PATH],
                replace_triggered_by=[self.endpoint_name_trigger.address] if self.endpoint_name_trigger else None,
            ),
        )

    def _pool_component_model(self, c: ResolvedComponent, index: int, model: sagemaker.SagemakerModel) -> str:
        """The model reference a component runs on the pool at ``index``: its own, or one more model when the
        pool overrides the image, model data or environment."""
        on_pool = c.on_pools[index]
        if on_pool.model != model.props.name and on_pool.model not in self.models:
            self._model(f"{c.key}-model-pool-{index - 1}", on_pool, owner=c.key)
        return self.refs[f"model:{on_pool.model}"]

    def _specification(
        self, workload: ResolvedWorkload, data_cache: bool | None, model_ref: str
    ) -> awscc_props.InferenceComponentSpecification:
        timeouts = awscc_props.StartupParameters(
            model_data_download_timeout_in_seconds=workload.download_timeout,
            container_startup_health_check_timeout_in_seconds=workload.health_check_timeout,
        )
        resources = workload.resources
        assert resources is not None, "a component's workload reserves resources"
        return awscc_props.InferenceComponentSpecification(
            model_name=model_ref,
            compute_resource_requirements=awscc_props.ComputeResourceRequirements(
                min_memory_required_in_mb=resources.memory_mb,
                max_memory_required_in_mb=resources.max_memory_mb,
                number_of_accelerator_devices_required=resources.accelerators,
                number_of_cpu_cores_required=resources.cpus,
            ),
            # Explicit unless the config says null: the API's default when omitted is undocumented (an adopted
            # component made without it keeps it unset, so adopting changes nothing).
            data_cache_config=awscc_props.DataCacheConfig(enable_caching=data_cache) if data_cache is not None else None,
            startup_parameters=timeouts
            if (timeouts.model_data_download_timeout_in_seconds or timeouts.container_startup_health_check_timeout_in_seconds)
            else None,
            scheduling_config=capacity_attrs.scheduling(self.resolved),
        )

    def _pool_specification(
        self, c: ResolvedComponent, workload: ResolvedWorkload, model_ref: str, instance_type: str
    ) -> awscc_props.InstanceTypeSpecification:
        """One item of `specifications`: component ``c``'s specification on one instance type of the pools."""
        single = self._specification(workload, c.data_cache, model_ref)
        return awscc_props.InstanceTypeSpecification(
            instance_type=instance_type,
            model_name=single.model_name,
            compute_resource_requirements=single.compute_resource_requirements,
            data_cache_config=single.data_cache_config,
            startup_parameters=single.startup_parameters,
            scheduling_config=single.scheduling_config,
        )


def apply_overrides(overrides: Mapping[str, Mapping[str, Any]], resources: Mapping[str, Sequence[Resource]], where: str) -> None:
    """Each `{type: {path: value}}` of ``overrides`` onto every resource of that type in ``resources`` (what
    the entry ``where`` synthesizes), through the resource layer's `add_override`."""
    for type_, paths in overrides.items():
        if type_ not in resources:
            raise ValueError(f"{where}: overrides target {type_}, which this entry does not synthesize (rule FS101)")
        for resource in resources[type_]:
            for path, value in paths.items():
                resource.add_override(path, value)
