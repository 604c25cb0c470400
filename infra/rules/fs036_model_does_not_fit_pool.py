"""The model must fit the accelerator memory of every fallback instance type.

FS007's check, repeated for each `capacity.fallback` pool with what runs there: the pool's `model` or
component override when it has one (a quantized build, more devices per copy), the endpoint's otherwise.
A model that fits the first choice but not a fallback loads on the first and fails its health check on
the fallback, so the fallback adds instances that never serve.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import fmt_num
from fastscale.infra.rules._stack import fallback_pools, memory_fit

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6e.2xlarge
    capacity:
      fallback:
        - {instance_type: ml.g6.2xlarge}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      model_size_gb: 32
"""


@stack_rule(
    "FS036",
    "model-does-not-fit-pool",
    Severity.ERROR,
    "model_size_gb exceeds the accelerator memory available on a fallback instance type.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, ep, pool in fallback_pools(stack):
        for workload in ep.workloads:
            effective = ep.on_pool(workload, pool)
            fit = memory_fit(effective, pool.instance_type)
            if fit is None or fit.share <= 1.0 or fit.devices == 0:
                continue  # devices 0: FS007 / FS037 report the missing reservation
            is_component = workload.is_component
            key = f"components.{workload.key}" if is_component else "model"
            yield Hit(
                f"{path}.{key}",
                f"{workload.path} needs {fit.weights_gib:.1f} GiB for {fmt_num(effective.model_size_gb or 0)} GB of weights but gets "
                f"{fmt_num(fit.available_gib)} GiB on {pool.instance_type} ({fit.devices} x "
                f"{fmt_num(fit.per_device_gib)} GiB {fit.accelerator_name}): instances of this pool could not load it.",
                f"override it for this type: {key}: {{resources: {{accelerators: {fit.devices_needed()}}}}}"
                if is_component and fit.devices_needed() <= fit.instance_devices
                else f"override {key} for this type with a smaller / quantized model (model_data, model_size_gb), "
                "or fall back to a type with more accelerator memory",
            )
