"""The timeline model behaves physically: monotonic in size and bandwidth, caching never slower, the right
scenarios per workload, and nothing but the parameters file behind its numbers."""

from __future__ import annotations

import ast
import copy
import dataclasses
import itertools
import sys
from pathlib import Path

import pytest

from fastscale.infra.analysis.estimate import estimate_config, load_params, scenarios, what_if
from fastscale.infra.analysis.estimate.timeline import (
    WorkloadInputs,
    bandwidth_gb_per_s,
    shared_transfers,
)
from fastscale.infra.base import catalog
from fastscale.infra.config import parse_config
from fastscale.infra.model.resolved import resolve
from tests.conftest import ROOT
from tests.params_support import parameter_leaves

PARAMS = load_params()
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"

# A spread of accelerator types: small and large, "up to" and fixed bandwidth, GPU and Neuron.
TYPES = ["ml.g4dn.xlarge", "ml.g5.2xlarge", "ml.g6.2xlarge", "ml.g6.12xlarge", "ml.inf2.8xlarge", "ml.p4d.24xlarge"]


def inputs(instance_type: str = "ml.g6.2xlarge", **overrides) -> WorkloadInputs:
    spec = catalog.get(instance_type)
    base = dict(
        instance_type=spec.instance_type,
        family=spec.family,
        network_gbps=spec.network_gbps,
        accelerators=spec.accelerator_count,
        model_size_gb=16.0,
        image_size_gb=17.7,
        metric="high_resolution",
        image_cacheable=True,
        data_cache=True,
        scale_from_zero=(60, 1),
    )
    base.update(overrides)
    return WorkloadInputs(**base)


def totals(i: WorkloadInputs) -> dict[str, float]:
    return {s.name: s.total_seconds for s in scenarios(i, PARAMS)}


# --------------------------------------------------------------------------------------------- physics


def test_shared_transfer_keeps_the_link_busy():
    # 10 GB image and 4 GB model on 1 GB/s: both at 0.5 GB/s for 8 s, then the image alone for 6 s.
    image, model = shared_transfers(10, 4, 1.0)
    assert model == pytest.approx(8)
    assert image == pytest.approx(14)
    # Symmetric when the model is the larger one.
    assert shared_transfers(4, 10, 1.0) == pytest.approx((8, 14))


def test_download_saturates_at_the_s3_connections_limit():
    # A bigger link does not make one S3 download faster once the connections' limit binds ...
    s3 = PARAMS.network.s3_download_gb_per_second.value
    assert bandwidth_gb_per_s(400, PARAMS) == bandwidth_gb_per_s(10, PARAMS) == s3
    # ... and a link slower than that limit is the limit.
    slow = 0.5
    assert bandwidth_gb_per_s(slow, PARAMS) == pytest.approx(slow / 8 * PARAMS.network.link_efficiency.value)
    assert bandwidth_gb_per_s(slow, PARAMS) < s3


def test_140_gb_to_a_p4d_takes_minutes_not_seconds():
    sc = {s.name: s for s in scenarios(inputs("ml.p4d.24xlarge", model_size_gb=140, accelerators=8), PARAMS)}
    assert sc["instance_image_cache"].phase("model_download").seconds > 600


@pytest.mark.parametrize("instance_type", TYPES)
def test_bigger_model_takes_longer(instance_type):
    small, big = totals(inputs(instance_type, model_size_gb=4)), totals(inputs(instance_type, model_size_gb=40))
    for name in small:
        assert big[name] > small[name], name


@pytest.mark.parametrize("instance_type", TYPES)
def test_bigger_image_never_faster_and_slower_when_pulled(instance_type):
    small, big = totals(inputs(instance_type, image_size_gb=5)), totals(inputs(instance_type, image_size_gb=25))
    for name in small:
        assert big[name] >= small[name], name
    assert big["instance_no_image_cache"] > small["instance_no_image_cache"]
    assert big["instance_image_cache"] == small["instance_image_cache"]  # the cache makes image size irrelevant


@pytest.mark.parametrize("instance_type", TYPES)
def test_more_bandwidth_is_faster(instance_type):
    base = inputs(instance_type)
    fast, slow = totals(base), totals(dataclasses.replace(base, network_gbps=0.5))
    for name in slow:
        if name == "copy_data_cache":  # nothing crosses the network
            assert fast[name] == slow[name]
        else:
            assert fast[name] < slow[name], name


@pytest.mark.parametrize(
    "instance_type, model_gb, image_gb", list(itertools.product(TYPES, (0, 1, 16, 140), (0.5, 10, 30)))
)
def test_caching_is_never_slower(instance_type, model_gb, image_gb):
    t = totals(inputs(instance_type, model_size_gb=model_gb, image_size_gb=image_gb))
    assert t["copy_data_cache"] <= t["copy_no_data_cache"]
    assert t["instance_image_cache"] <= t["instance_no_image_cache"]
    # A new copy on a running instance never waits for an instance.
    assert t["copy_no_data_cache"] < t["instance_image_cache"]


