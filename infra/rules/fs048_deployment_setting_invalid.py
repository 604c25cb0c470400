"""Update settings must be ones SageMaker and the providers accept for this kind of endpoint.

The config schema already holds each number to the API's range (bake time and termination wait 0-3600 s,
timeout 600-28800 s, sizes at least 1). What depends on the endpoint is checked here:

- a single-model endpoint updates blue/green *or* rolling (one of `blue_green`, `rolling`); an
  inference-component endpoint updates each component (`components`, or a component's own `deployment`);
- CANARY and LINEAR traffic need a `step`, ALL_AT_ONCE takes none;
- percentages: a canary is at most 50 % of the fleet, a linear step 10-50 %, a rolling batch 5-50 %
  (rollback batches up to 100 %);
- hashicorp/aws accepts an endpoint's `timeout` only up to 14400 s (the API up to 28800 s);
- the timeout must be longer than the waiting it contains (bake time plus termination wait), or the update
  times out by construction.

SageMaker refuses such an update when it is applied, long after `plan` looked fine.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DeploymentConfig.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentDeploymentConfig.html, https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-blue-green-canary.html, https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-blue-green-linear.html, https://docs.aws.amazon.com/sagemaker/latest/dg/deployment-guardrails-rolling.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_TrafficRoutingConfig.html.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

from fastscale.infra.base.aws_facts import ENDPOINT_DEPLOYMENT_TIMEOUT_MAX_S, STEP_PERCENT_MAX, STEP_PERCENT_MIN
from fastscale.infra.model.resolved import ResolvedStack
from fastscale.infra.rules import Hit, Severity, stack_rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    instances: {initial: 2, min: 2, max: 4}
    deployment:
      blue_green: {traffic: CANARY}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

PERCENT = "CAPACITY_PERCENT"
#: (lowest, highest) percentage the API documents per kind of step.
CANARY_PERCENT = (1, STEP_PERCENT_MAX)
LINEAR_PERCENT = (10, STEP_PERCENT_MAX)
BATCH_PERCENT = (STEP_PERCENT_MIN, STEP_PERCENT_MAX)
ROLLBACK_PERCENT = (1, 100)


class _Step(Protocol):
    """A traffic step or batch: a count of instances or copies, or a percentage of the capacity."""

    @property
    def type(self) -> str: ...

    @property
    def value(self) -> int: ...


def _percent(path: str, step: _Step | None, bounds: tuple[int, int], what: str) -> Iterator[Hit]:
    if step is None or step.type != PERCENT:
        return
    lo, hi = bounds
    if not lo <= step.value <= hi:
        yield Hit(
            f"{path}.value",
            f"{what} of {step.value} % is outside the {lo}-{hi} % SageMaker accepts, so the update would be refused.",
            f"set value: {min(max(step.value, lo), hi)}",
        )


@stack_rule("FS048", "deployment-setting-invalid", Severity.ERROR, "An update setting is not accepted for this endpoint.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        path, written = ep.path, ep.deployment_keys
        if ep.model is not None:
            if {"blue_green", "rolling"} <= written:
                yield Hit(f"{path}.deployment", "both `blue_green` and `rolling` are set: an endpoint updates one way.",
                          "keep one of blue_green and rolling")
            if "components" in written:
                yield Hit(f"{path}.deployment.components", "`components` applies to inference components, and this "
                          "endpoint hosts a single model.", "use `blue_green` or `rolling` instead")
        else:
            for key in ("blue_green", "rolling"):
                if key in written:
                    yield Hit(f"{path}.deployment.{key}", f"`{key}` applies to single-model endpoints: the components "
                              "of this endpoint update one at a time, each by its own rolling update.",
                              "set `deployment.components` (or a component's `deployment.rolling`) instead")
    for r in stack.configured_rollouts:
        where = r.settings_path
        waits = r.bake_time
        timeout = None
        if r.blue_green is not None:
            bg = r.blue_green
            timeout, waits = bg.timeout, r.bake_time + bg.termination_wait
            if bg.traffic != "ALL_AT_ONCE" and bg.step is None:
                yield Hit(f"{where}.step", f"{bg.traffic} traffic moves a `step` at a time, and none is set.",
                          "set step: {type: CAPACITY_PERCENT, value: 25} (or INSTANCE_COUNT)")
            if bg.traffic == "ALL_AT_ONCE" and bg.step is not None:
                yield Hit(f"{where}.step", "ALL_AT_ONCE moves all traffic in one step: `step` has no meaning.",
                          "remove step, or set traffic: CANARY or LINEAR")
            bounds = CANARY_PERCENT if bg.traffic == "CANARY" else LINEAR_PERCENT
            if bg.traffic != "ALL_AT_ONCE":
                yield from _percent(f"{where}.step", bg.step, bounds, f"a {bg.traffic.lower()} step")
        elif r.rolling is not None:
            timeout = r.rolling.timeout
            yield from _percent(f"{where}.batch", r.rolling.batch, BATCH_PERCENT, "a rolling batch")
            yield from _percent(f"{where}.rollback_batch", r.rolling.rollback_batch, ROLLBACK_PERCENT, "a rollback batch")
        if timeout is None:
            continue
        if r.component is None and timeout > ENDPOINT_DEPLOYMENT_TIMEOUT_MAX_S:
            yield Hit(f"{where}.timeout", f"timeout is {timeout} s: hashicorp/aws accepts at most "
                      f"{ENDPOINT_DEPLOYMENT_TIMEOUT_MAX_S} s for an endpoint, so plan would fail.",
                      f"set timeout: {ENDPOINT_DEPLOYMENT_TIMEOUT_MAX_S}")
        if timeout <= waits:
            yield Hit(f"{where}.timeout", f"timeout is {timeout} s, but the update waits {waits} s (bake time plus "
                      "termination wait) before it can finish: it would always time out and roll back.",
                      f"set timeout above {waits}, or leave it unset")
