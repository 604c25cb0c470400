"""`explain` reasons with AWS's scaling semantics: an alarm that stays in ALARM re-invokes its policy (so the
cooldown sets the pace of a long scale-out), and every scaling path the config expects must exist and be wired
before it may say "no problem found"."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.cli.runtime import Runtime
from fastscale.infra.aws.explain import diagnose, explain, scaling_paths, timeline
from fastscale.infra.config import FastscaleConfig
from tests.explain_stubs import (
    CONFIG,
    EP,
    IC,
    IC_RID,
    NOW,
    Recorded,
    activity,
    component_desc,
    endpoint_desc,
    series,
    state_change,
    tt_alarm_name,
    tt_policy,
)

HIGH = tt_alarm_name(IC_RID, "High")


@pytest.fixture(scope="module")
def config() -> FastscaleConfig:
    return FastscaleConfig.model_validate(CONFIG)


def codes(findings) -> list[str]:
    return [f.code for f in findings]


def only(findings, code):
    hits = [f for f in findings if f.code == code]
    assert len(hits) == 1, codes(findings)
    return hits[0]


# --------------------------------------------------------------------------------------------- cooldown pacing


def in_alarm_with_cooldown(cooldown: int = 300) -> Recorded:
    """One change to ALARM at 30 s; the alarm never leaves ALARM; a scale-out each time the cooldown ends."""
    rec = Recorded.healthy_component()
    rec.policies[0] = tt_policy(IC_RID, rec.dim, f"{IC}-target-tracking",
                                "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
                                scale_out_cooldown=cooldown)
    rec.alarms[HIGH]["StateValue"] = "ALARM"
    rec.history = {HIGH: [state_change(HIGH, 30, "OK", "ALARM")]}
    # Re-invoked every minute: the first invocation after each cooldown scales (30, 335, 640).
    rec.activities = [activity(30, 2), activity(335, 3), activity(640, 4)]
    rec.metrics["scaling"] = series(0, 10, [3.5] + [9.0] * 70)
    rec.component = component_desc(current=4)
    return rec


def test_one_alarm_then_steps_a_cooldown_apart_is_cooldown_limited(config):
    ev = in_alarm_with_cooldown().run(config)
    f = only(diagnose(ev), "cooldown-limited")
    assert "300 s cooldown" in f.title
    assert f.evidence[0].startswith(f"{HIGH} went to ALARM once at 11:00:30 and stayed there")
    assert "again about every 60 s while an alarm stays in ALARM" in f.evidence[0]
    assert "scale-outs at 11:00:30 (to 2), 11:05:35 (to 3), 11:10:40 (to 4): 305 s, 305 s apart" in f.evidence[1]
    assert "ConcurrentRequestsPerCopy stayed above the target 4" in f.evidence[2]
    assert "`endpoints[0].inference_components[0].autoscaling.scale_out_cooldown` (now 300)" in f.fix
    # Not read as "alarm fired once, scaled once": the timeline says the later steps were re-invocations.
    events = [e.event for e in timeline(ev) if e.source == "scaling"]
    assert "re-invoked" not in events[0]
    assert all(f"re-invoked: {HIGH} in ALARM since 11:00:30" in e for e in events[1:])
    assert not explain([ev]).ok


def test_steps_a_minute_apart_are_not_the_cooldown(config):
    # No cooldown: CloudWatch's once-a-minute re-invocation sets the pace, which the policy cannot change.
    rec = in_alarm_with_cooldown(cooldown=0)
    rec.activities = [activity(30, 2), activity(90, 3), activity(150, 4)]
    assert "cooldown-limited" not in codes(diagnose(rec.run(config)))


def test_a_new_alarm_between_the_steps_is_not_this_pattern(config):
    rec = in_alarm_with_cooldown()
    rec.history = {HIGH: [state_change(HIGH, 30, "OK", "ALARM"), state_change(HIGH, 200, "ALARM", "OK"),
                          state_change(HIGH, 330, "OK", "ALARM")]}
    rec.activities = [activity(30, 2), activity(335, 3)]  # the second step followed a new change to ALARM
    assert "cooldown-limited" not in codes(diagnose(rec.run(config)))


# --------------------------------------------------------------------------------------------- scaling paths


def test_healthy_component_has_every_path_wired(config):
    ev = Recorded.healthy_component().run(config)
    paths = {p.name: p.ok for p in scaling_paths(ev)}
    assert paths == {"target tracking scale-out": True, "target tracking scale-in": True, "scale from zero": True,
                     "managed instance scaling": True}


def deleted_step_policy_at_zero() -> Recorded:
    rec = Recorded.healthy_component()
    del rec.policies[1]  # the step policy is gone; its alarm still points at it
    rec.activities, rec.history = [], {}
    rec.metrics = {"scaling": ([], []), "invocations": series(0, 60, [0, 0, 0]), "nocapacity": ([], [])}
    rec.endpoint = endpoint_desc(EP, instances=0)
    rec.component = component_desc(current=0)
    return rec


def test_deleted_step_policy_on_a_component_at_zero(config):
    ev = deleted_step_policy_at_zero().run(config)
    f = only(diagnose(ev), "scale-from-zero-broken")
    assert f.title.startswith("demo-qwen is at 0 copies and its scale-from-zero path is broken")
    assert ("scale from zero: the step-scaling policy demo-qwen-scale-from-zero does not exist "
            "(DescribeScalingPolicies)") in f.evidence
    assert "scale from zero: the alarm demo-qwen-no-capacity's action names a policy that no longer exists" in f.evidence
    assert "demo-qwen: 0 of 0 copies now (copies.min 0)" in f.evidence
    assert "fastscale deploy" in f.fix
    assert not explain([ev]).ok


def test_deleted_scale_from_zero_alarm(config):
    rec = Recorded.healthy_component()
    del rec.alarms[f"{IC}-no-capacity"]
    f = only(diagnose(rec.run(config)), "scale-from-zero-broken")
    assert "scale from zero: its NoCapacityInvocationFailures alarm demo-qwen-no-capacity does not exist" in f.evidence[0]


@pytest.fixture
def play():
    """The runtime that serves one recorded scenario at NOW; fails if any queued answer was not asked for."""
    used = []

    def install(recorded: Recorded) -> Runtime:
        clients, stubbers = recorded.queue()
        used.extend(stubbers)
        return Runtime.default().replace(aws_clients=lambda stack: clients, now=lambda: NOW)

    yield install
    for s in used:
        s.assert_no_pending_responses()


def test_cli_never_says_no_problem_while_the_step_policy_is_missing(play, write_yaml):
    runtime = play(deleted_step_policy_at_zero())
    result = CliRunner().invoke(cli, ["explain", str(write_yaml(CONFIG)), "--component", "qwen"], obj=runtime)
    assert result.exit_code == 3, result.output
    text = " ".join(result.output.split())
    assert "no problem found" not in text
    assert "✗ scale-from-zero-broken" in text
    assert "scale from zero BROKEN" in text and "target tracking scale-out ok" in text


def test_cli_json_lists_the_paths(play, write_yaml):
    runtime = play(deleted_step_policy_at_zero())
    result = CliRunner().invoke(cli, ["explain", str(write_yaml(CONFIG)), "--component", "qwen", "--json"], obj=runtime)
    assert result.exit_code == 3
    [target] = json.loads(result.stdout)["targets"]
    broken = [p for p in target["scaling_paths"] if not p["ok"]]
    assert [p["path"] for p in broken] == ["scale from zero"]


def test_disable_scale_in_is_reported(config):
    rec = Recorded.healthy_component()
    rec.policies[0]["TargetTrackingScalingPolicyConfiguration"]["DisableScaleIn"] = True
    f = only(diagnose(rec.run(config)), "scale-in-disabled")
    assert "never removed (nor to zero)" in f.title
    assert f.evidence == ("target tracking scale-in: the policy demo-qwen-target-tracking has DisableScaleIn true: "
                          "target tracking never removes capacity",)


def test_deleted_target_tracking_policy_is_one_finding(config):
    rec = Recorded.healthy_component()
    del rec.policies[0]
    f = only(diagnose(rec.run(config)), "target-tracking-broken")
    assert "demo-qwen-target-tracking does not exist" in f.evidence[0]


def test_target_tracking_alarm_with_actions_disabled(config):
    rec = Recorded.healthy_component()
    rec.alarms[HIGH]["ActionsEnabled"] = False
    f = only(diagnose(rec.run(config)), "target-tracking-broken")
    assert "scale-out alarm" in f.evidence[0] and "ActionsEnabled false" in f.evidence[0]


def test_managed_instance_scaling_off(config):
    rec = Recorded.healthy_component()
    rec.endpoint = endpoint_desc(EP, instances=1, managed_max=None)
    f = only(diagnose(rec.run(config)), "instance-scaling-off")
    assert "ManagedInstanceScaling is not set" in f.evidence[0]
