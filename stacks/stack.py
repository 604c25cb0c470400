"""`EndpointContent`: the whole config as the content of one Terraform stack (plain Python, see
`stacks.resources.base`; `stacks.engine_stack.EndpointStack` is the engine's stack holding it).

Per endpoint: `SageMakerEndpoint` (role, models, configuration, endpoint, components), then its auto
scaling (`EndpointScaling`) and alarms (`EndpointAlarms`); then every endpoint's and component's update
settings (`stacks.deployment`, which references the alarms); once per stack: the dashboard, the
providers, the state backend, the cut-over count variables (`infra.model.cutover`) and the outputs.
"""

from __future__ import annotations

from fastscale.infra.base.credentials import DUMMY_ACCESS_KEY_ID, DUMMY_SECRET_ACCESS_KEY
from fastscale.infra.config import FastscaleConfig, S3State
from fastscale.infra.model import cutover
from fastscale.infra.model.deployment import rollouts
from fastscale.infra.model.naming import all_endpoint_names, stack_name
from fastscale.stacks.deployment import attach
from fastscale.stacks.endpoint import SageMakerEndpoint
from fastscale.stacks.monitoring import EndpointAlarms, StackDashboard
from fastscale.stacks.providers import add_providers
from fastscale.stacks.resources.base import Output, StackContent, engine_verbatim
from fastscale.stacks.resources.cloudwatch import CloudwatchMetricAlarm
from fastscale.stacks.scaling import EndpointScaling


class EndpointContent(StackContent):
    """Every endpoint of `config`. `endpoints` maps each config endpoint name to its group."""

    def __init__(self, config: FastscaleConfig, *, state_path: str | None = None) -> None:
        """`state_path`: the local backend's path relative to the stack directory (required with the local
        backend; `stacks.app.build_app` computes it with `infra.model.state.local_state_placement`)."""
        super().__init__(stack_name(config))
        self.config = config
        add_providers(self, config)
        self._backend(config, state_path)
        # Each endpoint configuration's initial count (infra.model.cutover), as one stack-level override.
        self.add_override("variable", cutover.variables(config))

        self.endpoints: dict[str, SageMakerEndpoint] = {}
        # An AWS emulator neither performs nor stores a deployment configuration (moto drops it), so the
        # provider would read it back empty and plan to replace the endpoint on every deploy: none there.
        updates = rollouts(config) if config.endpoint_url is None else []
        watched = {a.name for r in updates for a in r.alarms}
        alarms: dict[str, CloudwatchMetricAlarm] = {}
        for names in all_endpoint_names(config):
            ep_id = names.spec.name
            built = SageMakerEndpoint(self, ep_id, config=config, names=names)
            self.endpoints[ep_id] = built
            EndpointScaling(self, f"{ep_id}-scaling", config=config, names=names, endpoint=built.endpoint,
                            components=built.components)
            alarms.update(EndpointAlarms(self, f"{ep_id}-alarms", config=config, names=names, endpoint=built.endpoint,
                                         components=built.components, rollback_alarms=watched).alarms)
        attach(
            updates,
            endpoints={built.names.endpoint: built.endpoint for built in self.endpoints.values()},
            components={name: c for built in self.endpoints.values() for name, c in built.components.items()},
            alarms=alarms,
        )
        StackDashboard(self, "dashboard", config=config)
        self._add_outputs()

    def _backend(self, config: FastscaleConfig, state_path: str | None) -> None:
        state = config.state
        # The engine renders the backend itself, and Terraform reads it without evaluating anything (a
        # backend block's JSON strings are literal): values as written, the engine's token syntax refused.
        if isinstance(state, S3State):
            settings = engine_verbatim({"bucket": state.bucket, "key": state.key,
                                        "region": state.region or config.region, "kms_key_id": state.kms_key_id,
                                        "dynamodb_table": state.dynamodb_table}, "state")
            self.backend = ("s3", {**settings, "encrypt": state.encrypt})
            # S3-native locking (Terraform >= 1.10) postdates cdktf 0.21's S3Backend props.
            if state.use_lockfile:
                self.add_override("terraform.backend.s3.use_lockfile", True)
            if state.endpoint_url:  # an emulator's S3 (rule FS070 requires it with an emulator target)
                # The dummy credentials unless the command line sends the real ones (infra.base.credentials).
                dummy = () if config.sends_credentials_to_endpoint else (
                    ("access_key", DUMMY_ACCESS_KEY_ID), ("secret_key", DUMMY_SECRET_ACCESS_KEY))
                for key, value in (("endpoints", {"s3": state.endpoint_url}), ("use_path_style", True),
                                   ("skip_credentials_validation", True), ("skip_requesting_account_id", True),
                                   ("skip_metadata_api_check", True), *dummy):
                    self.add_override(f"terraform.backend.s3.{key}", engine_verbatim(value, "state.endpoint_url"))
        else:
            if state_path is None:
                raise ValueError("the local backend needs state_path (see infra.model.state.local_state_placement)")
            self.backend = ("local", {"path": engine_verbatim(state_path, "state.path")})

    def _add_outputs(self) -> None:
        """One output per endpoint (keyed by its config name) with what the next step needs: the names to
        invoke and verify, ARNs for IAM policies, the role that runs the models."""
        for ep_id, built in self.endpoints.items():
            value = {
                "endpoint_name": built.refs["endpoint_name"],
                "endpoint_arn": built.endpoint.arn,
                "endpoint_config_name": built.refs["endpoint_config_name"],
                # A reference either way: the config's own role ARN is read back from the model that uses it.
                "execution_role_arn": built.role.arn if built.role is not None
                else next(iter(built.models.values())).attr("execution_role_arn"),
                "model_names": [built.refs[f"model:{name}"] for name in built.models],
                "inference_component_names": [c.attr("inference_component_name") for c in built.components.values()],
            }
            Output(self, f"endpoint_{ep_id}".replace("-", "_"), value=value, static_id=True,
                            description=f"Endpoint '{ep_id}': names and ARNs")
