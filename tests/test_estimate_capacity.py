"""The capacity-fallback scenario, cost per instance pool and the scale-in policy's idle tail."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.analysis.estimate import cost_config, estimate_config, load_params
from fastscale.infra.analysis.estimate.timeline import load_seconds
from fastscale.infra.base import catalog
from fastscale.infra.config import load_config, parse_config
from fastscale.infra.model.resolved import resolve
from tests.conftest import ROOT
from tests.rules.conftest import components_config, single_model_config

FALLBACK = ROOT / "examples" / "capacity-fallback.yaml"
SHORT_TAIL = ROOT / "examples" / "scale-to-zero-short-tail.yaml"
PARAMS = load_params()
WAIT = PARAMS.capacity_fallback.insufficient_capacity_seconds.value


def test_fallback_to_a_like_pool_costs_the_wait_on_the_first_one():
    # ml.g5.12xlarge has the network and accelerators of ml.g6.12xlarge, and the same model runs on it.
    (est,) = estimate_config(resolve(load_config(FALLBACK)))
    fallback, new_instance = est.scenario("capacity_fallback"), est.scenario("instance_image_cache")
    assert fallback.phase("capacity_wait").seconds == WAIT
    assert fallback.total_seconds == pytest.approx(new_instance.total_seconds + WAIT)
    assert any("ml.g5.12xlarge (priority 2)" in n for n in est.notes)


def test_the_next_pool_runs_with_its_own_accelerators_and_network():
    data = load_config(FALLBACK).model_dump(mode="json", exclude_defaults=True)
    fallback = data["endpoints"][0]["capacity"]["fallback"]
    fallback[1]["priority"], fallback[0]["priority"] = 2, 3  # the L40S pool (1 GPU per copy) comes next
    (est,) = estimate_config(resolve(parse_config(data)))
    sc = est.scenario("capacity_fallback")
    assert sc.phase("container_start_model_load").seconds == pytest.approx(load_seconds(29.5, 1, PARAMS))
    g6e = catalog.get("ml.g6e.12xlarge")
    bandwidth = min(g6e.network_gbps / 8 * PARAMS.network.link_efficiency.value, PARAMS.network.s3_download_gb_per_second.value)
    assert sc.phase("model_download").seconds == pytest.approx(29.5 / bandwidth)
    assert sc.phase("image_pull").seconds == 0  # an ECR image on an accelerator type: cached


def test_no_fallback_scenario_without_pools_and_a_warning_past_the_provision_timeout(tmp_path):
    (est,) = estimate_config(resolve(parse_config(single_model_config())))
    assert est.scenario("capacity_fallback") is None
    data = single_model_config()
    data["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge"}], "provision_timeout": 300}
    raw = json.loads((ROOT / "infra" / "analysis" / "estimate_params.json").read_text())
    raw["capacity_fallback"]["insufficient_capacity_seconds"]["value"] = 250  # + 105 s provisioning > 300 s
    path = tmp_path / "params.json"
    path.write_text(json.dumps(raw))
    (est,) = estimate_config(resolve(parse_config(data)), load_params(path))
    assert est.scenario("capacity_fallback").phase("capacity_wait").seconds == 250
    assert any("exceed the provision timeout (300 s)" in n for n in est.notes)


def test_cost_per_pool_follows_each_pool_price():
    (line,) = cost_config(resolve(load_config(FALLBACK))).endpoints
    assert [p.instance_type for p in line.pools] == ["ml.g6.12xlarge", "ml.g5.12xlarge", "ml.g6e.12xlarge"]
    assert line.pools[0].monthly_usd == line.monthly_usd
    for pool in line.pools[1:]:
        assert pool.monthly_usd / line.monthly_usd == pytest.approx(pool.price_per_hour_usd / line.price_per_hour_usd, rel=1e-3)
    assert cost_config(resolve(parse_config(components_config()))).endpoints[0].pools == ()


def test_short_scale_in_cooldown_shortens_the_idle_tail():
    config = load_config(SHORT_TAIL)
    (line,) = cost_config(resolve(config)).endpoints
    tail = line.idle_tail
    detection = PARAMS.scale_in.detection_seconds.value / 60
    assert tail.minutes == detection + 5
    assert tail.default_minutes == detection + PARAMS.scale_in.default_cooldown_minutes.value
    days = PARAMS.cost.hours_per_month.value / 24
    max_instances = config.endpoints[0].instances.max  # the tail is priced at the maximum instances
    assert tail.monthly_usd == pytest.approx(line.price_per_hour_usd * max_instances * tail.minutes / 60 * days, abs=0.01)
    assert tail.monthly_usd < tail.default_monthly_usd


def test_single_model_endpoints_have_no_release_cooldown_and_fixed_capacity_no_tail():
    data = single_model_config()
    (line,) = cost_config(resolve(parse_config(data))).endpoints
    assert line.idle_tail.minutes == line.idle_tail.default_minutes == PARAMS.scale_in.detection_seconds.value / 60
    data["endpoints"][0]["instances"] = {"initial": 1, "min": 1, "max": 1}
    assert cost_config(resolve(parse_config(data))).endpoints[0].idle_tail is None


def test_cli_shows_the_fallback_scenario_and_the_pool_costs():
    result = CliRunner().invoke(cli, ["estimate", str(FALLBACK), "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    names = [s["name"] for s in out["estimates"][0]["scenarios"]]
    assert "capacity_fallback" in names
    assert [p["instance_type"] for p in out["cost"]["endpoints"][0]["pools"]][1] == "ml.g5.12xlarge"
    text = CliRunner().invoke(cli, ["estimate", str(SHORT_TAIL)]).stdout
    assert "idle tail / month" in text and "(default" in text
