"""The discrete-time model on hand-checkable inputs: every expected number below is worked out in a comment."""

from __future__ import annotations

import dataclasses

import pytest

from fastscale.infra.analysis.simulate import Alarm, ScaleFromZero, SimSpec, Timings, simulate

HIGH_RES = Alarm(period=10, datapoints=3)
STANDARD = Alarm(period=60, datapoints=3)
SCALE_IN = Alarm(period=60, datapoints=15)


def spec(**changes) -> SimSpec:
    """One instance with room for 10 copies, in service; a new copy there serves 100 s after the decision."""
    base = SimSpec(
        target=1.0,
        units_min=1,
        units_max=10,
        instances_min=1,
        instances_max=1,
        copies_per_instance=10,
        timings=Timings(decision=5, copy_on_instance=100, provisioning=100, copy_on_new_instance=150),
        scale_out=HIGH_RES,
        scale_in=SCALE_IN,
        scale_in_threshold=0.9,
        scale_in_cooldown=300,
        scale_out_cooldown=300,  # Application Auto Scaling's default for SageMaker; 0 is tested on its own
        lag=5,
        reinvoke=60,
        scale_from_zero=None,
        service_time=10.0,
        price_per_hour=3.6,  # one cent per instance-second... per 10 s: 0.001 $/s
    )
    return dataclasses.replace(base, **changes)


def step(base: float, peak: float, at: int, n: int = 1200) -> list[float]:
    return [peak if t >= at else base for t in range(n)]


def test_step_spike_on_a_running_instance_high_resolution():
    # 1 -> 5 concurrent at 60 s, target 1: datapoints [60,70) [70,80) [80,90) are 5 per copy, all > 1;
    # the third reaches the alarm at 90 + 5 lag = 95; the decision lands at 100; four new copies on the
    # instance serve 100 s later, at 200. Served 200 - 60 = 140 s after the spike; 4 requests wait each second.
    r = simulate(spec(), step(1, 5, 60))
    s = r.summary
    assert s.short_at == 60
    assert s.detection_seconds == 35
    assert s.served_after_seconds == 140
    assert s.queued_request_seconds == pytest.approx(4 * 140)
    assert s.rejected_requests == 0
    assert s.peak_copies == 5 and s.peak_instances == 1
    assert r.desired[99] == 1 and r.desired[100] == 5
    assert r.serving[199] == 1 and r.serving[200] == 5
    assert r.capacity[200] == 5


def test_a_decision_takes_effect_its_delay_after_the_alarm_while_datapoints_keep_arriving():
    # As above, but the decision takes 25 s, longer than the 10-second period: the alarm at 95 changes the desired
    # count at 120, while datapoints reach the alarm at 105 and 115 in between (and change nothing: still in
    # ALARM, not yet due to invoke again); the new copies serve at 220.
    timings = Timings(decision=25, copy_on_instance=100, provisioning=100, copy_on_new_instance=150)
    r = simulate(spec(timings=timings), step(1, 5, 60))
    assert r.summary.detection_seconds == 35
    assert r.desired[119] == 1 and r.desired[120] == 5
    assert r.serving[219] == 1 and r.serving[220] == 5
    assert [e.second for e in r.events if e.kind == "desired"] == [120]


def test_step_spike_with_60_second_metrics():
    # Three 60-second datapoints: [60,120) [120,180) [180,240), evaluated at 245; copies serve at 250 + 100.
    s = simulate(spec(scale_out=STANDARD), step(1, 5, 60)).summary
    assert s.detection_seconds == 185
    assert s.served_after_seconds == 290


def test_new_instances_follow_the_instance_timeline():
    # One copy per instance: the four extra copies each need an instance, requested at 100 (decision), in
    # service at 200 (provisioning 100 s), serving at 350 (150 s more). Served after 350 - 60 = 290 s.
    r = simulate(spec(copies_per_instance=1, instances_max=10), step(1, 5, 60))
    assert r.summary.served_after_seconds == 290
    assert r.instances[99] == 1 and r.instances[100] == 5
    assert r.instances_serving[199] == 1 and r.instances_serving[200] == 5
    assert r.summary.peak_instances == 5


def test_maximum_capacity_caps_the_spike():
    # Demand 20 with at most 10 copies: never served, 10 requests wait every second once all copies serve.
    r = simulate(spec(), step(1, 20, 60))
    assert r.summary.served_after_seconds is None
    assert r.summary.peak_copies == 10
    assert r.queued[-1] == pytest.approx(10)


ZERO = ScaleFromZero(Alarm(period=60, datapoints=1), cooldown=60)


