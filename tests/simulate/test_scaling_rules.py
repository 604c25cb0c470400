"""Every scaling rule of the simulator, each pinned by a test that fails when the rule is loosened.

The rules and where they are tested (here, or in test_engine.py / test_build.py / test_requests.py):

| rule | test |
|---|---|
| target tracking: an alarm needs all its datapoints breaching (3 of 3), a full window of them | test_engine: target_tracking_needs_all_its_datapoints; here: a_partial_window_never_alarms |
| a datapoint breaches above the target, not at it | here: a_metric_at_the_target_does_not_breach |
| 10-second vs 60-second datapoints; datapoints reach the alarm 5 s late | test_engine: step_spike_* (35 s / 185 s) |
| a datapoint is the mean of every second of its period with a copy in service; no copy, no datapoint | here: a_datapoint_averages_its_whole_period, seconds_without_a_copy_are_not_in_the_datapoint |
| scale-out asks for ceil(capacity x metric / target), capacity the desired count outside the cooldown | test_engine: step_spike_on_a_running_instance, scale_out_cooldown_is_read |
| scale-out cooldown: the capacity added counts towards the next scale-out | test_engine: scale_out_cooldown_is_read |
| an alarm in ALARM invokes its policy again every minute, not more often | test_engine: scale_out_cooldown_is_read, step_policy_adds_to_the_desired_count_each_minute |
| a decision takes effect after the decision delay | test_engine: step_spike_on_a_running_instance (desired at 100, alarm at 95) |
| never above the maximum (copies, and the copies the instances hold) | test_engine: maximum_capacity_caps_the_spike; here: the_maximum_is_what_the_instances_hold |
| scale-in: 15 one-minute datapoints below 90% of the target | test_engine: scale_in_waits_fifteen_low_minutes; here: scale_in_needs_the_metric_below_90_percent, the_configured_spec_scales_in_on_15_minutes |
| scale-in cooldown, ended by a scale-out | test_engine: scale_in_cooldown_is_honoured; here: a_scale_out_ends_the_scale_in_cooldown |
| no scale-in while the scale-out alarm is in ALARM | here: no_scale_in_while_the_scale_out_alarm_is_in_alarm |
| never below the minimum; the run starts at it | here: scale_in_stops_at_the_minimum, the_run_starts_at_the_minimum |
| scale from zero: the no-capacity alarm needs a failure, the step adds +1 to the desired count (copies starting included) each minute after its cooldown, never above the maximum | test_engine: scale_from_zero_*, step_policy_*, step_cooldown_spaces_the_steps; here: the_step_policy_stops_at_the_maximum; test_requests: requests_fail_with_no_copy_in_service |
| scale from zero only for components at a minimum of 0 | here: only_a_component_at_zero_has_the_step_policy |
| instance vs copy scaling: copies placed on running instances first, then on starting ones, then new instances up to instances.max, released when empty down to instances.min | test_engine: new_instances_follow_the_instance_timeline, copies_without_room_wait_for_it, instances_follow_copies_in_and_out; here: a_copy_goes_to_a_running_instance_then_a_starting_one_then_a_new_one, empty_instances_are_kept_down_to_the_minimum |
| start-up per layer: a copy on a running instance, a new instance's provisioning, data and image caching | test_engine: step_spike_*, new_instances_*; test_build: timings_are_the_estimate_models_phases |
| 60-second metrics take 60-second datapoints | here: the_metric_picks_the_datapoint_period |
| copies per instance: accelerators, memory and CPUs; other components hold their slots | test_build: component_spec_reads_the_config; test_engine: other_components_hold_their_slots; here: copies_per_instance_is_the_tightest_resource |
| scale-in removes what serves least: unplaced copies, then starting ones, then serving ones | here: scale_in_removes_copies_without_room_first, scale_in_removes_starting_copies_first |
"""

from __future__ import annotations

import dataclasses

from fastscale.infra.analysis.simulate import Alarm, ScaleFromZero, SimSpec, Timings, select_workloads, simulate
from fastscale.infra.analysis.simulate.params import load_params
from fastscale.infra.config import parse_config

