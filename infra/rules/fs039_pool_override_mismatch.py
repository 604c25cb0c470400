"""A fallback pool's overrides must match the kind of endpoint and name existing components.

`capacity.fallback[].model` overrides the single model of a single-model endpoint (it becomes the pool's
ModelNameOverride); `components` overrides inference components by name (they become the components'
per-type Specifications). An override for the other kind of endpoint, or for a component name that
does not exist, would silently do nothing.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InstancePool.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import fallback_pools, key_path

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.12xlarge
    capacity:
      fallback:
        - instance_type: ml.g5.12xlarge
          components: {lama: {model_size_gb: 8}}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
"""


@rule(
    "FS039",
    "pool-override-mismatch",
    Severity.ERROR,
    "A fallback pool overrides a component that does not exist, or the wrong kind of workload.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep, pool in fallback_pools(config):
        fb = pool.fallback
        if fb is None:
            continue  # fallback_pools yields fallbacks only
        names = [c.name for c in ep.inference_components]
        if fb.model is not None and ep.model is None:
            yield Hit(
                f"{path}.model",
                "`model` overrides the single model of a single-model endpoint, but this endpoint hosts inference "
                "components: the override would do nothing.",
                "override components by name instead: components: {<component name>: {...}}",
            )
        if fb.components and ep.model is not None:
            yield Hit(
                f"{path}.components",
                "`components` overrides inference components, but this is a single-model endpoint: the override "
                "would do nothing.",
                "use `model: {...}` to change the model on this instance type",
            )
            continue
        for name in fb.components:
            if name not in names:
                yield Hit(
                    key_path(f"{path}.components", name),
                    f"no inference component is named '{name}' on this endpoint (it has: {', '.join(names)}): the "
                    "override would do nothing.",
                    "use one of the component names above",
                )
