"""The Terraform providers of a fastscale stack, with their version constraints.

- hashicorp/aws (default `~> 6.25`): every stack.
- hashicorp/awscc (default `>= 1.106.0, < 2.0`): only stacks with awscc resources (inference components,
  endpoint configurations with a metrics configuration); a stack without them does not require it, so it
  initializes where only the aws provider can be installed (an internal mirror, an emulator test).

The constraints come from the config (`providers`), checked by rule FS071 against the oldest release each
synthesized attribute needs (infra/base/provider_versions.py).

With `endpoint_url` (an AWS emulator), the aws provider's endpoints for every service the stack uses point
there, the checks that need real AWS (credential validation, account id lookup, instance metadata) are
skipped, and the provider is given the dummy credentials `testing`/`testing` itself (static credentials come
first in its chain), unless the command line said `--send-credentials-to-endpoint-url`. So a stack run by
another tool (`cdktf deploy`, plain `terraform`) in an environment holding real credentials still sends
only the dummy ones to the emulator; `fastscale plan`/`deploy` also give Terraform no credentials of the
environment (infra.base.credentials), and point it at the emulator through `AWS_ENDPOINT_URL` instead of the
`endpoints` block, which their run directory's copy leaves out (infra.terraform.workdir).

No `default_tags` on the aws provider: every resource carries its tags explicitly, so the synthesized JSON
(and its snapshots) shows exactly what each resource gets, and awscc resources, which have no provider-level
tags, are tagged the same way as aws ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastscale.infra.base.credentials import DUMMY_ACCESS_KEY_ID, DUMMY_SECRET_ACCESS_KEY
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.stacks.resources.base import ProviderBlock, StackContent, engine_literal, to_terraform

AWS_SOURCE = "hashicorp/aws"
AWSCC_SOURCE = "hashicorp/awscc"

#: The aws provider's `endpoints` keys of every service a stack (and Terraform's own checks) call.
EMULATED_SERVICES = ("applicationautoscaling", "cloudwatch", "iam", "s3", "sagemaker", "sts")


@dataclass(frozen=True, kw_only=True)
class ProviderProps:
    region: str


@dataclass(frozen=True, kw_only=True)
class EmulatedAwsProviderProps(ProviderProps):
    """The aws provider pointed at an emulator: every service's endpoint, and no real-AWS-only checks."""

    endpoints: list[dict[str, str]]
    #: The dummy credentials, or None (left out) when the command line sends the real ones.
    access_key: str | None = None
    secret_key: str | None = None
    skip_credentials_validation: bool = True
    skip_requesting_account_id: bool = True
    skip_metadata_api_check: str = "true"  # a string in the provider's schema (it also accepts "false")
    s3_use_path_style: bool = True
    # An emulator answers at once; an API it lacks should fail in seconds, not after the SDK's 25 retries.
    max_retries: int = 2


def _block(name: str, source: str, props: ProviderProps, version: str) -> ProviderBlock:
    # The engine renders provider settings itself: literals escaped, its token syntax refused.
    return ProviderBlock(name=name, source=source, version=version,
                         settings=engine_literal(to_terraform(props), f"provider {name}"))


def add_providers(content: StackContent, stack: ResolvedStack) -> None:
    """The providers the stack needs, in the config's region, with the config's version constraints."""
    props: ProviderProps = ProviderProps(region=stack.region)
    if stack.endpoint_url:
        dummy = not stack.sends_credentials_to_endpoint
        props = EmulatedAwsProviderProps(region=stack.region,
                                         endpoints=[{s: stack.endpoint_url for s in EMULATED_SERVICES}],
                                         access_key=DUMMY_ACCESS_KEY_ID if dummy else None,
                                         secret_key=DUMMY_SECRET_ACCESS_KEY if dummy else None)
    content.providers.append(_block("aws", AWS_SOURCE, props, stack.aws_provider))
    if stack.needs_awscc:
        content.providers.append(_block("awscc", AWSCC_SOURCE, ProviderProps(region=stack.region),
                                        stack.awscc_provider))
