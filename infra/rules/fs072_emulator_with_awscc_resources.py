"""An emulator target only covers the resources of the hashicorp/aws provider.

fastscale points the aws provider and its own boto3 calls at `endpoint_url`. Inference components and
endpoint configurations with a metrics configuration, capacity settings or prefix/KV-aware routing are
hashicorp/awscc resources, which go through the
AWS Cloud Control API; fastscale does not redirect that provider, so with an emulator target those
resources would be created in whatever real account the credentials reach. Such a config is refused
instead: test single-model endpoints without those settings against an emulator.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoint_url: http://localhost:4566
endpoints:
  - name: chat
    instance_type: ml.g6.12xlarge
    inference_components:
      - name: llm
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
"""


@stack_rule("FS072", "emulator-with-awscc-resources", Severity.ERROR,
            "An emulator target for a config that needs awscc resources, which would not go to the emulator.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    if stack.endpoint_url is None:
        return
    for ep in stack.endpoints:
        if not ep.needs_awscc:
            continue
        if ep.uses_components:
            what, path = "inference components", f"{ep.path}.inference_components"
        else:
            setting, why = ep.awscc_reasons[0]
            what, path = f"awscc's endpoint configuration ({why})", f"{ep.path}.{setting}"
        yield Hit(
            path,
            f"endpoint '{ep.key}' needs {what}, written through the hashicorp/awscc provider, which fastscale "
            f"does not point at the emulator ({stack.endpoint_url}): those resources would go to real AWS",
            "test a single-model endpoint whose configuration is hashicorp/aws's (no metrics, capacity, scale-in or "
            "prefix/KV-aware routing settings) against the emulator, or remove endpoint_url to deploy to a real account",
        )
