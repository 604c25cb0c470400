"""A provider version constraint must not admit a release that lacks an attribute the stack writes.

`providers.aws` / `providers.awscc` let a project follow the provider versions it can install (an internal
mirror, a pinned platform). When the constraint admits a release older than one an attribute needs,
Terraform may pick it, and `plan` fails with "Unsupported argument" — or the feature is silently missing.
The finding names the attribute, the release that introduced it, and an older release the constraint admits.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.provider_versions import (
    AWS_FLOOR,
    AWSCC_FLOOR,
    Constraint,
    ConstraintError,
    Need,
    format_version,
    too_old,
)
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

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


def aws_needs(stack: ResolvedStack) -> list[Need]:
    """What the aws resources of this config need beyond AWS_FLOOR."""
    needs = [Need("every aws resource fastscale writes", AWS_FLOOR,
                  "the oldest hashicorp/aws release fastscale is checked against")]
    for ep in stack.endpoints:
        if ep.uses_components and not ep.awscc_config:
            needs.append(Need("aws_sagemaker_endpoint_configuration.execution_role_arn", "6.21.0",
                              f"{ep.path} hosts inference components (execution role on the endpoint "
                              "configuration, production variant without model_name)"))
    return needs


def awscc_needs() -> list[Need]:
    return [Need("awscc_sagemaker_inference_component.specification.data_cache_config", AWSCC_FLOOR,
                 "every inference component sets data caching explicitly")]


@stack_rule("FS071", "provider-version-too-old", Severity.ERROR,
            "A provider version constraint admits a release that lacks an attribute the stack writes.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    checks = [("aws", stack.aws_provider, aws_needs(stack))]
    if stack.needs_awscc:
        checks.append(("awscc", stack.awscc_provider, awscc_needs()))
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
