"""Weights should leave at least 10% of the accelerator memory free.

fastscale asks that weights take at most 90% of the accelerator memory available to the model (the same
memory FS007 uses), leaving at least 10% for the KV cache and activations. Between 90% and 100% the model
loads, but the server gets a tiny KV cache (few concurrent sequences, short contexts) or refuses to
start: vLLM, the engine of the LMI container, claims 90% of GPU memory by default and fails when weights
leave no room for cache blocks. Above 100% FS007 reports an error instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import WEIGHTS_MAX_SHARE, fmt_amount, fmt_num
from fastscale.infra.rules._stack import memory_fit, workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      model_size_gb: 24.5
"""


@stack_rule(
    "FS008",
    "model-leaves-little-headroom",
    Severity.WARNING,
    "The weights take more than 90% of the accelerator memory available, leaving little for the KV cache.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, ep, workload in workloads(stack):
        fit = memory_fit(workload, ep.instance_type)
        if fit is None or not (WEIGHTS_MAX_SHARE < fit.share <= 1.0):
            continue
        need = fit.devices_needed()
        if workload.is_component and need <= fit.instance_devices:
            hint = f"set resources.accelerators: {need}, or use a smaller / quantized model"
        else:
            hint = fit.bigger_instance_hint()
        yield Hit(
            f"{path}.model_size_gb",
            f"{fmt_num(cast(float, workload.model_size_gb))} GB of weights ({fmt_amount(fit.weights_gib)} GiB) take {fit.share:.0%} of the "
            f"{fmt_num(fit.available_gib)} GiB of accelerator memory available: less than "
            f"{1 - WEIGHTS_MAX_SHARE:.0%} is left for the KV cache and activations, so the server runs with very few "
            "concurrent requests or fails to start (vLLM reserves 90% of GPU memory by default).",
            hint,
        )
