"""The thin typed resource layer: frozen dataclasses of Terraform attributes, synthesized by cdktf.

Field names are the provider's own attribute names, so the synthesized JSON can be checked directly
against the provider schemas (tests/contract). Nested blocks are dataclasses too; lists of blocks are lists.
`None` means "not set" and is left out of the JSON.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, TypeVar

from fastscale.stacks.engine import Construct, GeneratorMetadata, TerraformResource, TerraformResourceLifecycle


def to_terraform(value: Any) -> Any:
    """Turn props (dataclasses, lists, dicts, scalars) into Terraform JSON values, dropping unset fields."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if v is None:
                continue
            out[f.name] = to_terraform(v)
        return out
    if isinstance(value, (list, tuple)):
        return [to_terraform(v) for v in value]
    if isinstance(value, dict):
        return {k: to_terraform(v) for k, v in sorted(value.items())}
    return value


P = TypeVar("P")


class Resource(TerraformResource, Generic[P]):
    """Base of every typed resource: subclasses set TYPE and PROVIDER and take a props dataclass."""

    TYPE: ClassVar[str]
    PROVIDER: ClassVar[str]  # "aws" | "awscc"

    def __init__(
        self,
        scope: Construct,
        id_: str,
        props: P,
        *,
        depends_on: Sequence[TerraformResource] | None = None,
        lifecycle: TerraformResourceLifecycle | None = None,
    ) -> None:
        super().__init__(
            scope,
            id_,
            terraform_resource_type=self.TYPE,
            terraform_generator_metadata=GeneratorMetadata(provider_name=self.PROVIDER),
            depends_on=list(depends_on) if depends_on else None,
            lifecycle=lifecycle,
        )
        self.props = props

    # The engine's synthesis asks this protected method for a resource's attributes; an override of the
    # public `synthesize_attributes` would be ignored.
    def _synthesize_attributes(self) -> dict[str, Any]:
        return to_terraform(self.props)

    def attr(self, name: str) -> str:
        """A Terraform reference token to one of this resource's attributes (e.g. `arn`)."""
        return self.get_string_attribute(name)

    @property
    def arn(self) -> str:
        return self.attr("arn")
