"""A provider version constraint must not admit a release that lacks an attribute the stack writes.

`providers.aws` / `providers.awscc` let a project follow the provider versions it can install (an internal
mirror, a pinned platform). When the constraint admits a release older than one an attribute needs,
Terraform may pick it, and `plan` fails with "Unsupported argument" — or the feature is silently missing.
The finding names the attribute, the release that introduced it, and an older release the constraint admits.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.provider_versions import (
    Constraint,
    ConstraintError,
    aws_needs,
    awscc_needs,
    format_version,
    too_old,
)
from fastscale.infra.rules import Hit, Severity, rule

EXAMPLE = """\
project: demo
region: us-east-1
providers: {aws: ">= 5.0"}
endpoints:
  - name: chat
    instance_type: ml.g6.12xlarge
    inference_components:
      - name: llm
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
"""


@rule("FS071", "provider-version-too-old", Severity.ERROR,
      "A provider version constraint admits a release that lacks an attribute the stack writes.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    checks = [("aws", config.providers.aws, aws_needs(config))]
    if any(ep.needs_awscc for ep in config.endpoints):
        checks.append(("awscc", config.providers.awscc, awscc_needs(config)))
    for name, text, needs in checks:
        try:
            constraint = Constraint.parse(text)
        except ConstraintError:  # the schema already reported it
            continue
        for need, older in too_old(constraint, needs):
            yield Hit(
                f"providers.{name}",
                f"'{text}' admits hashicorp/{name} {format_version(older)}, but {need.version} or newer is "
                f"required for {need.attribute} ({need.why})",
                f"raise the lower bound, e.g. providers.{name}: \">= {need.version}\"",
            )
