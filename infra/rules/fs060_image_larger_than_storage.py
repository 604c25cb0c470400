"""A container image must fit on the storage of the instance that pulls it.

`image_size_gb` (used by `fastscale estimate`) is the compressed size of the image. Every instance pulls
the image onto its own storage: at most the larger of its local NVMe instance store and the largest ML
storage volume SageMaker attaches (512 GB, `VolumeSizeInGB`'s maximum in the SageMaker API). An image larger than
that can never be pulled, and an estimate built on it would be meaningless, so it is an error rather
than a slow start. The unpacked image is larger still, so passing this check is necessary, not sufficient.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import catalog
from fastscale.infra.base.limits import MAX_VOLUME_GB
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import fmt_num
from fastscale.infra.rules._stack import workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      image_size_gb: 1e300
"""



def instance_storage_gb(instance_type: str) -> float | None:
    """Storage an instance of this type pulls images onto; None for types not in the accelerator catalog."""
    spec = catalog.get(instance_type)
    if spec is None:
        return None
    return max(spec.nvme_gb, MAX_VOLUME_GB)


@stack_rule(
    "FS060",
    "image-larger-than-instance-storage",
    Severity.ERROR,
    "image_size_gb is larger than the storage of the instance that must pull the image.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    largest = max((instance_storage_gb(s.instance_type) or 0 for s in catalog.all_instances()), default=MAX_VOLUME_GB)
    for path, ep, workload in workloads(stack):
        size = workload.image_size_gb
        if size is None:
            continue
        storage = instance_storage_gb(ep.instance_type)
        limit, on = (storage, ep.instance_type) if storage is not None else (largest, "any SageMaker instance")
        if size <= limit:
            continue
        yield Hit(
            f"{path}.image_size_gb",
            f"image_size_gb is {fmt_num(size)} GB but {on} has {fmt_num(limit)} GB of storage to pull it onto: "
            "the image could never be pulled.",
            "set image_size_gb to the compressed size ECR reports for the image "
            "(aws ecr describe-images ... imageSizeInBytes / 1e9), or slim the image",
        )
