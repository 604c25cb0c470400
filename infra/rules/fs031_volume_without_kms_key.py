"""An instance type with an EBS ML storage volume should encrypt it with a customer managed KMS key.

Instance types without local NVMe storage (ml.inf1, ml.inf2, ml.p2, ml.p3) keep the container image, the
model weights and the data cache on an EBS volume that SageMaker attaches to each instance. Without
`kms_key_arn` the volume is not encrypted with a key of yours, so its use cannot be restricted, audited per
use or revoked by you. With a key, the stack grants the execution role its use. Instance types with local NVMe storage are
left out: their storage is encrypted by the hardware and SageMaker refuses a key for them (FS019). This is
the check that checkov's CKV_AWS_98 makes without knowing the instance type, which is why fastscale's
checkov settings skip that one.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateEndpointConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.inf2.8xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule("FS031", "volume-without-kms-key", Severity.WARNING,
            "An instance type with an EBS ML storage volume has no customer managed KMS key.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        if ep.kms_key_arn:
            continue
        spec = catalog.get(ep.instance_type)
        if spec is None or spec.local_nvme:
            continue
        yield Hit(
            f"{ep.path}.kms_key_arn",
            f"{ep.instance_type} keeps the image, the weights and the data cache on an EBS ML storage volume, "
            "encrypted only with the AWS managed key when kms_key_arn is not set: its use cannot be restricted, "
            "audited per key or revoked.",
            f"set kms_key_arn to a customer managed KMS key in {stack.region} (the execution role is granted "
            "its use)",
        )
