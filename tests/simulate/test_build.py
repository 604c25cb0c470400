"""From configs to specs: timelines shared with the estimate model, layer variants, selection, parameters."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from fastscale.infra.analysis.estimate import estimate_config
from fastscale.infra.analysis.estimate.params import ParamsError
from fastscale.infra.analysis.simulate import (
    SimulateInputError,
    default_traffic,
    load_params,
    select_workloads,
    simulate_workload,
)
from fastscale.infra.analysis.simulate.params import parse_params
from fastscale.infra.config import load_config, parse_config
from tests.conftest import EXAMPLES, ROOT
from tests.params_support import parameter_leaves

MULTI = ROOT / "examples" / "multi-model.yaml"


def test_timings_are_the_estimate_models_phases():
    config = load_config(MULTI)
    est = {e.component: e for e in estimate_config(config)}
    for w in select_workloads(config).workloads:
        e = est[w.component]
        t = w.spec().timings
        assert t.copy_on_instance == pytest.approx(e.scenario("copy_data_cache").after_decision_seconds())
        inst = e.scenario("instance_image_cache")
        assert t.provisioning == inst.phase("instance_provisioning").seconds
        assert t.decision + t.provisioning + t.copy_on_new_instance == pytest.approx(inst.after_decision_seconds() + t.decision)
        off = w.spec(w.layers.__class__(True, False, False, False)).timings
        assert off.copy_on_instance == pytest.approx(e.scenario("copy_no_data_cache").after_decision_seconds()) or (
            off.copy_on_instance > t.copy_on_instance
        )
        assert off.copy_on_new_instance > t.copy_on_new_instance  # the image is pulled


def test_component_spec_reads_the_config():
    [w, *_] = select_workloads(load_config(MULTI)).workloads
    s = w.spec()
    assert (s.units_min, s.units_max, s.instances_min, s.instances_max) == (0, 4, 0, 3)
    assert s.copies_per_instance == 4  # ml.g6.12xlarge: 4 GPUs, one per copy
    assert s.scale_out.period == 10 and s.scale_out.datapoints == 3
    assert s.scale_from_zero is not None and s.scale_from_zero.alarm.period == 60
    assert s.scale_in_cooldown == 300 and s.price_per_hour and s.price_per_hour > 0
    assert w.layers.warm_minimum is False and w.layers.data_cache is True


def test_layer_variants_flip_one_layer_each():
    [w, *_] = select_workloads(load_config(MULTI)).workloads
    sim = simulate_workload(w, default_traffic(w))
    names = [v.name for v in sim.variants]
    assert names == ["configured", "metrics", "data_cache", "image_cache", "warm_minimum", "capacity_fallback"]
    by = {v.name: v for v in sim.variants}
    assert by["metrics"].layers.high_resolution is False and by["metrics"].turns_off is True
    assert by["warm_minimum"].turns_off is False  # the config scales to zero: the variant keeps one copy warm
    assert by["metrics"].result.summary.detection_seconds >= by["configured"].result.summary.detection_seconds
    assert by["warm_minimum"].result.summary.rejected_requests == 0
    assert by["configured"].result.summary.rejected_requests > 0


def test_single_model_endpoints_have_no_data_cache_or_warm_minimum_variant():
    w = select_workloads(load_config(ROOT / "examples" / "qwen3-8b.yaml")).workloads[0]
    sim = simulate_workload(w, default_traffic(w))
    by = {v.name: v for v in sim.variants}
    assert by["data_cache"].result is None and by["warm_minimum"].result is None
    assert "does not apply" in by["data_cache"].label
    assert w.spec().copies_per_instance == 1 and w.spec().unit == "instance"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_simulates_with_its_default_spike(path):
    selection = select_workloads(load_config(path))
    assert selection.workloads and not selection.skipped
    for w in selection.workloads:
        sim = simulate_workload(w, default_traffic(w))
        s = sim.configured.result.summary
        assert s.short_at is not None and s.served_after_seconds is not None
        assert sim.traffic.peak <= w.max_concurrency


def test_selection_errors_name_the_option(base_config):
    config = parse_config(base_config)
    with pytest.raises(SimulateInputError, match="no endpoint 'nope'") as exc:
        select_workloads(config, endpoint="nope")
    assert exc.value.option == "--endpoint"
    with pytest.raises(SimulateInputError, match="single-model endpoints scale by instances") as exc:
        select_workloads(config, component="c")
    assert exc.value.option == "--component"


def test_unsimulatable_workloads_are_skipped_with_the_reason(base_config):
    base_config["endpoints"][0]["instance_type"] = "ml.c7i.2xlarge"
    selection = select_workloads(parse_config(base_config))
    assert not selection.workloads
    assert "no accelerator" in selection.skipped[0]


def test_a_model_without_a_size_is_simulated_and_says_so(base_config):
    del base_config["endpoints"][0]["model"]["model_size_gb"]
    [w] = select_workloads(parse_config(base_config)).workloads
    assert any(n.startswith("model_size_gb not set") for n in w.notes)


def test_capacity_comes_from_the_kv_cache_or_the_configured_value(base_config):
    model = base_config["endpoints"][0]["model"]
    model["autoscaling"] = {"target_concurrency": 4}
    [w] = select_workloads(parse_config(base_config)).workloads
    # One L4 of ml.g6.2xlarge: 24 GiB x 0.9 less the server's reserve and the 16 GB of weights, at 128 KiB a token
    # (the stated default for a 16 GB model), holds requests of the stated 1,280 tokens.
    r = load_params().requests
    tokens = int((24 * 2**30 / 1e9 * 0.9 - r.memory_reserve_gb_per_accelerator.value - 16) * 1e9 // 131072)
    assert w.spec().capacity == tokens // int(r.default_request_tokens.value) == w.capacity
    assert any("KV cache" in n and f"{tokens} tokens" in n for n in w.notes)
    model["serving"] = {"max_concurrency": 6}
    [w] = select_workloads(parse_config(base_config)).workloads
    assert w.spec().capacity == 6 and w.spec().target == 4
    assert not any("max_concurrency not set" in n for n in w.notes)


def test_capacity_without_a_model_size_reads_the_target_as_80_percent(base_config):
    model = base_config["endpoints"][0]["model"]
    del model["model_size_gb"]
    model["autoscaling"] = {"target_concurrency": 4}
    [w] = select_workloads(parse_config(base_config)).workloads
    assert w.spec().capacity == pytest.approx(4 / load_params().capacity.default_target_fraction.value)
    assert any("cannot be sized" in n for n in w.notes)


def test_a_copy_too_big_for_the_instance_is_skipped(base_config):
    ep = base_config["endpoints"][0]
    model = ep.pop("model")
    ep["inference_components"] = [{**model, "name": "big", "resources": {"accelerators": 1, "memory_mb": 10**7}}]
    selection = select_workloads(parse_config(base_config))
    assert "no copy can be placed" in selection.skipped[0]


def test_other_components_minimum_copies_hold_slots():
    raw = load_config(MULTI).model_dump(mode="json", by_alias=True)
    raw["endpoints"][0]["inference_components"][1]["copies"]["min"] = 2
    config = parse_config(raw)
    w = select_workloads(config, component="qwen3-8b").workloads[0]
    assert w.spec().reserved_slots == 2
    assert any("slot" in n for n in w.notes)


def test_every_simulation_parameter_has_a_unit_and_a_known_source():
    params = load_params()
    raw = params.model_dump()
    known = set(raw["sources"])
    leaves = parameter_leaves(raw)
    assert len(leaves) >= 8
    for path, leaf in leaves:
        cited = {c.strip() for c in leaf["source"].split(":")[0].split(",")}
        assert leaf["source"].startswith("assumption") or cited <= known, path


def test_malformed_simulation_parameters_are_rejected():
    raw = copy.deepcopy(load_params().model_dump())
    raw["scale_in"]["threshold_fraction"]["value"] = 1.5
    with pytest.raises(ParamsError, match="threshold_fraction"):
        parse_params(json.dumps(raw))
    raw = copy.deepcopy(load_params().model_dump())
    raw["alarm_reinvoke_seconds"]["value"] = 0
    with pytest.raises(ParamsError, match="alarm_reinvoke_seconds"):
        parse_params(json.dumps(raw))
    with pytest.raises(ParamsError, match="malformed"):
        parse_params("{}")


def test_simulation_code_holds_no_timing_numbers():
    # Structural constants only: counting (0, 1), seconds per minute / hour for display and cost (60, 3600),
    # float slack, decimal places. Every period, delay and threshold comes from a parameters file or the config.
    import ast

    allowed = {0, 1, 2, 3, 60, 1024, 3600, 1e-9}  # 2, 3: decimal places; 1024: MiB per GiB
    for name in ("engine.py", "spec.py", "result.py", "build.py"):
        tree = ast.parse((ROOT / "infra" / "analysis" / "simulate" / name).read_text())
        numbers = {
            n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
        }
        assert numbers <= allowed, (name, numbers - allowed)


FALLBACK = ROOT / "examples" / "capacity-fallback.yaml"


def test_capacity_fallback_variant_uses_the_estimates_fallback_timeline():
    config = load_config(FALLBACK)
    [e] = estimate_config(config)
    [w] = select_workloads(config).workloads
    fallback = e.scenario("capacity_fallback")
    sim = simulate_workload(w, default_traffic(w))
    by = {v.name: v for v in sim.variants}
    assert w.fallback_instance_type == "ml.g5.12xlarge"
    t = w._fallback_spec().timings
    own = w.spec().timings
    assert t.provisioning == fallback.phase("capacity_wait").seconds + fallback.phase("instance_provisioning").seconds
    assert t.provisioning + t.copy_on_new_instance == pytest.approx(fallback.after_decision_seconds())
    assert t.copy_on_instance == own.copy_on_instance  # copies on running instances are not affected
    v = by["capacity_fallback"]
    assert v.result is not None and "ml.g5.12xlarge serves" in v.label and "no ml.g6.12xlarge capacity" in v.label
    # The same spike is served later by exactly the capacity wait plus the provisioning difference.
    delay = t.provisioning + t.copy_on_new_instance - own.provisioning - own.copy_on_new_instance
    assert delay > 0
    assert v.result.summary.served_after_seconds == pytest.approx(
        by["configured"].result.summary.served_after_seconds + delay, abs=1
    )


def test_capacity_fallback_does_not_apply_without_pools():
    w = select_workloads(load_config(ROOT / "examples" / "qwen3-8b.yaml")).workloads[0]
    v = {v.name: v for v in simulate_workload(w, default_traffic(w)).variants}["capacity_fallback"]
    assert v.result is None and "no capacity.fallback" in v.label
    assert w.fallback_instance_type is None


def test_capacity_fallback_uses_the_smaller_copies_per_instance_and_says_so():
    data = yaml.safe_load(FALLBACK.read_text())
    pools = data["endpoints"][0]["capacity"]["fallback"]
    pools[0]["components"] = {"qwen3-14b": {"resources": {"accelerators": 4, "memory_mb": 131072, "cpus": 32}}}
    [w] = select_workloads(parse_config(data)).workloads
    assert w.spec().copies_per_instance == 2
    assert w._fallback_spec().copies_per_instance == 1
    assert any("ml.g5.12xlarge holds 1 copies per instance" in n for n in w.notes)
