"""The two Terraform providers of a fastscale stack, pinned.

- hashicorp/aws `~> 6.25`: an endpoint configuration without `model_name` and with `execution_role_arn`
  (inference-component endpoints) needs the 6.2x line.
- hashicorp/awscc `>= 1.106.0`: the first release whose inference component has `data_cache_config`.

No `default_tags` on the aws provider: every resource carries its tags explicitly, so the synthesized JSON
(and its snapshots) shows exactly what each resource gets, and awscc resources, which have no provider-level
tags, are tagged the same way as aws ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fastscale.infra.config import FastscaleConfig
from fastscale.stacks.engine import Construct, GeneratorMetadata, TerraformProvider
from fastscale.stacks.resources.base import to_terraform

AWS_SOURCE = "hashicorp/aws"
AWS_VERSION = "~> 6.25"
AWSCC_SOURCE = "hashicorp/awscc"
AWSCC_VERSION = ">= 1.106.0"


@dataclass(frozen=True, kw_only=True)
class ProviderProps:
    region: str


class Provider(TerraformProvider):
    """A provider block with typed props; the version constraint lands in `required_providers`."""

    NAME: ClassVar[str]
    SOURCE: ClassVar[str]
    VERSION: ClassVar[str]

    def __init__(self, scope: Construct, id_: str, props: ProviderProps) -> None:
        super().__init__(
            scope,
            id_,
            terraform_resource_type=self.NAME,
            terraform_generator_metadata=GeneratorMetadata(
                provider_name=self.NAME, provider_version_constraint=self.VERSION
            ),
            terraform_provider_source=self.SOURCE,
        )
        self.props = props

    def _synthesize_attributes(self) -> dict[str, Any]:
        return to_terraform(self.props)


class AwsProvider(Provider):
    NAME = "aws"
    SOURCE = AWS_SOURCE
    VERSION = AWS_VERSION


class AwsccProvider(Provider):
    NAME = "awscc"
    SOURCE = AWSCC_SOURCE
    VERSION = AWSCC_VERSION


def add_providers(scope: Construct, config: FastscaleConfig) -> tuple[AwsProvider, AwsccProvider]:
    """Both providers, in the config's region."""
    props = ProviderProps(region=config.region)
    return AwsProvider(scope, "aws", props), AwsccProvider(scope, "awscc", props)
