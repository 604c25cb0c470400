"""Prefer the high-resolution concurrency metric to the legacy 1-minute invocations metric.

`autoscaling.metric: invocations` tracks InvocationsPerInstance / InvocationsPerCopy, published once a
minute. The default `high_resolution` metrics (ConcurrentRequestsPerModel / ConcurrentRequestsPerCopy)
are AWS's high-resolution metrics: they emit data every 10 seconds (SageMaker AI developer guide, "Define a
scaling policy") and detect the need to scale out up to 6x faster (AWS Machine Learning Blog, "Amazon
SageMaker inference launches faster auto scaling for generative AI models"). fastscale's model
(docs/scale-out-layers.md) has target tracking act on three of those datapoints, about 30 seconds, against
about 3 minutes for the 1-minute metrics. Scale-in is equally slow with both.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/endpoint-auto-scaling-add-code-define.html, https://aws.amazon.com/blogs/machine-learning/amazon-sagemaker-inference-launches-faster-auto-scaling-for-generative-ai-models/.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._stack import autoscaled_workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      autoscaling: {metric: invocations}
"""


@stack_rule(
    "FS025",
    "legacy-invocations-metric",
    Severity.WARNING,
    "Auto scaling uses the 1-minute invocations metric (~3 min to detect a spike instead of ~30 s).",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for path, _ep, workload in autoscaled_workloads(stack):
        if workload.scaling.metric_setting != "invocations":
            continue
        yield Hit(
            f"{path}.autoscaling.metric",
            "the legacy 1-minute invocations metric takes about 3 minutes to detect a traffic spike, against about "
            "30 s for the 10-second concurrency metric: every scale-out starts 2-3 minutes later.",
            "set autoscaling.metric: high_resolution (and retune target_concurrency: it counts concurrent requests, "
            "not invocations per minute)",
        )
