"""With high-resolution auto scaling, `metrics_publish_frequency` should be 10 (or unset).

fastscale scales on the high-resolution concurrency metrics (`ConcurrentRequestsPerModel`,
`ConcurrentRequestsPerCopy`), which SageMaker publishes every 10 seconds for auto scaling.
`metrics_publish_frequency` is MetricsConfig.MetricPublishFrequencyInSeconds, and what it paces depends on
`enhanced_metrics` (MetricsConfig.EnableEnhancedMetrics), as the SageMaker API reference says:

- `enhanced_metrics: false` (the default): the frequency applies to **utilization** metrics only (CPU, memory,
  GPU, GPU memory, disk); **invocation** metrics (`Invocations`, `ModelLatency`, `Invocation5XXErrors` ...)
  stay at 60 seconds;
- `enhanced_metrics: true`: the frequency applies to utilization **and** invocation metrics.

An explicit frequency above 10 s slows those metrics down, and AWS does not document whether the
high-resolution concurrency metrics are exempt, so a slower frequency risks scaling and alarms seeing fewer
datapoints than the ~30 s reaction assumes. Only set values that are valid are checked here (FS021 reports
the others).
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import VALID_FREQUENCIES, endpoints

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    metrics_publish_frequency: 60
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      autoscaling: {metric: high_resolution}
"""


@rule(
    "FS022",
    "slow-metrics-publish-frequency",
    Severity.WARNING,
    "metrics_publish_frequency is above 10 s while auto scaling uses 10-second metrics.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        f = ep.metrics_publish_frequency
        if f is None or f == 10 or f not in VALID_FREQUENCIES:
            continue
        high_res = [
            f"component '{w.name}'" if hasattr(w, "name") else "the model"
            for _sub, w in ep.workloads()
            if w.autoscaling.enabled and w.autoscaling.metric == "high_resolution"
        ]
        if not high_res:
            continue
        paced = "utilization and invocation metrics" if ep.enhanced_metrics else (
            "utilization metrics (invocation metrics stay at 60 s without enhanced_metrics)")
        yield Hit(
            f"{path}.metrics_publish_frequency",
            f"{paced} are published every {f} s, but auto scaling of {', '.join(high_res)} uses 10-second "
            "high-resolution metrics: a slower publish frequency can delay the datapoints scaling and alarms react to, losing "
            "the ~30 s scale-out detection.",
            "set metrics_publish_frequency: 10, or remove it",
        )
