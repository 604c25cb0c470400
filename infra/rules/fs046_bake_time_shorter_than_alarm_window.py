"""The bake time must cover the rollback alarms' evaluation window.

SageMaker watches the rollback alarms only while a step bakes (`WaitIntervalInSeconds`); once the bake
time is over, the step is accepted and the update goes on. An alarm fires only after `evaluation_periods`
datapoints of `period` seconds breached: with a bake time shorter than that window, a bad version is
accepted before its alarm can fire, and automatic rollback never happens. The default bake time is the
longest window plus one period; this flags a shorter one set by hand, and a window longer than the API's
longest bake time (3600 s).

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeploymentConfig.html, https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_TrafficRoutingConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.aws_facts import BAKE_TIME_MAX_S
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    alarms: {period: 60, evaluation_periods: 5}
    deployment:
      blue_green: {bake_time: 120}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@stack_rule(
    "FS046",
    "bake-time-shorter-than-alarm-window",
    Severity.WARNING,
    "An update bakes for less time than its rollback alarms need to fire.",
)
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for r in stack.configured_rollouts:
        window = r.alarm_window
        if not r.alarms or r.bake_time >= window:
            continue
        slowest = max(r.alarms, key=lambda a: a.window)
        what = f"the update of {r.target} bakes {r.bake_time} s per step, but {slowest.name} fires only after " \
               f"{slowest.evaluation_periods} x {slowest.period} s = {window} s of bad data: a bad version is " \
               "accepted before its rollback alarm can fire."
        if r.bake_time_set:
            yield Hit(f"{r.settings_path}.bake_time", what, f"set bake_time: {min(window + slowest.period, BAKE_TIME_MAX_S)} "
                      "(the window plus one period), or leave it unset")
        else:
            yield Hit(r.alarms_path, what + f" The API allows at most {BAKE_TIME_MAX_S} s of bake time.",
                      f"shorten the alarms' window (period x evaluation_periods) to under {BAKE_TIME_MAX_S} s")
