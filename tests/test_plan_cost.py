"""The stack's monthly on-demand cost before and after a plan, read from plans the real Terraform made
(tests/fixtures/plans/cost_*.json, recorded by tests/cost_support.py: a create, an instance-type change, a count
change, a removed endpoint, a type without a price, inference components) and from the plan of a first deploy of
every example. The expected figures are worked out here from the catalog's rates, not by the code under test."""

from __future__ import annotations

import copy

import pytest

from fastscale.infra.analysis.estimate import cost_config
from fastscale.infra.base import catalog
from fastscale.infra.config import load_config
from fastscale.infra.terraform.plan_cost import ZERO, plan_cost
from fastscale.stacks.app import synthesize_document
from tests.conftest import EXAMPLES
from tests.cost_support import create_plan, load_plan

MONTH = 730  # h, AWS's convention (estimate_params.json cost.hours_per_month)
PEAK = 2  # h a day at max capacity: the estimate's typical day (cost.default_hours_at_max_per_day)


def rate(instance_type: str) -> float:
    spec = catalog.get(instance_type)
    assert spec is not None
    return spec.price_per_hour_usd


def month(instance_type: str, low: int, high: int) -> dict[str, float]:
    """A month at min, of typical days, and at max, worked out by hand (to the cent, as the output rounds)."""
    r = rate(instance_type)
    peak_hours = MONTH * PEAK / 24
    return {"min": r * low * MONTH, "typical": r * (high * peak_hours + low * (MONTH - peak_hours)), "max": r * high * MONTH}


