"""Prefix-aware routing needs its two settings, within AWS's ranges, and nothing else takes them.

`routing: prefix_aware` is the variant's RoutingStrategy PREFIX_AWARE with a PrefixAwareRoutingConfig
{PrefixLength, ConcurrencyThreshold}; the API requires both with PREFIX_AWARE (PrefixLength 1024-65536,
ConcurrencyThreshold 1-1024) and takes the block only with that strategy (SageMaker API reference,
ProductionVariantRoutingConfig and PrefixAwareRoutingConfig; botocore 1.44.8). `prefix_routing` is
fastscale's name for the block: it is required with `prefix_aware` and refused with any other `routing`.
What each strategy does, and when AWS applies it, is in docs/routing.md.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantRoutingConfig.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_PrefixAwareRoutingConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import aws_facts
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    routing: prefix_aware
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


_RANGES = {
    "prefix_length": (aws_facts.PREFIX_LENGTH_RANGE, "PrefixLength"),
    "concurrency_threshold": (aws_facts.CONCURRENCY_THRESHOLD_RANGE, "ConcurrencyThreshold"),
}


@stack_rule("FS104", "routing-settings", Severity.ERROR,
            "Prefix-aware routing without its prefix_routing settings, settings out of range, or settings without it.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        path, routing = ep.path, ep.routing
        has_prefix = routing.prefix_length is not None  # prefix_routing is set (both its settings are required)
        if routing.setting == "prefix_aware" and not has_prefix:
            yield Hit(
                f"{path}.routing",
                "routing prefix_aware (PREFIX_AWARE) needs PrefixAwareRoutingConfig: SageMaker requires its "
                "PrefixLength and ConcurrencyThreshold with that strategy, so the deploy would fail.",
                "add prefix_routing: {prefix_length: <1024-65536>, concurrency_threshold: <1-1024>} to the endpoint",
            )
        if not has_prefix:
            continue
        if routing.setting != "prefix_aware":
            yield Hit(
                f"{path}.prefix_routing",
                f"prefix_routing only applies with routing prefix_aware; with routing {routing.setting} SageMaker "
                "refuses a PrefixAwareRoutingConfig.",
                "set routing: prefix_aware, or remove prefix_routing",
            )
        for key, ((low, high), api_name) in _RANGES.items():
            value = getattr(routing, key)
            if not low <= value <= high:
                yield Hit(
                    f"{path}.prefix_routing.{key}",
                    f"{key} is {value}: SageMaker accepts {low} to {high} for {api_name}, so the deploy would fail.",
                    f"set {key} between {low} and {high}",
                )