def _from_zero(**changes):
    base = {"units_min": 0, "instances_min": 0, "copies_per_instance": 1, "instances_max": 10, "scale_from_zero": ZERO,
            "target": 4}
    return spec(**{**base, **changes})


def test_scale_from_zero_alarm_step_policy_then_cold_start():
    # Idle at zero copies and instances. 2 concurrent requests of 10 s from 60 s: 0.2 requests/s fail.
    # NoCapacityInvocationFailures Sum over [60,120) = 12 >= 1: alarm at 125, +1 copy at 130, which needs
    # an instance: in service at 230, copy serving at 380. Rejected: 0.2/s for 320 s = 64.
    r = simulate(_from_zero(), step(0, 2, 60))
    s = r.summary
    assert s.short_at == 60
    assert s.detection_seconds == 65
    assert s.first_capacity_seconds == 320
    assert s.served_after_seconds == 320
    assert s.rejected_requests == pytest.approx(0.2 * 320)
    assert s.queued_request_seconds == 0
    assert list(r.instances[:130]) == [0] * 130 and r.instances[130] == 1
    kinds = [e.kind for e in r.events if e.second <= 380]
    assert "alarm" in kinds and "serving" in kinds


def test_step_policy_adds_to_the_desired_count_each_minute_while_in_alarm():
    # The alarm stays in ALARM while the first copy starts (requests keep failing) and invokes the step policy
    # each minute (datapoints arrive at 125, 185, 245, 305, 365); ChangeInCapacity +1 is added to the desired
    # count, copies still starting included: 1, 2, 3, 4, 5 from 130, 190, 250, 310, 370 (decision 5 s).
    # Applied to the copies in service instead, it would stay at 1 until the first copy serves.
    r = simulate(_from_zero(), step(0, 2, 60))
    assert [r.desired[t] for t in (129, 130, 189, 190, 250, 310, 370)] == [0, 1, 1, 2, 3, 4, 5]
    # The second copy starts one minute after the first, in parallel: serving at 190 + 250 = 440.
    assert r.serving[439] == 1 and r.serving[440] == 2


def test_step_cooldown_spaces_the_steps():
    # Cooldown 120 s: the invocations at 185 and 305 fall inside it; steps at 125, 245, 365.
    r = simulate(_from_zero(scale_from_zero=ScaleFromZero(Alarm(60, 1), cooldown=120)), step(0, 2, 60))
    assert [r.desired[t] for t in (130, 249, 250, 369, 370)] == [1, 1, 2, 2, 3]


def test_no_step_once_requests_stop_failing():
    # The first copy serves at 380; the period [360,420) still counts the failures of 360-379 (a real
    # datapoint, so AWS's alarm is still in ALARM at 425 and the step fires: desired 6 from 430). From
    # [420,480) on no request fails: the alarm returns to OK and never steps again.
    r = simulate(_from_zero(), step(0, 2, 60))
    assert r.desired[429] == 5 and r.desired[430] == 6
    assert max(r.desired[430:]) == 6
    steps = [e for e in r.events if e.kind == "alarm" and "no-capacity" in e.detail]
    assert len(steps) == 6 and steps[-1].second == 425


def test_target_tracking_needs_all_its_datapoints():
    # 10-second metrics: the third breaching datapoint closes at 90 and arrives at 95; not one second earlier.
    r = simulate(spec(), step(1, 5, 60))
    assert r.desired[99] == 1 and r.desired[100] == 5
    alarms = [e.second for e in r.events if e.kind == "alarm"]
    assert alarms[0] == 95
    # 1-minute metrics: three datapoints, [60,120) [120,180) [180,240), arriving at 245.
    r = simulate(spec(scale_out=STANDARD), step(1, 5, 60))
    assert [e.second for e in r.events if e.kind == "alarm"][0] == 245
    # Two breaching datapoints then a low one: no alarm at all.
    blip = [5.0 if 60 <= t < 80 else 1.0 for t in range(600)]
    assert not [e for e in simulate(spec(), blip).events if e.kind == "alarm"]


def test_scale_out_cooldown_is_read():
    # Copies take 100 s to serve after the decision at 100, so the metric stays at 5 per copy until 200.
    # With cooldown 0 the alarm re-invokes at 155 and Application Auto Scaling multiplies the desired count
    # (5) by metric / target: 25, capped at the maximum of 10. With the cooldown (300 s) the capacity added
    # at 95 counts towards the next scale-out: no larger one is asked for.
    eager = simulate(spec(scale_out_cooldown=0), step(1, 5, 60))
    assert eager.desired[159] == 5 and eager.desired[160] == 10
    patient = simulate(spec(scale_out_cooldown=300), step(1, 5, 60))
    assert max(patient.desired) == 5


