"""The engine's side of a fastscale stack: `ResourceStack`, a real `TerraformStack` holding a `StackContent`
(stacks.resources.base), and `EndpointStack`, the one `cdktf synth` and `stacks.app.build_app` make.

Only public, documented API of the engine (CDK for Terraform or CDK Terrain, whichever `stacks.engine` loaded)
and of jsii is used:

- providers and the backend are the engine's own constructs (`TerraformProvider` with its
  `_synthesize_attributes` hook, `LocalBackend` / `S3Backend`), and stack-level settings the engine's
  `TerraformStack.add_override`, so aspects, validations and a user's own providers see them;
- `ResourceStack.to_terraform` (the stack's public rendering method, which the synthesizer and the engine's
  `Testing.synth` call) takes the engine's document and adds the content's resources, data sources and
  outputs, rendered in Python from the props as they are at that moment. They are added after the engine
  resolved its tokens, so the escaped literals reach the file as they are. What the engine's document
  already holds wins: a user's `add_override("resource.<type>.<id>.<attribute>", ...)` on the stack, made at
  any time before synthesis, stays in force;
- resources and data sources implement the engine's public `ITerraformDependable` interface (with jsii's
  public `implements`), so a user's construct takes them in its `depends_on`.

Aspects see the engine's constructs (providers, backend, a user's own constructs); fastscale's resources are
Python objects, reached through `stack.content.elements` (and changed with `Resource.add_override`).
"""

from __future__ import annotations

from typing import Any

import jsii

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.stacks.engine import (
    Construct,
    GeneratorMetadata,
    ITerraformDependable,
    LocalBackend,
    S3Backend,
    TerraformProvider,
    TerraformStack,
)
from fastscale.stacks.resources.base import DataSource, ProviderBlock, Resource, StackContent, deep_merge
from fastscale.stacks.stack import EndpointContent

# `jsii.implements` is how a Python class implements an interface of a jsii library; `fqn` is the one member
# ITerraformDependable (and the ITerraformAddressable it extends) has.
jsii.implements(ITerraformDependable)(Resource)
jsii.implements(ITerraformDependable)(DataSource)


class Provider(TerraformProvider):
    """A provider block of the content: the version constraint lands in `required_providers`."""

    def __init__(self, scope: Construct, block: ProviderBlock) -> None:
        super().__init__(
            scope,
            block.name,
            terraform_resource_type=block.name,
            terraform_generator_metadata=GeneratorMetadata(provider_name=block.name,
                                                           provider_version_constraint=block.version),
            terraform_provider_source=block.source,
        )
        self.block = block

    def _synthesize_attributes(self) -> dict[str, Any]:
        return dict(self.block.settings)  # rendered in stacks.providers: literals escaped, engine tokens refused


class ElementClashError(ValueError):
    """A user's own construct has the address of one of the content's resources."""


class ResourceStack(TerraformStack):
    """A stack of the engine holding `content` (or an empty StackContent named `content`)."""

    def __init__(self, scope: Construct, content: StackContent | str) -> None:
        content = StackContent(content) if isinstance(content, str) else content
        super().__init__(scope, content.name)
        self.content = content
        self.providers = [Provider(self, block) for block in content.providers]
        if content.backend is not None:
            kind, settings = content.backend
            backend = S3Backend if kind == "s3" else LocalBackend
            backend(self, **{k: v for k, v in settings.items() if v is not None})
        for path, value in content.stack_overrides:
            self.add_override(path, value)

    def to_terraform(self) -> Any:
        """The engine's document with the content's resources, data sources and outputs added."""
        document: dict[str, Any] = super().to_terraform()
        mine = self.content.rendered_elements()
        for section in ("resource", "data"):
            for type_, bodies in document.get(section, {}).items():
                for name, body in bodies.items():
                    ours = mine.get(section, {}).get(type_, {}).get(name)
                    if ours is not None and isinstance(body, dict) and "//" in body:
                        raise ElementClashError(
                            f"{section}.{type_}.{name}: {body['//'].get('metadata', {}).get('path')} has the "
                            f"address of fastscale's {ours['//']['metadata']['path']}: give it another id")
        theirs = document.pop("import", None)  # a user's own construct imported too: both lists are kept
        merged = deep_merge(mine, document)
        if theirs:
            merged["import"] = [*merged.get("import", []), *theirs]
        return merged


class EndpointStack(ResourceStack):
    """Every endpoint of the resolved stack (`EndpointContent`) as a stack of the engine."""

    def __init__(self, scope: Construct, stack: ResolvedStack, *, state_path: str | None = None) -> None:
        """`state_path`: the local backend's path relative to the stack directory (required with the local
        backend; `stacks.app.build_app` computes it with `ResolvedStack.state_placement`)."""
        content = EndpointContent(stack, state_path=state_path)
        super().__init__(scope, content)
        self.stack = stack
        self.endpoints = content.endpoints
