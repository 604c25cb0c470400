"""Every alarm an update rolls back on must be an alarm this stack creates.

`rollback_alarms` names alarm kinds (`5xx-errors`, `model-latency`, `gpu-memory`, `stuck-at-zero`) or full
alarm names. SageMaker rolls an update back only on alarms that exist; one the stack does not create (a
GPU-memory alarm on an Inferentia endpoint, which publishes no GPU metrics; a stuck-at-zero alarm of a
component that does not scale to zero; the operational alarms of an endpoint with `alarms.enabled` false;
a typo) would leave the update unguarded, or fail it. An alarm of another stack is refused as well: its
owner may delete or change it at any time.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeploymentConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.model.deployment import STUCK_AT_ZERO_KIND
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.model.update_settings import COMPONENT_ROLLBACK_KINDS
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: rerank
    instance_type: ml.inf2.8xlarge
    deployment:
      rollback_alarms: [5xx-errors, gpu-memory]
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule(
    "FS047",
    "rollback-alarm-not-in-stack",
    Severity.ERROR,
    "An alarm named for automatic rollback is not one this stack creates.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    kinds = sorted({*COMPONENT_ROLLBACK_KINDS, *_health_alarm_kinds(stack)})
    for r in stack.configured_rollouts:
        for index, ref in r.unresolved:
            yield Hit(
                f"{r.alarms_path}[{index}]",
                f"the update of {r.target} rolls back on '{ref}', which this stack does not create for it: "
                "SageMaker would watch an alarm that does not exist (or another stack's).",
                f"use an alarm kind ({', '.join(kinds)}) the endpoint has, or the name of one of this stack's "
                "alarms; enable `alarms` for the operational ones",
            )


def _health_alarm_kinds(stack: ResolvedStack) -> Iterator[str]:
    """The kinds of every health alarm the stack creates: the endpoints', the components' own and their
    stuck-at-zero alarms."""
    for ep in stack.endpoints:
        yield from ep.alarms.names
        for c in ep.components:
            yield from c.alarms
            if c.stuck_at_zero_alarm:
                yield STUCK_AT_ZERO_KIND
