"""An adopted endpoint configuration cannot be kept when the config makes the configuration awscc's.

`adopted.endpoint_config` keeps the live endpoint configuration under its name, and the next deploy imports it
into the Terraform state. That works for hashicorp/aws's `aws_sagemaker_endpoint_configuration`, which imports
by name. When the endpoint sets anything that makes its configuration awscc's (a metrics configuration,
`detailed_observability`, instance pools, the provision timeout, a capacity reservation, a scale-in policy,
prefix- or KV-aware routing, an AMI or instance type hashicorp/aws's validation does not know), the stack
writes `awscc_sagemaker_endpoint_config` instead: hashicorp/awscc imports it by ARN, not by name, and every
awscc attribute of it is create-only, so the first deploy would fail to import it or replace the live
configuration under its own name. Refused, with what to change.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    metrics_publish_frequency: 10
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
    adopted:
      endpoint: chat-live
      endpoint_config: chat-live-config
"""


@stack_rule("FS112", "adopted-config-made-awscc", Severity.ERROR,
            "adopted.endpoint_config is kept while other settings make the endpoint configuration awscc's.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        kept = ep.endpoint_config  # the adopted live configuration's name
        reasons = ep.awscc_reasons
        if kept is None or not reasons:
            continue
        settings = ", ".join(setting for setting, _ in reasons)
        why = "; ".join(why for _, why in reasons)
        yield Hit(
            f"{ep.path}.adopted.endpoint_config",
            f"the live endpoint configuration {kept} is kept by name, but {settings} make "
            f"this endpoint's configuration awscc's ({why}): hashicorp/awscc imports an endpoint configuration by "
            "ARN, not by name, and every attribute of it is create-only, so the first deploy would fail to import "
            "it or replace it under its own name.",
            f"remove adopted.endpoint_config (the deploy then creates a new configuration and the endpoint switches "
            f"to it, as on any configuration change), or remove {settings} to keep the live configuration",
        )
