"""A KMS key cannot be set for an instance type with local NVMe storage.

`kms_key_arn` encrypts the EBS ML storage volume. Instance types with local NVMe instance storage (such
as ml.g5, ml.g6, ml.g6e, ml.p4d, ml.p5) have no such volume: their local storage is encrypted by the
instance hardware, and CreateEndpointConfig refuses a KMS key for them. Instance types that are not in
the accelerator catalog are not checked.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import fmt_num

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    kms_key_arn: arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule("FS019", "kms-on-local-nvme", Severity.ERROR, "kms_key_arn is set on an instance type with local NVMe storage.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        if not ep.kms_key_arn:
            continue
        spec = catalog.get(ep.instance_type)
        if spec is None or not spec.local_nvme:
            continue
        size = f" ({fmt_num(spec.nvme_gb)} GB)" if spec.nvme_gb else ""
        yield Hit(
            f"{ep.path}.kms_key_arn",
            f"{ep.instance_type} has local NVMe instance storage{size}, which the instance hardware encrypts: "
            "SageMaker refuses a KMS key for such instance types, so creating the endpoint configuration would fail.",
            "remove kms_key_arn (the NVMe storage is already encrypted at rest), or pick an instance type without "
            "local NVMe storage (e.g. ml.inf2.*) if you need your own key",
        )
