"""The model's weights must fit in the accelerator memory available to it.

Available memory is the component's reservation (`resources.accelerators` x memory per device) for an
inference component, and every accelerator of the instance for a single-model endpoint. `model_size_gb`
is read (fastscale's choice) as decimal GB (10^9 bytes, as model hubs and S3 report sizes) and compared in GiB with the device
memory. Weights larger than that memory cannot load: the container fails its health check and the
deploy or scale-out fails. A component that reserves no accelerator device gets no accelerator memory.

Weights that fit but take more than 90% of the memory are FS008's (a warning).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import WEIGHTS_MAX_SHARE, fmt_amount, fmt_num
from fastscale.infra.rules._stack import MemoryFit, memory_fit, workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      model_size_gb: 64
"""


@stack_rule(
    "FS007",
    "model-does-not-fit",
    Severity.ERROR,
    "model_size_gb exceeds the accelerator memory available to the model.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, ep, workload in workloads(stack):
        fit = memory_fit(workload, ep.instance_type)
        if fit is None or fit.share <= 1.0:
            continue
        weights = f"{fmt_num(cast(float, workload.model_size_gb))} GB ({fmt_amount(fit.weights_gib)} GiB)"
        is_component = workload.is_component
        if is_component and fit.devices == 0:
            yield Hit(
                f"{path}.resources.accelerators",
                f"the component reserves no accelerator device (resources.accelerators is not set), so its "
                f"{weights} of weights get no accelerator memory on {ep.instance_type}.",
                _devices_hint(fit, ep.instance_type),
            )
            continue
        devices = f"{fit.devices} x {fmt_num(fit.per_device_gib)} GiB {fit.accelerator_name}"
        if is_component:
            where = f"the {fmt_num(fit.available_gib)} GiB reserved per copy ({devices})"
        elif fit.devices == 1:
            where = f"the {fmt_num(fit.available_gib)} GiB {fit.accelerator_name} of {ep.instance_type}"
        else:
            where = f"the {fmt_num(fit.available_gib)} GiB of all accelerators of {ep.instance_type} ({devices})"
        yield Hit(
            f"{path}.model_size_gb",
            f"{weights} of weights exceed {where}: the model cannot load, so the container fails its health check.",
            _devices_hint(fit, ep.instance_type) if is_component else fit.bigger_instance_hint(),
        )


def _devices_hint(fit: MemoryFit, instance_type: str) -> str:
    need = fit.devices_needed()
    if need <= fit.instance_devices:
        return f"set resources.accelerators: {need} (weights then leave >= {100 - WEIGHTS_MAX_SHARE * 100:.0f}% for the KV cache)"
    if need > 10 * fit.instance_devices:
        return f"far more {fmt_num(fit.per_device_gib)} GiB devices would be needed than the {fit.instance_devices} of {instance_type}: " + fit.bigger_instance_hint()
    return f"{need} x {fmt_num(fit.per_device_gib)} GiB devices would be needed but {instance_type} has {fit.instance_devices}: " + fit.bigger_instance_hint()
