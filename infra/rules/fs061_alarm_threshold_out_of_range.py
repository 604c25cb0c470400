"""Alarm thresholds must be values the alarm's metric can reach.

- `gpu_memory_percent` is a percentage per GPU: above 0 and at most 100.
- `model_latency_ms` must be above 0 and at most 60000: SageMaker gives a model container 60 seconds to
  answer an `InvokeEndpoint` request, so an average `ModelLatency` above that never happens and the alarm
  could never fire.
- `errors_5xx` must be at least 1: the alarm fires at or above the threshold, so 0 would fire every period.

A threshold the metric cannot reach makes a billed alarm that can never fire (or always fires), and
hides the problem it was meant to catch. Only checked when the endpoint's alarms are enabled.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/API_runtime_InvokeEndpoint.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.limits import MAX_MODEL_LATENCY_MS
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import fmt_num

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
    alarms: {gpu_memory_percent: 250}
"""


@stack_rule(
    "FS061",
    "alarm-threshold-out-of-range",
    Severity.ERROR,
    "An alarm threshold is outside the range its metric can reach.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        a, path = ep.alarms, ep.path
        if not a.enabled:
            continue
        if not 0 < a.gpu_memory_percent <= 100:
            yield Hit(
                f"{path}.alarms.gpu_memory_percent",
                f"gpu_memory_percent is {fmt_num(a.gpu_memory_percent)}: it is a percentage of one GPU's memory, "
                "so only values above 0 and up to 100 can be reached.",
                "set gpu_memory_percent between 1 and 100 (the default 97 suits vLLM-based containers)",
            )
        if not 0 < a.model_latency_ms <= MAX_MODEL_LATENCY_MS:
            yield Hit(
                f"{path}.alarms.model_latency_ms",
                f"model_latency_ms is {fmt_num(a.model_latency_ms)}: SageMaker gives a model {MAX_MODEL_LATENCY_MS // 1000} s "
                "to answer, so the average ModelLatency lies above 0 and at most "
                f"{MAX_MODEL_LATENCY_MS} ms, and this alarm could never behave as configured.",
                f"set model_latency_ms between 1 and {MAX_MODEL_LATENCY_MS}",
            )
        if a.errors_5xx < 1:
            yield Hit(
                f"{path}.alarms.errors_5xx",
                f"errors_5xx is {a.errors_5xx}: the alarm fires at or above this count, so it would fire every "
                "period, errors or not.",
                "set errors_5xx to 1 or more",
            )
