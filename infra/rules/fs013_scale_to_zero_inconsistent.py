"""Scale to zero must be configured on both levels: instances and every component's copies.

fastscale's precise rule, for an inference-component endpoint:

- `instances.min: 0` requires `copies.min: 0` on **every** component. Instances are released only when no
  copy is left on them, so one component that keeps a copy keeps an instance (and its bill) forever;
  the file would promise a scale to zero that never happens. Reported on that component's `copies.min`.
- When **every** component has `copies.min: 0`, `instances.min` must be 0 too. Otherwise all copies can
  drain away while the endpoint keeps paying for instances that host nothing. Reported on `instances.min`.

Mixing is fine when `instances.min >= 1`: some components at `copies.min: 0` free their accelerators for
the others while at least one component keeps the instances busy.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantManagedInstanceScalingScaleInPolicy.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.12xlarge
    instances: {initial: 1, min: 0, max: 2}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
        copies: {initial: 1, min: 1, max: 2}
"""


@stack_rule(
    "FS013",
    "scale-to-zero-inconsistent",
    Severity.ERROR,
    "instances.min 0 needs copies.min 0 on every component, and all components at copies.min 0 need instances.min 0.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        comps = ep.components
        if not comps:
            continue  # single-model endpoints are FS012's
        if ep.instances.min == 0:
            for c in comps:
                if c.copies.min > 0:
                    kept = f"{c.copies.min} cop{'y' if c.copies.min == 1 else 'ies'}"
                    yield Hit(
                        f"{ep.path}.{c.path}.copies.min",
                        f"instances.min is 0 but component '{c.key}' keeps at least {kept}: an instance is "
                        "released only when no copy is left on it, so the endpoint never scales to zero and keeps "
                        "paying for an instance.",
                        f"set copies.min: 0 on '{c.key}', or set instances.min: 1 if it must stay warm",
                    )
        elif all(c.copies.min == 0 for c in comps):
            yield Hit(
                f"{ep.path}.instances.min",
                f"every component can scale to 0 copies but instances.min is {ep.instances.min}: when all copies "
                f"are gone the endpoint keeps {ep.instances.min} instance(s) that host nothing and still bill.",
                "set instances.min: 0 to release idle instances, or keep one component at copies.min: 1",
            )