def minus(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    return {k: a[k] - b[k] for k in a}


def cents(figures: dict[str, float]) -> dict[str, float]:
    return {k: pytest.approx(v, abs=0.006) for k, v in figures.items()}


def figures(fleet) -> dict[str, float] | None:
    return fleet.monthly.to_dict() if fleet.monthly is not None else None


def test_a_first_deploy_is_a_new_stack_priced_after_only():
    cost = plan_cost(load_plan("create"), "us-east-1")
    [chat] = cost.endpoints
    assert (chat.endpoint, chat.status, chat.before) == ("demo-chat", "new", None)
    assert chat.after.describe() == "1-4 x ml.g6.2xlarge"
    assert figures(chat.after) == cents(month("ml.g6.2xlarge", 1, 4))
    assert cost.new_stack and cost.total("before") is None
    assert cost.delta.to_dict() == cents(month("ml.g6.2xlarge", 1, 4))
    doc = cost.to_dict()
    assert doc["new_stack"] is True and doc["total"] == {"before": None, "after": cents(month("ml.g6.2xlarge", 1, 4)), "complete": True}
    assert doc["currency"] == "USD" and doc["as_of"] == catalog.as_of() and doc["price_region"] == "us-east-1"
    typical = month("ml.g6.2xlarge", 1, 4)
    assert cost.summary() == (f"New stack: it adds ${typical['typical']:,.2f}/month at typical load "
                              f"(${typical['min']:,.2f} at min, ${typical['max']:,.2f} at max).")


def test_a_new_instance_type_is_priced_at_its_own_rate():
    # hashicorp/aws plans the new configuration's name from name_prefix: the endpoint names it only after apply.
    cost = plan_cost(load_plan("instance_type"), "us-east-1")
    [chat] = cost.endpoints
    assert chat.status == "changed"
    assert (chat.before.describe(), chat.after.describe()) == ("1-4 x ml.g6.2xlarge", "1-4 x ml.g6e.2xlarge")
    before, after = month("ml.g6.2xlarge", 1, 4), month("ml.g6e.2xlarge", 1, 4)
    assert (figures(chat.before), figures(chat.after)) == (cents(before), cents(after))
    assert cost.delta.to_dict() == cents(minus(after, before))
    assert not cost.new_stack
    d = minus(after, before)
    assert cost.summary() == (f"This change adds ${d['typical']:,.2f}/month at typical load "
                              f"(+${d['min']:,.2f} at min, +${d['max']:,.2f} at max).")


def test_new_counts_of_the_scalable_target_change_the_cost():
    cost = plan_cost(load_plan("counts"), "us-east-1")
    [chat] = cost.endpoints
    assert (chat.before.describe(), chat.after.describe()) == ("1-4 x ml.g6.2xlarge", "2-8 x ml.g6.2xlarge")
    assert cost.delta.to_dict() == cents(minus(month("ml.g6.2xlarge", 2, 8), month("ml.g6.2xlarge", 1, 4)))
    as_json = cost.to_dict()["endpoints"][0]
    assert as_json["before"]["variants"][0] == {
        "variant": "AllTraffic", "instance_type": "ml.g6.2xlarge", "instances": {"min": 1, "max": 4},
        "fallback_pools": [], "price_per_hour_usd": rate("ml.g6.2xlarge"), "price_is_estimate": False}
    assert as_json["after"]["variants"][0]["instances"] == {"min": 2, "max": 8}


def test_a_removed_endpoint_takes_its_cost_away_and_an_unchanged_one_adds_nothing():
    cost = plan_cost(load_plan("destroy"), "us-east-1")
    chat, embed = cost.endpoints
    assert (chat.status, chat.delta) == ("unchanged", ZERO)
    assert (embed.endpoint, embed.status, embed.after) == ("demo-embed", "removed", None)
    # No auto scaling: the configuration's initial count is the fleet at min and at max alike.
    assert embed.before.describe() == "2 x ml.g5.xlarge"
    removed = month("ml.g5.xlarge", 2, 2)
    assert cost.delta.to_dict() == cents({k: -v for k, v in removed.items()})
    assert cost.total("after").to_dict() == cents(month("ml.g6.2xlarge", 1, 4))
    assert cost.summary().startswith(f"This change saves ${removed['typical']:,.2f}/month at typical load")


def test_a_type_the_catalog_has_no_price_for_is_price_unknown_never_a_number():
    cost = plan_cost(load_plan("unknown_price"), "us-east-1")
    [cpu] = cost.endpoints
    assert cpu.before.monthly is None and cpu.after.monthly is None and cpu.delta is None and cost.delta is None
    assert cpu.after.unknown == ("no catalog price for ml.m5.xlarge (the catalog prices accelerator instance types)",)
    doc = cost.to_dict()
    assert doc["delta_monthly_usd"] is None and doc["total"]["complete"] is False
    assert doc["endpoints"][0]["after"]["monthly_usd"] is None
    assert doc["endpoints"][0]["after"]["variants"][0]["price_per_hour_usd"] is None
    assert cost.summary() == ("The change's cost is unknown: no catalog price for ml.m5.xlarge "
                              "(the catalog prices accelerator instance types).")


def test_a_region_the_catalog_has_no_prices_for_is_price_unknown():
    cost = plan_cost(load_plan("counts"), "eu-west-1")
    [chat] = cost.endpoints
    assert chat.before.monthly is None and chat.after.monthly is None and cost.delta is None
    assert chat.after.unknown == ("the catalog has on-demand prices of us-east-1 only, none of eu-west-1",)
    assert cost.to_dict()["region"] == "eu-west-1"


def test_an_unchanged_endpoint_without_a_price_leaves_the_change_known():
    plan = copy.deepcopy(load_plan("destroy"))
    for rc in plan["resource_changes"]:
        if rc["name"] == "chat_config":
            for side in ("before", "after"):
                rc["change"][side]["production_variants"][0]["instance_type"] = "ml.m5.xlarge"
    cost = plan_cost(plan, "us-east-1")
    chat, embed = cost.endpoints
    assert chat.status == "unchanged" and chat.after.monthly is None and chat.delta == ZERO
    assert cost.delta.to_dict() == cents({k: -v for k, v in month("ml.g5.xlarge", 2, 2).items()})
    assert not cost.complete("after") and cost.to_dict()["total"]["complete"] is False


def test_copies_of_components_need_instances_beyond_managed_scaling():
    # Two components of one GPU a copy on ml.g6.12xlarge (4 GPUs), managed instance scaling 0-1: 4 + 4 copies at
    # most need 2 instances, 4 + 8 need 3 (as `fastscale estimate` counts them).
    assert rate("ml.g6.12xlarge") and catalog.get("ml.g6.12xlarge").accelerator_count == 4
    cost = plan_cost(load_plan("components"), "us-east-1")
    [shared] = cost.endpoints
    assert (shared.before.describe(), shared.after.describe()) == ("0-2 x ml.g6.12xlarge", "0-3 x ml.g6.12xlarge")
    assert cost.delta.to_dict() == cents(minus(month("ml.g6.12xlarge", 0, 3), month("ml.g6.12xlarge", 0, 2)))


def test_counts_known_only_after_apply_have_no_price():
    plan = copy.deepcopy(load_plan("create"))
    for rc in plan["resource_changes"]:
        if rc["name"] == "chat_target":
            rc["change"]["after"]["max_capacity"] = None
            rc["change"]["after_unknown"]["max_capacity"] = True
    [chat] = plan_cost(plan, "us-east-1").endpoints
    assert chat.after.monthly is None
    assert chat.after.unknown == ("the instance counts of ml.g6.2xlarge are known only after apply",)


def test_an_estimated_price_is_marked():
    plan = copy.deepcopy(load_plan("create"))
    for rc in plan["resource_changes"]:
        if rc["name"] == "chat_config":
            rc["change"]["after"]["production_variants"][0]["instance_type"] = "ml.g7.2xlarge"
    assert catalog.get("ml.g7.2xlarge").price_is_estimate
    cost = plan_cost(plan, "us-east-1")
    assert cost.endpoints[0].after.estimated
    assert cost.to_dict()["endpoints"][0]["after"]["variants"][0]["price_is_estimate"] is True
    assert any(note.startswith("(est.)") for note in cost.notes())


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_a_first_deploy_of_every_example_costs_what_estimate_says(example):
    config = load_config(example)
    cost = plan_cost(create_plan(synthesize_document(config)), config.region)
    estimate = cost_config(config)
    assert cost.new_stack
    assert round(cost.total("after").typical, 2) == estimate.total_monthly()
    by_name = {e.endpoint: e for e in cost.endpoints}
    for line in estimate.endpoints:
        [mine] = [e for name, e in by_name.items() if name.endswith(f"-{line.endpoint}")]
        assert [p.variant.instance_type for p in mine.after.variants] == [line.instance_type]
        assert (mine.after.variants[0].variant.low, mine.after.variants[0].variant.high) == (line.instances.min, line.instances.max)
        if line.pools:
            assert mine.after.variants[0].variant.fallback == tuple(p.instance_type for p in line.pools[1:])
