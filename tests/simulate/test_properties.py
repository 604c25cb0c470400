"""Properties over generated configs and spikes: a layer off never serves a spike sooner, a higher maximum
never serves it later, and the same inputs always give the same result."""

from __future__ import annotations

import dataclasses
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastscale.infra.analysis.simulate import Layers, select_workloads, simulate, spike
from fastscale.infra.config import parse_config
from fastscale.infra.model.resolved import resolve

LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
WINDOW = 1500


def _served(result) -> float:
    s = result.summary
    if s.short_at is None:
        return 0.0
    return math.inf if s.served_after_seconds is None else s.served_after_seconds


@st.composite
def workloads(draw):
    component = draw(st.booleans())
    instance_type = draw(st.sampled_from(["ml.g6.2xlarge", "ml.g6.12xlarge", "ml.g5.12xlarge", "ml.inf2.8xlarge"]))
    target = draw(st.sampled_from([1, 2, 4, 8]))
    scaling = {"target_concurrency": target, "scale_out_cooldown": draw(st.sampled_from([0, 60, 300]))}
    model = {"image": LMI, "image_size_gb": draw(st.sampled_from([5.0, 17.7])),
             "model_size_gb": draw(st.sampled_from([1.0, 8.0, 16.0])), "autoscaling": scaling}
    if component:
        copies_max = draw(st.integers(1, 6))
        ep = {
            "name": "ep", "instance_type": instance_type,
            "instances": {"initial": 1, "min": draw(st.integers(0, 1)), "max": draw(st.integers(1, 3))},
            "inference_components": [{
                "name": "c", **model, "resources": {"accelerators": 1, "memory_mb": 1024},
                "copies": {"initial": 1, "min": draw(st.integers(0, 1)), "max": copies_max},
                "data_cache": draw(st.booleans()),
            }],
        }
    else:
        ep = {"name": "ep", "instance_type": instance_type,
              "instances": {"initial": 1, "min": 1, "max": draw(st.integers(1, 5))}, "model": model}
    config = parse_config({"project": "p", "region": "us-east-1", "endpoints": [ep]})
    [workload] = select_workloads(resolve(config)).workloads
    base = draw(st.sampled_from([0.0, 0.5, 1.0, 3.0]))
    peak = draw(st.floats(min_value=0.5, max_value=40.0))
    at = draw(st.integers(0, 300))
    traffic = spike(f"{base:g}:{peak:.2f}@{at}", duration=WINDOW, default_window=WINDOW, service_time=10)
    return workload, traffic


def _run(workload, traffic, layers: Layers, **spec_changes):
    spec = dataclasses.replace(workload.spec(layers), **spec_changes)
    return simulate(spec, traffic.demand)


FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(workloads(), st.sampled_from(["high_resolution", "data_cache", "image_cache", "warm_minimum"]))
def test_turning_a_layer_off_never_serves_the_spike_sooner(case, layer):
    workload, traffic = case
    on = dataclasses.replace(workload.layers, **{layer: True}) if getattr(workload.layers, layer) is not None else None
    if on is None:
        return  # the layer does not apply to this kind of endpoint
    off = dataclasses.replace(on, **{layer: False})
    with_layer, without = _run(workload, traffic, on), _run(workload, traffic, off)
    assert _served(without) >= _served(with_layer)
    assert without.summary.rejected_requests >= with_layer.summary.rejected_requests - 1e-6


@FAST
@given(workloads(), st.integers(1, 4))
def test_a_higher_maximum_never_serves_the_spike_later(case, more):
    workload, traffic = case
    spec = workload.spec()
    bigger = dataclasses.replace(
        spec,
        units_max=spec.units_max + more,
        instances_max=spec.instances_max + (more if spec.copies_per_instance == 1 else 1),
    )
    assert _served(simulate(bigger, traffic.demand)) <= _served(simulate(spec, traffic.demand))


@FAST
@given(workloads())
def test_the_same_inputs_give_the_same_result(case):
    workload, traffic = case
    assert _run(workload, traffic, workload.layers) == _run(workload, traffic, workload.layers)


@FAST
@given(workloads())
def test_accounting_is_consistent(case):
    workload, traffic = case
    r = _run(workload, traffic, workload.layers)
    spec = workload.spec()
    for t in range(len(r.demand)):
        assert r.serving[t] <= r.copies[t] <= max(r.desired[t], r.copies[t])
        assert spec.units_min <= r.desired[t] <= spec.units_max
        assert r.instances_serving[t] <= r.instances[t] <= spec.instances_max
        assert r.capacity[t] == r.serving[t] * spec.unit_capacity
        # Either requests wait for a slot, or they fail with nothing in service, never both.
        assert r.queued[t] == 0 or r.rejected[t] == 0