def test_more_accelerators_load_big_models_faster():
    one = scenarios(inputs("ml.p4d.24xlarge", model_size_gb=140, accelerators=1), PARAMS)[0]
    eight = scenarios(inputs("ml.p4d.24xlarge", model_size_gb=140, accelerators=8), PARAMS)[0]
    load = "container_start_model_load"
    assert eight.phase(load).seconds < one.phase(load).seconds


def test_high_resolution_metric_detects_sooner_than_invocations():
    fast = scenarios(inputs(metric="high_resolution"), PARAMS)[0].phase("detection").seconds
    slow = scenarios(inputs(metric="invocations"), PARAMS)[0].phase("detection").seconds
    assert slow > 3 * fast


def test_scale_from_zero_alarm_period_drives_its_detection():
    short = scenarios(inputs(scale_from_zero=(60, 1)), PARAMS)[-1]
    long = scenarios(inputs(scale_from_zero=(60, 3)), PARAMS)[-1]
    assert short.name == long.name == "from_zero"
    assert long.phase("detection").seconds - short.phase("detection").seconds == pytest.approx(120)


def test_pull_and_download_run_in_parallel():
    s = scenarios(inputs(), PARAMS)
    uncached = next(x for x in s if x.name == "instance_no_image_cache")
    pull, download = uncached.phase("image_pull"), uncached.phase("model_download")
    assert pull.start == download.start
    assert uncached.phase("container_start_model_load").start == pytest.approx(max(pull.end, download.end))
    assert uncached.total_seconds < sum(p.seconds for p in uncached.phases)


def test_scenario_json_shape():
    d = scenarios(inputs(), PARAMS)[0].to_dict()
    assert set(d) == {"name", "total_seconds", "first_capacity_seconds", "full_capacity_seconds", "phases"}
    assert all(set(p) == {"name", "seconds"} for p in d["phases"])


# --------------------------------------------------------------------------------------------- applicability


def config_with(**endpoint_overrides):
    ep = {"name": "e", "instance_type": "ml.g6.12xlarge", "instances": {"initial": 1, "min": 1, "max": 2}}
    ep.update(endpoint_overrides)
    return parse_config({"project": "p", "region": "us-east-1", "endpoints": [ep]})


def component(**overrides):
    c = {"name": "c", "image": LMI, "model_size_gb": 8, "resources": {"accelerators": 1, "memory_mb": 1024}}
    c.update(overrides)
    return c


def names(config) -> list[list[str]]:
    return [[s.name for s in e.scenarios] for e in estimate_config(resolve(config))]


def test_single_model_endpoint_scales_by_instances_only():
    cfg = config_with(model={"image": LMI, "model_size_gb": 8})
    assert names(cfg) == [["instance_image_cache", "instance_no_image_cache"]]


def test_component_scenarios_follow_its_settings():
    cfg = config_with(
        instances={"initial": 1, "min": 0, "max": 2},
        inference_components=[
            component(name="cached"),
            component(name="uncached", data_cache=False),
            component(name="zero", copies={"initial": 1, "min": 0, "max": 2}),
        ],
    )
    assert names(cfg) == [
        ["copy_data_cache", "copy_no_data_cache", "instance_image_cache", "instance_no_image_cache"],
        ["copy_no_data_cache", "instance_image_cache", "instance_no_image_cache"],
        ["copy_data_cache", "copy_no_data_cache", "instance_image_cache", "instance_no_image_cache", "from_zero"],
    ]


def test_image_outside_ecr_gets_no_image_cache():
    cfg = config_with(model={"image": "docker.io/vllm/vllm-openai:v0.9.0", "model_size_gb": 8})
    [est] = estimate_config(resolve(cfg))
    assert [s.name for s in est.scenarios] == ["instance_no_image_cache"]
    assert any("not in Amazon ECR" in n for n in est.notes)


def test_disabled_autoscaling_has_no_detection_phase():
    cfg = config_with(model={"image": LMI, "model_size_gb": 8, "autoscaling": {"enabled": False}})
    [est] = estimate_config(resolve(cfg))
    assert all(s.phase("detection") is None and s.phase("scaling_decision") is None for s in est.scenarios)
    assert any("disabled" in n for n in est.notes)


def test_component_loads_on_its_own_accelerators():
    cfg = config_with(inference_components=[component(resources={"accelerators": 2, "memory_mb": 1024})])
    [est] = estimate_config(resolve(cfg))
    assert est.inputs.accelerators == 2


def test_missing_image_size_uses_the_documented_default():
    cfg = config_with(model={"image": LMI, "model_size_gb": 8})
    [est] = estimate_config(resolve(cfg))
    assert est.inputs.image_size_gb == PARAMS.image.default_size_gb.value
    assert any("image_size_gb not set" in n for n in est.notes)