HIGH_RES = Alarm(period=10, datapoints=3)
SCALE_IN = Alarm(period=60, datapoints=15)
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def spec(**changes) -> SimSpec:
    """One instance with room for 10 copies, in service; a new copy there serves 100 s after the decision."""
    base = SimSpec(
        target=1.0, units_min=1, units_max=10, instances_min=1, instances_max=1, copies_per_instance=10,
        timings=Timings(decision=5, copy_on_instance=100, provisioning=100, copy_on_new_instance=150),
        scale_out=HIGH_RES, scale_in=SCALE_IN, scale_in_threshold=0.9, scale_in_cooldown=300, scale_out_cooldown=300,
        lag=5, reinvoke=60, scale_from_zero=None, service_time=10.0, price_per_hour=3.6,
    )
    return dataclasses.replace(base, **changes)


def alarms(result, kind: str = "scale-out") -> list[int]:
    return [e.second for e in result.events if e.kind == "alarm" and kind in e.detail]


def test_a_metric_at_the_target_does_not_breach():
    # Two copies at exactly 1 request each (the target): no scale-out, ever. Just above it, the usual 95 s alarm.
    assert not alarms(simulate(spec(), [2.0] * 600))
    assert alarms(simulate(spec(), [2.0] * 60 + [2.2] * 540))[0] == 95


def test_a_datapoint_averages_its_whole_period():
    # Five requests per copy in the first half of every 10-second period, none in the second: each datapoint is
    # the period's mean, 2.5, above the target of 1. Three of them from 60 -> alarm at 95. (Datapoints reach the
    # alarm 5 s after their period; the seconds of the open period in those 5 s still count in it.)
    pulses = [5.0 if t >= 60 and t % 10 < 5 else 0.0 for t in range(300)]
    r = simulate(spec(initial_units=1), pulses)
    assert alarms(r)[0] == 95 and "2.5 per copy" in next(e.detail for e in r.events if e.kind == "alarm")


def test_a_partial_window_never_alarms():
    # The run starts above the target: the first datapoint closes at 10 and reaches the alarm at 15, the second at
    # 25, the third at 35. With fewer than three datapoints there is no alarm (Application Auto Scaling's alarm
    # needs all three), so the first is at 35, not at 15 or 25.
    r = simulate(spec(initial_units=1), [5.0] * 300)
    assert alarms(r)[0] == 35


def test_seconds_without_a_copy_are_not_in_the_datapoint():
    # Scale from zero: the first copy serves at 380 (as in test_engine), at the start of the period [380, 390). The
    # demand is 8 for a target of 4: every second with a copy is 8 per copy. Datapoints [380,390) [390,400)
    # [400,410) breach -> alarm at 415.
    zero = ScaleFromZero(Alarm(period=60, datapoints=1), cooldown=60)
    s = spec(units_min=0, instances_min=0, copies_per_instance=1, instances_max=10, scale_from_zero=zero, target=4,
             scale_out_cooldown=0)
    demand = [0.0] * 60 + [8.0] * 1140
    r = simulate(s, demand)
    first = next(t for t in range(len(r.serving)) if r.serving[t] > 0)
    assert first == 380
    assert alarms(r)[0] == 415
    # A copy that serves from 375, the second half of the period [370, 380): that period's datapoint is the
    # per-copy mean over the seconds a copy served (8), which breaches: [370,380) [380,390) [390,400) -> alarm at
    # 405. Had the seconds without a copy counted as 0, it would be 4 (not above 4) and the alarm would come at 415.
    late = dataclasses.replace(s, timings=Timings(decision=5, copy_on_instance=100, provisioning=100,
                                                  copy_on_new_instance=145))
    r = simulate(late, demand)
    assert next(t for t in range(len(r.serving)) if r.serving[t] > 0) == 375
    assert alarms(r)[0] == 405


def test_scale_in_needs_the_metric_below_90_percent_of_the_target():
    # Twenty copies at 18.6 requests (0.93 per copy, above 90% of the target): never low, no scale-in, though
    # ceil(18.6) = 19 copies would do. At 17.6 (0.88 per copy) the 15 low minutes [0,60) ... [840,900) scale in to
    # ceil(17.6) = 18 at 905.
    twenty = spec(units_max=20, copies_per_instance=20, initial_units=20)
    assert not alarms(simulate(twenty, [18.6] * 1800), "scale-in")
    low = simulate(twenty, [17.6] * 1800)
    assert alarms(low, "scale-in")[0] == 905 and low.desired[910] == 18


