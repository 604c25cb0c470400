"""Scale-in policy values must be within the API's limits.

`scale_in` becomes managed instance scaling's ScaleInPolicy: `cooldown_minutes` is CooldownInMinutes
(5 to 1440) and `max_step` is MaximumStepSize (1 to 100). Values outside make the endpoint
configuration fail to create.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariantManagedInstanceScalingScaleInPolicy.html.
"""

from __future__ import annotations

from fastscale.infra.model import capacity
from fastscale.infra.rules import Severity
from fastscale.infra.rules._bounds import Bound, Cases, bounded_rule

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

#: The EXAMPLE at and past each limit (tests/rules/test_bounded_rules.py).
CASES = (
    Cases("cooldown_minutes: 1", "cooldown_minutes: {}", passing=(5, 6, 1439, 1440),
          failing={4: "set cooldown_minutes: 5", 1441: "set cooldown_minutes: 1440", -1: "set cooldown_minutes: 5"}),
    Cases("cooldown_minutes: 1", "cooldown_minutes: 5, max_step: {}", passing=(1, 2, 99, 100),
          failing={0: "set max_step: 1", 101: "set max_step: 100"}),
)

_FAILS = "creating the endpoint configuration would fail"

check = bounded_rule(
    "FS042", "scale-in-policy-out-of-range", Severity.ERROR, "A scale_in value is outside the API's limits.",
    module=__name__,
    stack_holders=lambda stack: ((f"{ep.path}.scale_in", ep.scale_in) for ep in stack.endpoints),
    bounds=[
        Bound("cooldown_minutes", "ScaleInPolicy.CooldownInMinutes", capacity.SCALE_IN_COOLDOWN_MIN,
              capacity.SCALE_IN_COOLDOWN_MAX, _FAILS),
        Bound("max_step", "ScaleInPolicy.MaximumStepSize", capacity.SCALE_IN_STEP_MIN, capacity.SCALE_IN_STEP_MAX, _FAILS),
    ],
)
