"""With high-resolution auto scaling, `metrics_publish_frequency` should be 10 (or unset).

fastscale scales on the concurrency metrics (`ConcurrentRequestsPerModel`, `ConcurrentRequestsPerCopy`), which
AWS introduced as sub-minute metrics for the high-resolution target-tracking types (AWS Machine Learning Blog,
"Amazon SageMaker inference launches faster auto scaling for generative AI models", July 2024) and whose
datapoints come every 10 seconds (SageMaker AI developer guide, "Define a scaling policy").
`metrics_publish_frequency` is MetricsConfig.MetricPublishFrequencyInSeconds, and what it paces is what the
SageMaker API reference says (MetricsConfig):

- `enhanced_metrics: false` (the default): the **utilization** metrics (CPU, memory, GPU, GPU memory, disk);
  **invocation** metrics (`Invocations`, `ModelLatency`, `Invocation5XXErrors` ...) stay at 60 seconds;
- `enhanced_metrics: true`: utilization **and** invocation metrics;
- detailed observability on (`detailed_observability`): also its per-GPU, per-instance and container metrics.

The concurrency metrics are in none of these lists, and AWS does not document whether the frequency changes
them; so an explicit frequency above 10 s on an endpoint that scales on them risks scaling and alarms seeing
fewer datapoints than the ~30 s reaction assumes. Only set values that are valid are checked here (FS021
reports the others). docs/metrics.md has the whole picture.

AWS sources: https://aws.amazon.com/blogs/machine-learning/amazon-sagemaker-inference-launches-faster-auto-scaling-for-generative-ai-models/, https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-add-code-define.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_MetricsConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import VALID_FREQUENCIES

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


@stack_rule(
    "FS022",
    "slow-metrics-publish-frequency",
    Severity.WARNING,
    "metrics_publish_frequency is above 10 s while auto scaling uses 10-second metrics.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        f = ep.metrics.publish_frequency
        if f is None or f == 10 or f not in VALID_FREQUENCIES:
            continue
        high_res = [
            f"component '{w.key}'" if w.is_component else "the model"
            for w in ep.workloads
            if w.scaling.enabled and w.scaling.metric_setting == "high_resolution"
        ]
        if not high_res:
            continue
        paced = "utilization and invocation metrics" if ep.metrics.enhanced else (
            "utilization metrics (invocation metrics stay at 60 s without enhanced_metrics)")
        yield Hit(
            f"{ep.path}.metrics_publish_frequency",
            f"{paced} are published every {f} s, and auto scaling of {', '.join(high_res)} uses the "
            "high-resolution concurrency metrics; AWS does not document whether the frequency slows those too, "
            "which would delay the datapoints scaling reacts to and lose the ~30 s scale-out detection.",
            "set metrics_publish_frequency: 10, or remove it",
        )
