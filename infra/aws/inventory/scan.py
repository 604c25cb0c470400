"""One look at the account for one stack: the tagging index, the candidates by name, the ownership proofs
the discovery of every kind shares."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fastscale.infra.aws.clients import (
    AwsClients,
    paginate,
)
from fastscale.infra.aws.inventory.kinds import KIND, KINDS
from fastscale.infra.aws.inventory.model import Inventory, Ownership, Resource, arn_parts, clean_arn, tag_ownership
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.naming import (
    TAG_STACK,
    adopted_resources,
    all_endpoint_names,
    dashboard_name,
    stack_name,
)


class Scan:
    """One look at the account for one stack. Kinds are discovered in :data:`KINDS` order, so a kind
    whose ownership goes through another (a policy through its target) finds that one already proven."""

    def __init__(self, aws: AwsClients, config: FastscaleConfig):
        self.aws = aws
        self.config = config
        self.stack = stack_name(config)
        self.region = config.region
        self.names = all_endpoint_names(config)
        self.adopted = adopted_resources(config)
        self.inventory = Inventory(self.stack, self.region, kinds=KIND)
        self._keys: set[tuple[str, str]] = set()
        # Resources the tagging index lists with this stack's tag: ARN -> tags, by kind.
        self.tagged: dict[str, dict[str, dict[str, str]]] = {k.name: {} for k in KINDS}
        self.tagged_other: list[tuple[str, dict[str, str]]] = []  # tagged ARNs of no kind fastscale knows
        # Resources the index lists with another stack's tag: ARN -> tags. Their tags win over what their
        # name or owner says (a scalable target of another stack on an endpoint of this one stays theirs).
        self.tagged_by_others: dict[str, dict[str, str]] = {}

    # -- helpers ------------------------------------------------------------------------------------

    def ownership(self, tags: Mapping[str, str] | None, *, global_resource: bool = False) -> Ownership:
        return tag_ownership(tags, self.stack, self.region, global_resource=global_resource)

    def add(self, resource: Resource) -> Resource:
        if resource.found_by == "name":
            resource.data.setdefault("config_path", self.config_path(resource.kind, resource.name))
            if self.is_adopted(resource):
                resource.data["adopted"] = True
        if resource.key not in self._keys:
            self._keys.add(resource.key)
            self.inventory.resources.append(resource)
        return resource

    def is_adopted(self, resource: Resource) -> bool:
        """Whether the config adopts `resource` (an `adopted` block names it, or its scalable target)."""
        if resource.kind == "scaling-policy":
            return ("scalable-target", str(resource.data.get("ResourceId", "")).lower()) in self.adopted
        return (resource.kind, resource.name.lower()) in self.adopted

    def found(self, kind: str, name: str) -> Resource | None:
        lowered = name.lower()
        return next((r for r in self.inventory.resources if r.kind == kind and r.name.lower() == lowered), None)

    def checked(self, text: str) -> None:
        self.inventory.checked.append(text)

    def sagemaker_tags(self, kind: str, arn: str) -> dict[str, str]:
        if arn in self.tagged[kind]:
            return self.tagged[kind][arn]
        pages = paginate(self.aws.sagemaker, "list_tags", "Tags", ResourceArn=arn)
        return {t["Key"]: t["Value"] for t in pages}

    def tag_index(self) -> None:
        by_type = {t: k.name for k in KINDS for t in k.arn_types}
        self.checked(f"resources tagged {TAG_STACK} (Resource Groups Tagging API): this stack's, and other stacks' to leave alone")
        for item in paginate(self.aws.tagging, "get_resources", "ResourceTagMappingList", TagFilters=[{"Key": TAG_STACK}]):
            arn = clean_arn(item["ResourceARN"])
            tags = {t["Key"]: t["Value"] for t in item.get("Tags", [])}
            if tags.get(TAG_STACK) != self.stack:
                self.tagged_by_others[arn] = tags
                continue
            service, rtype, _ = arn_parts(arn)
            kind = by_type.get((service, rtype))
            if kind is None:
                self.tagged_other.append((arn, tags))
            else:
                self.tagged[kind][arn] = tags

    def sagemaker_candidates(
        self, kind: str, operation: str, key: str, name_field: str, arn_field: str, exact: dict[str, str], prefixes: Iterable[str]
    ) -> list[tuple[dict[str, Any], str]]:
        """Every resource of a SageMaker list call matching (case-insensitively) an exact name, a prefix,
        or a tagged ARN; each with how it was found. Listing everything is what makes the comparison
        case-insensitive, and costs one call per 100 resources."""
        prefixes = [p.lower() for p in prefixes]
        out = []
        for item in paginate(self.aws.sagemaker, operation, key):
            name = item[name_field]
            lowered = name.lower()
            if lowered in exact:
                out.append((item, "name"))
            elif item.get(arn_field) in self.tagged[kind]:
                out.append((item, "tag"))
            elif any(lowered.startswith(p) for p in prefixes):
                out.append((item, "prefix"))
        return out

    def owned_names(self, kind: str) -> list[str]:
        return [r.name for r in self.inventory.of(kind) if r.ownership.ours]

    def config_path(self, kind: str, name: str) -> str:
        return self.wanted(kind).get(name.lower(), "")

    def wanted(self, kind: str) -> dict[str, str]:
        """Exact names the config gives for a kind (lower case) -> config path."""
        out: dict[str, str] = {}
        for i, n in enumerate(self.names):
            path = f"endpoints[{i}]"
            if kind == "endpoint":
                out[n.endpoint.lower()] = f"{path}.name"
            elif kind == "endpoint-config" and n.endpoint_config:
                out[n.endpoint_config.lower()] = f"{path}.adopted.endpoint_config"
            elif kind == "inference-component":
                out |= {c.name.lower(): f"{path}.inference_components[{j}].name" for j, c in enumerate(n.components)}
            elif kind == "model":
                if n.model:
                    out[n.model.lower()] = f"{path}.model"
                out |= {c.model.lower(): f"{path}.inference_components[{j}]" for j, c in enumerate(n.components) if c.model}
                out |= {m.lower(): f"{path}.capacity.fallback" for m in n.pool_models}
            elif kind == "iam-role" and n.execution_role:
                out[n.execution_role.lower()] = f"{path}.name"
            elif kind == "alarm":
                out |= {a.lower(): f"{path}.alarms" for a in n.all_alarm_names}
        if kind == "dashboard" and self.config.dashboard.enabled:
            out[dashboard_name(self.config).lower()] = "dashboard"
        return out


