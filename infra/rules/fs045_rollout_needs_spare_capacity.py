"""A rolling batch the file chose needs room beside the old copies at the component's maximum.

A component's rolling update starts a batch of new copies, moves traffic to them and only then stops as
many old copies. The batch needs free accelerators (and memory, CPUs) while the old copies still run: on
the instances there are, or on new ones that managed instance scaling adds, up to `instances.max`. When
the component runs at `copies.max` (the other components at their `copies.min`) and `instances.max`
leaves no room for one more batch, an update at peak load waits for scale-out that can never come: it
stalls until traffic drops or the update times out and rolls back.

The rule only checks a batch the file sets (`deployment.components.batch`, or a component's
`deployment.rolling.batch`). fastscale's default batch is one copy, the smallest the API accepts: no
other rollout needs less room, so a default endpoint filled to `instances.max` is the user's capacity
choice, not a rollout risk fastscale could avoid, and the rule stays quiet on it (docs/updates.md says
what an update at full capacity does).

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentDeploymentConfig.html.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import fmt_num
from fastscale.infra.rules._stack import component_rollouts, shared_resources

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: shared
    instance_type: ml.g6.2xlarge
    instances: {initial: 1, min: 1, max: 2}
    inference_components:
      - name: llama
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
        resources: {accelerators: 1, memory_mb: 16384}
        copies: {initial: 1, min: 1, max: 2}
        deployment:
          rolling: {batch: {type: COPY_COUNT, value: 1}}
"""


PERCENT = 100


@stack_rule(
    "FS045",
    "rollout-needs-spare-capacity",
    Severity.WARNING,
    "At its maximum copies a component's chosen rolling batch has no room beside the old copies.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep, j, comp, update in component_rollouts(stack):
        if not update.batch_chosen or update.rolling is None:
            continue  # fastscale's default: one copy, the smallest batch there is
        step = update.rolling.batch
        batch = step.value if step.type == "COPY_COUNT" else math.ceil(step.value * comp.copies.max / PERCENT)
        for res in shared_resources(ep):  # none for unknown types and impossible capacities: other rules' findings
            need = res.per_copy[j]
            if need <= 0:
                continue
            demand = res.demand([comp.copies.max + batch if o is comp else o.copies.min for o in ep.components])
            if demand <= res.available:
                continue
            yield Hit(
                f"{update.settings_path}.batch",
                f"an update of {comp.key} at {comp.copies.max} copies starts {batch} more "
                f"({fmt_num(need)} {res.unit} each) before it stops old ones: {fmt_num(demand)} {res.unit} with the "
                f"other components at their minimum, but {ep.instances.max} x {ep.instance_type} have "
                f"{fmt_num(res.available)}. At peak the update waits for a scale-out instances.max forbids, and "
                "times out or rolls back.",
                f"set instances.max: {res.instances_for(demand)} (room for one batch), or lower copies.max of "
                f"{comp.key}" + (", or a batch of one copy" if batch > 1 else ""),
            )
            break  # one finding per component: the first resource that runs out names the problem