def test_scale_in_cooldown_is_honoured():
    # Spike to 8 from 60 to 600, then 4 until 1500, then 1. The first scale-in (15 low minutes after 600:
    # [600,660) ... [1440,1500) all at 4/8 = 0.5 < 0.9) arrives at 1505 and asks for ceil(0.5 x 8) = 4.
    # Once demand is 1 the low datapoints want fewer copies, but not within the cooldown of the last scale-in.
    demand = [8.0 if 60 <= t < 600 else 4.0 if t < 1500 else 1.0 for t in range(3600)]
    r = simulate(spec(scale_in_cooldown=600), demand)
    assert r.desired[1510] == 4
    first_in = 1505
    later = [e.second for e in r.events if e.kind == "alarm" and "scale-in" in e.detail and e.second > first_in]
    assert later and later[0] >= first_in + 600
    short = simulate(spec(scale_in_cooldown=60), demand)
    later_short = [e.second for e in short.events if e.kind == "alarm" and "scale-in" in e.detail and e.second > first_in]
    assert later_short[0] < first_in + 600


def test_capacity_is_not_the_target():
    # Target 1, capacity 2 per copy: 5 concurrent requests are served by 3 copies with none queued, yet the
    # policy still scales to ceil(5 / 1) = 5 copies (headroom); with capacity = target, 4 wait for 140 s.
    r = simulate(spec(capacity=2.0), step(1, 5, 60))
    assert r.summary.first_capacity_seconds == 140
    assert r.capacity[200] == 10 and r.desired[200] == 5
    assert r.summary.queued_request_seconds == pytest.approx(3 * 140)
    same = simulate(spec(), step(1, 5, 60))
    assert same.summary.queued_request_seconds == pytest.approx(4 * 140)


def test_scale_in_waits_fifteen_low_minutes_then_honours_the_minimum():
    # 5 copies serve from 200; the spike ends at 600 and demand returns to 1 (0.2 per copy < 0.9 x 1).
    # Minute datapoints [600,660) ... [1440,1500) are 15 low ones, evaluated at 1505: desired back to
    # ceil(0.2 x 5 / 1) = 1 at 1510 (decision 5 s), never below the minimum.
    demand = [5.0 if 60 <= t < 600 else 1.0 for t in range(1800)]
    r = simulate(spec(), demand)
    assert r.desired[1509] == 5
    assert r.desired[1510] == 1
    assert r.serving[1510] == 1
    assert min(r.desired) == 1


def test_instances_follow_copies_in_and_out():
    # Two copies per instance, up to 3 instances: 5 copies need 3 instances; back to 1 copy, 1 instance.
    demand = [5.0 if 60 <= t < 600 else 1.0 for t in range(1800)]
    r = simulate(spec(copies_per_instance=2, instances_max=3), demand)
    assert r.summary.peak_instances == 3
    assert r.instances[-1] == 1
    # Cost: instance-seconds at $3.60/h = $0.001 per instance-second.
    assert r.summary.cost_usd == pytest.approx(r.summary.instance_seconds * 0.001)


def test_copies_without_room_wait_for_it():
    # One instance with room for 2 copies and no more instances allowed: desired 5, only 2 serve.
    r = simulate(spec(copies_per_instance=2, instances_max=1, scale_out_cooldown=3600), step(1, 5, 60))
    assert r.summary.peak_copies == 5
    assert max(r.serving) == 2
    assert r.summary.served_after_seconds is None


def test_other_components_hold_their_slots():
    # 10 slots, 8 held by other components: this one can place only 2 copies on the instance.
    r = simulate(spec(reserved_slots=8), step(1, 5, 60))
    assert max(r.serving) == 2


def test_disabled_autoscaling_keeps_the_initial_count():
    r = simulate(spec(scale_out=None, scale_in=None, initial_units=2), step(0, 5, 60))
    assert set(r.serving) == {2}
    assert r.summary.detection_seconds is None
    assert r.summary.queued_request_seconds == pytest.approx(3 * (1200 - 60))


def test_steady_state_start_covers_the_base_demand():
    # Base demand 3 with target 1: the run starts with the 3 copies that demand keeps warm.
    r = simulate(spec(), step(3, 3, 0))
    assert r.serving[0] == 3
    assert r.summary.short_at is None and r.summary.seconds_short == 0


def test_rejects_impossible_specs():
    with pytest.raises(ValueError):
        spec(target=0)
    with pytest.raises(ValueError):
        spec(units_min=3, units_max=2)
    with pytest.raises(ValueError):
        spec(copies_per_instance=0)


def test_same_input_same_result():
    demand = [float((t * 7) % 13) for t in range(1800)]
    a, b = simulate(spec(), demand), simulate(spec(), list(demand))
    assert a == b