def test_a_scale_out_ends_the_scale_in_cooldown():
    # Spikes scale out to 10 copies; 15 low minutes later a scale-in at 1145, and the next one would wait for the
    # 3,600 s scale-in cooldown (till 4745, past the window). A second spike scales out at 1595, which ends that
    # cooldown: the next 15 low minutes scale in again at 2645.
    demand = [6.0 if 60 <= t < 600 else 3.0 if t < 1560 else 8.0 if t < 1800 else 1.0 for t in range(3600)]
    r = simulate(spec(scale_in_cooldown=3600, scale_out_cooldown=0), demand)
    assert alarms(r, "scale-in") == [1145, 2645] and 1145 < alarms(r)[-2] < 2645


def test_no_scale_in_while_the_scale_out_alarm_is_in_alarm():
    # Three copies, the maximum, and a scale-in alarm of one datapoint. The demand is 0 in the first half of each
    # minute and 4 (1.33 per copy) in the second: each minute's datapoint (0.67 per copy) is low, while the last
    # three 10-second datapoints breach, so the scale-out alarm is in ALARM (it cannot add copies: at the maximum)
    # whenever the scale-in datapoint arrives. No scale-in, ever; without the scale-out alarm it would be ceil(2).
    swing = [4.0 if (t % 60) >= 30 else 0.0 for t in range(1200)]
    r = simulate(spec(scale_in=Alarm(60, 1), units_max=3, initial_units=3, scale_in_cooldown=0), swing)
    assert not alarms(r, "scale-in") and set(r.desired) == {3}


def test_scale_in_stops_at_the_minimum():
    # Five copies, then 0.2 requests: the 15 low minutes ask for ceil(0.2 x 5 / 1) = 1 copy at 1505, but the
    # minimum is 3.
    demand = [5.0 if 60 <= t < 600 else 0.2 for t in range(1800)]
    r = simulate(spec(units_min=3), demand)
    assert alarms(r, "scale-in")[0] == 1505 and r.desired[1510] == 3 and min(r.desired[100:]) == 3


def test_the_run_starts_at_the_minimum():
    # An idle trace starts at the minimum of 3 copies, not at the 0 the demand needs.
    r = simulate(spec(units_min=3), [0.0] * 120)
    assert r.serving[0] == 3 and r.desired[0] == 3


def test_the_step_policy_stops_at_the_maximum():
    # Scale from zero with a maximum of 2: the step policy adds a copy each minute while requests fail, and stops at 2.
    zero = ScaleFromZero(Alarm(period=60, datapoints=1), cooldown=60)
    s = spec(units_min=0, units_max=2, instances_min=0, copies_per_instance=1, instances_max=10, scale_from_zero=zero,
             target=4)
    r = simulate(s, [0.0] * 60 + [2.0] * 1140)
    assert max(r.desired) == 2 and r.desired[190] == 2


def test_a_copy_goes_to_a_running_instance_then_a_starting_one_then_a_new_one():
    # Room for 2 copies an instance, at most 2 instances. At 100 (decision) 3 copies: the second fits the running
    # instance (serving at 200, 100 s later), the third needs a new instance (in service at 200, copy at 350). At
    # 160 a 4th copy: the running instance is full, so it goes to the one being provisioned (serving with the
    # third at 350), not to a third instance (there is none to have).
    s = spec(copies_per_instance=2, instances_max=2, scale_out_cooldown=0, units_max=4)
    r = simulate(s, [1.0] * 60 + [3.0] * 1140)
    assert r.desired[100] == 3 and r.instances[100] == 2 and r.desired[160] == 4
    assert r.serving[199] == 1 and r.serving[200] == 2 and r.serving[349] == 2 and r.serving[350] == 4


def test_scale_in_removes_copies_without_room_first():
    # One instance with room for 2 copies: a scale-out to 5 leaves 3 copies without room (never serving). The
    # scale-in that follows removes those first: the 2 copies serving stay, and serving never drops.
    s = spec(copies_per_instance=2, instances_max=1, scale_in=Alarm(60, 1), scale_in_cooldown=0, scale_out_cooldown=3600)
    demand = [1.0] * 60 + [5.0] * 180 + [1.2] * 960
    r = simulate(s, demand)
    assert max(r.desired) == 5 and max(r.serving) == 2
    # The scale-in at 305 asks for ceil(0.6 per copy x 2 serving / 1) = 2 copies: the two serving ones are kept,
    # the three without room go. Removing serving copies first would leave two copies to start anew.
    assert r.desired[309] == 5 and r.desired[310] == 2 and min(r.serving[200:]) == 2


