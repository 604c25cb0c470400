"""Cost: hourly at min / initial / max, a monthly figure for a daily peak, and the scale-to-zero saving."""

from __future__ import annotations

import pytest

from fastscale.infra.analysis.estimate import cost_config, cost_what_if, load_params
from fastscale.infra.base import catalog
from fastscale.infra.config import load_config, parse_config
from fastscale.infra.model.resolved import resolve
from tests.conftest import ROOT

MONTH = load_params().cost.hours_per_month.value
LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def config(instance_type="ml.g6.2xlarge", instances=None, components=False):
    ep = {"name": "e", "instance_type": instance_type, "instances": instances or {"initial": 2, "min": 1, "max": 4}}
    if components:
        ep["inference_components"] = [
            {"name": "c", "image": LMI, "model_size_gb": 8, "resources": {"accelerators": 1, "memory_mb": 1024},
             "copies": {"initial": 1, "min": 0, "max": 2}}
        ]
    else:
        ep["model"] = {"image": LMI, "model_size_gb": 8}
    return parse_config({"project": "p", "region": "us-east-1", "endpoints": [ep]})


def test_hourly_cost_at_each_capacity():
    price = catalog.get("ml.g6.2xlarge").price_per_hour_usd
    [line] = cost_config(resolve(config())).endpoints
    assert line.hourly_usd == {"min": pytest.approx(price, abs=0.01), "initial": pytest.approx(2 * price, abs=0.01),
                               "max": pytest.approx(4 * price, abs=0.01)}


@pytest.mark.parametrize("hours", [0, 2, 12, 24])
def test_monthly_cost_follows_the_daily_peak(hours):
    price = catalog.get("ml.g6.2xlarge").price_per_hour_usd
    peak = hours * MONTH / 24
    expected = price * (4 * peak + 1 * (MONTH - peak))
    assert cost_config(resolve(config()), hours).endpoints[0].monthly_usd == pytest.approx(expected, abs=0.01)


def test_default_peak_comes_from_the_parameters():
    report = cost_config(resolve(config()))
    assert report.hours_at_max_per_day == load_params().cost.default_hours_at_max_per_day.value


def test_more_peak_hours_cost_more():
    assert cost_config(resolve(config()), 6).total_monthly() > cost_config(resolve(config()), 1).total_monthly()


def test_scale_to_zero_saves_a_month_of_one_instance_on_an_idle_endpoint():
    price = catalog.get("ml.g6.12xlarge").price_per_hour_usd
    zero = cost_config(resolve(config("ml.g6.12xlarge", {"initial": 1, "min": 0, "max": 2}, components=True)))
    [line] = zero.endpoints
    assert line.scales_to_zero and line.scale_to_zero_available
    assert line.idle_monthly_usd == {"min_1": pytest.approx(price * MONTH, abs=0.01), "min_0": 0.0}
    assert line.scale_to_zero_saves_monthly_usd == pytest.approx(price * MONTH, abs=0.01)
    assert line.hourly_usd["min"] == 0


def test_single_model_endpoints_cannot_scale_to_zero():
    [line] = cost_config(resolve(config())).endpoints
    assert not line.scale_to_zero_available and "inference components" in line.note


def test_totals_add_up_across_endpoints():
    report = cost_config(resolve(load_config(ROOT / "examples" / "multi-model.yaml")))
    assert report.total_monthly() == pytest.approx(sum(e.monthly_usd for e in report.endpoints), abs=0.01)
    d = report.to_dict()
    assert d["currency"] == "USD" and d["hours_per_month"] == MONTH
    assert set(d["total"]) == {"hourly_usd", "monthly_usd"}


def test_unpriced_type_is_reported_not_guessed():
    report = cost_config(resolve(config("ml.c7i.2xlarge")))
    [line] = report.endpoints
    assert line.price_per_hour_usd is None and line.monthly_usd is None and "no catalog price" in line.note
    assert report.total_monthly() == 0


def test_what_if_cost_peaks_at_max_instances():
    price = catalog.get("ml.g5.2xlarge").price_per_hour_usd
    [line] = cost_what_if("ml.g5.2xlarge", max_instances=3, hours_at_max_per_day=24).endpoints
    assert line.monthly_usd == pytest.approx(3 * price * MONTH, abs=0.01)


def test_hours_out_of_range_are_refused():
    with pytest.raises(ValueError):
        cost_config(resolve(config()), 25)


def _fixed_copies(autoscaling: bool, instances_max: int = 1):
    return parse_config({
        "project": "p", "region": "us-east-1",
        "endpoints": [{
            "name": "e", "instance_type": "ml.g6.2xlarge", "instances": {"initial": 1, "min": 1, "max": instances_max},
            "inference_components": [{
                "name": "c", "image": "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128",
                "model_size_gb": 16, "resources": {"accelerators": 1, "memory_mb": 1024},
                "copies": {"initial": 2, "min": 2, "max": 2}, "autoscaling": {"enabled": autoscaling},
            }],
        }],
    })


def test_cost_counts_the_instances_the_copies_force():
    # Two 1-GPU copies on a 1-GPU type need two instances, whatever instances says.
    [line] = cost_config(resolve(_fixed_copies(False))).endpoints
    price = catalog.get("ml.g6.2xlarge").price_per_hour_usd
    assert line.instances.min == line.instances.max == 2
    assert line.hourly_usd["min"] == round(2 * price, 2)
    assert "need 2 instance(s)" in line.note


def test_no_idle_tail_without_auto_scaling():
    # Instances 1-4: with auto scaling an instance above the minimum bills after a peak until released ...
    assert cost_config(resolve(_fixed_copies(True, instances_max=4))).endpoints[0].idle_tail is not None
    # ... without it nothing scales in, so there is no tail to bill.
    assert cost_config(resolve(_fixed_copies(False, instances_max=4))).endpoints[0].idle_tail is None
