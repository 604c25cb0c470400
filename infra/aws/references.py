"""What the live endpoints, inference components and endpoint configurations of a region use, whoever owns
them: the endpoint configurations, models and execution roles that must not be deleted (or adopted) while
something else still runs on them.

AWS has no reverse lookup ("which endpoint uses this model"), so :func:`in_use` reads it forwards: every
endpoint is described (its configuration, and the one an update in progress moves to), then those
configurations (their variants' and shadow variants' models, fallback pools' models and role). Components
run only on an endpoint whose configuration has a variant without a model (SageMaker developer guide,
"Inference components": the endpoint is created without a model); when such an endpoint is present, every
component is described for its models. With ``configurations`` every endpoint configuration of the region is
described too, so a model named by a configuration no endpoint runs yet counts as used. With ``roles`` the
models found are described for their role. It costs one call per endpoint, configuration and component in
the region, so callers ask only when there is something to keep.

`sweep` and `destroy` keep what is in use; `adopt`, `plan` and `deploy` do not adopt it (docs/adopt.md,
docs/teardown.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import ClientError

from fastscale.infra.aws.clients import AwsClients, describe_error, is_not_found, paginate

#: Kinds that a live endpoint, component or configuration uses.
IN_USE_KINDS = ("endpoint-config", "model", "iam-role")

#: (kind, name) of what uses something: an endpoint, an inference component or an endpoint configuration.
User = tuple[str, str]
#: ``(kind, name, arn) -> bool``: whether a user is left out (deleted by this run, or being adopted with it).
Skip = Callable[[str, str, str], bool]


def _skip_nothing(kind: str, name: str, arn: str) -> bool:
    return False


@dataclass
class InUse:
    """(kind, lower-case name) -> the (kind, name) of every live endpoint, component or configuration that uses it."""

    users: dict[tuple[str, str], list[User]] = field(default_factory=dict)
    unknown: str = ""  # why it could not be told: then callers keep (or do not adopt) everything of IN_USE_KINDS

    def add(self, kind: str, name: str | None, user: User) -> None:
        if name:
            name = name.rsplit("/", 1)[-1] if kind == "iam-role" else name  # a role ARN names the role last
            holders = self.users.setdefault((kind, name.lower()), [])
            if user not in holders:
                holders.append(user)

    def of(self, kind: str, name: str) -> list[User]:
        """The users of one resource (none when nothing uses it)."""
        return list(self.users.get((kind, name.lower()), []))


def _variants(desc: dict[str, Any]) -> list[dict[str, Any]]:
    return [*desc.get("ProductionVariants", []), *desc.get("ShadowProductionVariants", [])]


def _models_of(desc: dict[str, Any]) -> list[str]:
    """Every model an endpoint configuration names: its variants', its shadow variants' and their pools'."""
    out: list[str] = []
    for variant in _variants(desc):
        for model in [variant.get("ModelName")] + [p.get("ModelNameOverride") for p in variant.get("InstancePools", [])]:
            if model and model not in out:
                out.append(model)
    return out


def in_use(aws: AwsClients, *, skip: Skip = _skip_nothing, roles: bool = False, configurations: bool = False) -> InUse:
    """What the endpoints and components present in the region use (and, with ``configurations``, what every
    endpoint configuration names), leaving out the users ``skip`` names. A refused describe or list call is
    recorded in ``unknown`` instead of raising."""
    out = InUse()
    sm = aws.sagemaker
    try:
        configs: dict[str, list[User]] = {}
        for name, endpoint in _present(sm, skip, "endpoint", "list_endpoints", sm.describe_endpoint):
            pending = (endpoint.get("PendingDeploymentSummary") or {}).get("EndpointConfigName")
            for config in (endpoint.get("EndpointConfigName"), pending):
                if config:
                    configs.setdefault(config, []).append(("endpoint", name))
                    out.add("endpoint-config", config, ("endpoint", name))
        models: dict[str, list[User]] = {}
        hosts_components = False
        described: dict[str, dict[str, Any] | None] = {}
        for config, users in configs.items():
            desc = described[config] = _describe(sm.describe_endpoint_config, EndpointConfigName=config)
            if desc is None:
                hosts_components = True  # its configuration is gone: it may host components
                continue
            hosts_components = hosts_components or any(not v.get("ModelName") for v in _variants(desc))
            for user in users:
                _uses_configuration(out, models, desc, user)
        for item in paginate(sm, "list_endpoint_configs", "EndpointConfigs") if configurations else []:
            name = item["EndpointConfigName"]
            if skip("endpoint-config", name, item.get("EndpointConfigArn", "")):
                continue
            desc = described[name] if name in described else _describe(sm.describe_endpoint_config, EndpointConfigName=name)
            if desc is not None:
                _uses_configuration(out, models, desc, ("endpoint-config", name))
        components = _present(sm, skip, "inference-component", "list_inference_components", sm.describe_inference_component)
        for name, component in components if hosts_components else []:
            specs = [component.get("Specification") or {}, *(component.get("Specifications") or [])]
            for model in sorted({s["ModelName"] for s in specs if s.get("ModelName")}):
                models.setdefault(model, []).append(("inference-component", name))
                out.add("model", model, ("inference-component", name))
        for model, users in models.items() if roles else []:
            desc = _describe(sm.describe_model, ModelName=model)
            role = desc.get("ExecutionRoleArn") if desc is not None else None
            for user in users:
                out.add("iam-role", role, user)
    except ClientError as exc:
        out.unknown = describe_error(exc)
    return out


#: kind -> (the list call's key, its name field, its ARN field, the describe call's name parameter)
_LISTED = {
    "endpoint": ("Endpoints", "EndpointName", "EndpointArn", "EndpointName"),
    "inference-component": ("InferenceComponents", "InferenceComponentName", "InferenceComponentArn", "InferenceComponentName"),
}


def _present(sm: Any, skip: Skip, kind: str, operation: str, describe: Callable[..., dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, description) of every endpoint or component listed and not skipped, still there when described."""
    key, name_field, arn_field, param = _LISTED[kind]
    for item in paginate(sm, operation, key):
        name = item[name_field]
        if skip(kind, name, item.get(arn_field, "")):
            continue
        desc = _describe(describe, **{param: name})
        if desc is not None:
            yield name, desc


def _uses_configuration(out: InUse, models: dict[str, list[User]], desc: dict[str, Any], user: User) -> None:
    """``user`` runs on the configuration ``desc``: it uses the configuration's role and models."""
    out.add("iam-role", desc.get("ExecutionRoleArn"), user)
    for model in _models_of(desc):
        models.setdefault(model, []).append(user)
        out.add("model", model, user)


def _describe(call: Callable[..., dict[str, Any]], **params: str) -> dict[str, Any] | None:
    """A description, or None when the resource went away meanwhile."""
    try:
        return call(**params)
    except ClientError as exc:
        if is_not_found(exc):
            return None
        raise