def test_empty_instances_are_kept_down_to_the_minimum():
    # instances.min 2 with one copy: the second instance holds nothing and is still kept (and billed).
    r = simulate(spec(copies_per_instance=1, instances_min=2, instances_max=3), [1.0] * 600)
    assert set(r.instances) == {2}
    assert r.summary.instance_seconds == 2 * 600


def test_scale_in_removes_starting_copies_first():
    # A scale-out to 5 copies at 100; the copies serve at 200. A scale-in decided while they start removes the
    # starting ones, never the copy already serving: at least one copy serves throughout.
    s = spec(scale_in=Alarm(60, 1), scale_in_cooldown=0, scale_out_cooldown=0)
    demand = [1.0] * 60 + [5.0] * 40 + [0.1] * 1100
    r = simulate(s, demand)
    assert max(r.desired) == 5 and min(r.serving) == 1 and r.desired[-1] == 1
    # The scale-in at 185 (the minute [120,180) low) removes the four starting copies: none of them ever serves.
    assert max(r.serving) == 1


def test_the_maximum_is_what_the_instances_hold(base_config):
    # copies.max 10, but at most 2 instances of 4 GPUs for 1-GPU copies: the simulation stops at 8 copies.
    ep = base_config["endpoints"][0]
    model = ep.pop("model")
    ep["instance_type"] = "ml.g6.12xlarge"
    ep["instances"] = {"initial": 1, "min": 1, "max": 2}
    ep["inference_components"] = [{**model, "name": "c", "resources": {"accelerators": 1, "memory_mb": 1024},
                                   "copies": {"initial": 1, "min": 1, "max": 10}}]
    [w] = select_workloads(parse_config(base_config)).workloads
    assert w.spec().units_max == 8 and any("hold 8 copies" in n for n in w.notes)


def test_copies_per_instance_is_the_tightest_resource(base_config):
    ep = base_config["endpoints"][0]
    model = ep.pop("model")
    ep["instance_type"] = "ml.g6.12xlarge"  # 4 GPUs, 48 vCPUs, 192 GiB
    component = {**model, "name": "c", "resources": {"accelerators": 1, "memory_mb": 1024}}
    ep["inference_components"] = [component]
    assert select_workloads(parse_config(base_config)).workloads[0].spec().copies_per_instance == 4  # GPUs
    component["resources"] = {"accelerators": 1, "memory_mb": 80 * 1024}
    assert select_workloads(parse_config(base_config)).workloads[0].spec().copies_per_instance == 2  # memory
    component["resources"] = {"accelerators": 1, "memory_mb": 1024, "cpus": 20}
    assert select_workloads(parse_config(base_config)).workloads[0].spec().copies_per_instance == 2  # CPUs


def test_only_a_component_at_zero_has_the_step_policy(base_config):
    ep = base_config["endpoints"][0]
    model = ep.pop("model")
    ep["instance_type"] = "ml.g6.12xlarge"
    ep["instances"] = {"initial": 1, "min": 0, "max": 2}
    component = {**model, "name": "c", "resources": {"accelerators": 1, "memory_mb": 1024},
                 "copies": {"initial": 1, "min": 1, "max": 4}}
    ep["inference_components"] = [component]
    assert select_workloads(parse_config(base_config)).workloads[0].spec().scale_from_zero is None
    component["copies"]["min"] = 0
    spec0 = select_workloads(parse_config(base_config)).workloads[0].spec()
    assert spec0.scale_from_zero is not None and spec0.units_min == 0


def test_the_metric_picks_the_datapoint_period_and_scale_in_takes_15_minutes(base_config):
    model = base_config["endpoints"][0]["model"]
    sim = load_params()
    for metric, period in (("high_resolution", 10), ("invocations", 60)):
        model["autoscaling"] = {"metric": metric, "target_concurrency": 4}
        s = select_workloads(parse_config(base_config)).workloads[0].spec()
        assert s.scale_out == Alarm(period, 3)
        assert s.scale_in == Alarm(int(sim.scale_in.period_seconds.value), int(sim.scale_in.datapoints.value)) == Alarm(60, 15)