def test_workloads_that_cannot_be_estimated_say_why():
    no_size = config_with(model={"image": LMI})
    cpu = config_with(instance_type="ml.c7i.2xlarge", model={"image": LMI, "model_size_gb": 1})
    [a], [b] = estimate_config(resolve(no_size)), estimate_config(resolve(cpu))
    # A model without a size (from the Hugging Face Hub) is estimated with what is known, and says so.
    assert a.scenarios and a.missing == ("model_size_gb",) and a.notes[0].startswith("model_size_gb not set")
    assert all(sc.phase("model_download").seconds == 0 for sc in a.scenarios)
    assert b.scenarios == () and "no accelerator" in b.notes[0]


def test_examples_are_all_estimated():
    from fastscale.infra.config import load_config

    for path in sorted((ROOT / "examples").glob("*.yaml")):
        for est in estimate_config(resolve(load_config(path))):
            assert est.scenarios, (path.name, est.notes)


def test_what_if_matches_an_equivalent_config():
    cfg = config_with(
        instance_type="ml.g6.2xlarge",
        inference_components=[
            component(image_size_gb=10, model_size_gb=12, copies={"initial": 1, "min": 0, "max": 1}),
        ],
    )
    [from_config] = estimate_config(resolve(cfg))
    quick = what_if("ml.g6.2xlarge", 12, 10, accelerators=1)
    assert [s.to_dict() for s in quick.scenarios] == [s.to_dict() for s in from_config.scenarios]


def test_what_if_rejects_impossible_inputs():
    from fastscale.infra.analysis.estimate import EstimateInputError

    with pytest.raises(EstimateInputError, match="did you mean"):
        what_if("ml.g6.2xlarg", 8)
    with pytest.raises(EstimateInputError, match="1 accelerator"):
        what_if("ml.g6.2xlarge", 8, accelerators=4)


# --------------------------------------------------------------------------------------------- parameters


def test_every_parameter_has_a_unit_and_a_known_source():
    raw = PARAMS.model_dump()
    known = set(raw["sources"])
    leaves = parameter_leaves(raw)
    assert len(leaves) >= 15
    for path, leaf in leaves:
        src = leaf["source"]
        assert leaf["unit"], path
        cited = {c.strip() for c in src.split(":")[0].split(",")}
        assert src.startswith(("assumption", "fitted")) or cited <= known, path
        if src.startswith("fitted"):
            assert any(k in src for k in known), f"{path}: a fitted value must name the run it was fitted to"


def test_parameters_agree_with_the_detection_module():
    from fastscale.infra.model import detection

    d = PARAMS.detection
    assert d.high_resolution.period_seconds.value == detection.HIGH_RESOLUTION_PERIOD_S
    assert d.invocations.period_seconds.value == detection.STANDARD_PERIOD_S
    assert d.high_resolution.datapoints.value == detection.SCALE_OUT_DATAPOINTS
    assert d.invocations.datapoints.value == detection.SCALE_OUT_DATAPOINTS


def test_model_code_holds_no_magic_numbers():
    # Only structural constants may appear: 0 and 1 (counting), 2 (two transfers share a link fairly),
    # 8 (bits per byte). Every other number must come from the parameters file.
    allowed = {0, 1, 2, 8}
    for name in ("timeline.py", "cost.py", "fallback.py"):
        tree = ast.parse((ROOT / "infra" / "analysis" / "estimate" / name).read_text())
        numbers = {
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
        }
        assert numbers <= allowed | {24}, (name, numbers - allowed)  # 24 hours a day, for --hours-at-max


def test_malformed_parameters_are_rejected(tmp_path):
    from fastscale.infra.analysis.estimate import ParamsError

    raw = copy.deepcopy(PARAMS.model_dump())
    raw["network"]["link_efficiency"]["value"] = 1.5
    bad = tmp_path / "params.json"
    import json

    bad.write_text(json.dumps(raw))
    with pytest.raises(ParamsError, match="efficiency"):
        load_params(bad)
    del raw["startup"]
    bad.write_text(json.dumps(raw))
    with pytest.raises(ParamsError, match="startup"):
        load_params(bad)


def test_parameters_change_the_estimate(tmp_path):
    import json

    raw = PARAMS.model_dump()
    raw["provisioning_seconds"]["default"]["value"] += 100
    raw["provisioning_seconds"]["by_family"] = {}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(raw))
    other = load_params(path)
    base = {s.name: s.total_seconds for s in scenarios(inputs("ml.g6.2xlarge"), PARAMS)}
    slower = {s.name: s.total_seconds for s in scenarios(inputs("ml.g6.2xlarge"), other)}
    assert slower["instance_image_cache"] == pytest.approx(base["instance_image_cache"] + 100)
    assert slower["copy_data_cache"] == base["copy_data_cache"]
    assert Path(ROOT / "infra" / "analysis" / "estimate_params.json").is_file()


def test_packaged_parameters_load_from_any_working_directory(tmp_path):
    # The parameters are package data of fastscale.infra: reading them must not depend on the repository
    # being the current directory (an installed fastscale runs from anywhere).
    import subprocess

    code = "from fastscale.infra.analysis.estimate.params import _packaged; print(_packaged().cost.hours_per_month.value)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "730.0"
