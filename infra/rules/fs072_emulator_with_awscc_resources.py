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

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule

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


@rule("FS072", "emulator-with-awscc-resources", Severity.ERROR,
      "An emulator target for a config that needs awscc resources, which would not go to the emulator.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    if config.endpoint_url is None:
        return
    for i, ep in enumerate(config.endpoints):
        if not ep.needs_awscc:
            continue
        if ep.uses_inference_components:
            what, path = "inference components", f"endpoints[{i}].inference_components"
        elif ep.metrics_publish_frequency is not None or ep.enhanced_metrics:
            field = "metrics_publish_frequency" if ep.metrics_publish_frequency is not None else "enhanced_metrics"
            what, path = "a metrics configuration", f"endpoints[{i}].{field}"
        elif ep.routing in ("prefix_aware", "kv_aware"):
            what, path = f"{ep.routing} routing (awscc's endpoint configuration)", f"endpoints[{i}].routing"
        else:
            what, path = "capacity settings (awscc's endpoint configuration)", f"endpoints[{i}].capacity"
            if ep.scale_in is not None and not ep.capacity.model_fields_set:
                path = f"endpoints[{i}].scale_in"
        yield Hit(
            path,
            f"endpoint '{ep.name}' needs {what}, written through the hashicorp/awscc provider, which fastscale "
            f"does not point at the emulator ({config.endpoint_url}): those resources would go to real AWS",
            "test a single-model endpoint without metrics_publish_frequency and enhanced_metrics against the emulator, or remove "
            "endpoint_url to deploy to a real account",
        )
