"""Scale-in policy values must be within the API's limits.

`scale_in` becomes managed instance scaling's ScaleInPolicy: `cooldown_minutes` is CooldownInMinutes
(5 to 1440) and `max_step` is MaximumStepSize (1 to 100). Values outside make the endpoint
configuration fail to create.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra import capacity
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.12xlarge
    scale_in: {strategy: IDLE_RELEASE, cooldown_minutes: 1}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
"""

_LIMITS = {
    "cooldown_minutes": ("CooldownInMinutes", capacity.SCALE_IN_COOLDOWN_MIN, capacity.SCALE_IN_COOLDOWN_MAX),
    "max_step": ("MaximumStepSize", capacity.SCALE_IN_STEP_MIN, capacity.SCALE_IN_STEP_MAX),
}


@rule("FS042", "scale-in-policy-out-of-range", Severity.ERROR, "A scale_in value is outside the API's limits.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        if ep.scale_in is None:
            continue
        for key, (api_name, lo, hi) in _LIMITS.items():
            value = getattr(ep.scale_in, key)
            if value is None or lo <= value <= hi:
                continue
            yield Hit(
                f"{path}.scale_in.{key}",
                f"{key} is {value}: SageMaker accepts {lo} to {hi} for ScaleInPolicy.{api_name}, so creating the "
                "endpoint configuration would fail.",
                f"set {key}: {min(max(value, lo), hi)}",
            )
