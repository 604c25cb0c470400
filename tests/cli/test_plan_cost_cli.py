"""`plan` and `deploy` show the stack's monthly on-demand cost before and after the change, and carry it in --json:
against the real terraform binary, on terraform_data stacks whose real plans are given their SageMaker types
(tests/cost_support.py has the scenarios, tests/rollout_support.py says what is real)."""

from __future__ import annotations

import json

import pytest

from fastscale.infra.base import catalog
from tests.aws.factories import deploy_single_model
from tests.cli.support import FixtureSynth, needs_binary, run
from tests.cli.test_output_width import assert_fits
from tests.cost_support import SCENARIOS, types_of
from tests.rollout_support import as_sagemaker

pytestmark = needs_binary

MONTH, PEAK = 730, 2  # h a month; h a day at max capacity (the estimate's typical day)
BASIS = (f"Cost per month (on-demand prices of us-east-1 as of {catalog.as_of()}; excludes storage, data transfer, "
         "CloudWatch):")


def money(x: float, signed: bool = False) -> str:
    text = f"${abs(x):,.2f}" if signed else f"${x:,.2f}"
    return (("-" if round(x, 2) < 0 else "+") + text) if signed else text


def month(instance_type: str, low: int, high: int) -> tuple[float, float, float]:
    """At min, typical day, at max: worked out here from the catalog's rate."""
    spec = catalog.get(instance_type)
    assert spec is not None
    r, peak = spec.price_per_hour_usd, MONTH * PEAK / 24
    return r * low * MONTH, r * (high * peak + low * (MONTH - peak)), r * high * MONTH


def flat(text: str) -> str:
    return " ".join(text.split())


def plan_scenario(runtime, aws, name: str) -> None:
    """The scenario's live version deployed (if it has one), its planned version synthesized from now on, and
    every saved plan read back with the scenario's SageMaker types."""
    live, planned = SCENARIOS[name]
    types = {**types_of(live), **types_of(planned)}
    real = runtime.runtime.plan_document
    runtime.use(plan_document=lambda runner, plan_file: as_sagemaker(real(runner, plan_file), types))
    if live is not None:
        deploy_single_model(aws)
        runtime.use(synthesize=FixtureSynth(live))
        first = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
        assert first.exit_code == 0, first.output
    runtime.use(synthesize=FixtureSynth(planned))


def test_plan_shows_the_cost_before_and_after_and_what_the_change_adds(runtime, project, aws, monkeypatch):
    plan_scenario(runtime, aws, "counts")  # demo-chat's scalable target: 1-4 -> 2-8 instances of ml.g6.2xlarge
    before, after = month("ml.g6.2xlarge", 1, 4), month("ml.g6.2xlarge", 2, 8)
    delta = [a - b for a, b in zip(after, before, strict=True)]

    monkeypatch.setenv("COLUMNS", "80")
    result = run("plan", "fastscale.yaml")
    assert result.exit_code == 0, result.output
    assert_fits(result.stdout)
    text = flat(result.stdout)
    assert BASIS in text
    assert f"before 1-4 x ml.g6.2xlarge {' '.join(money(x) for x in before)}" in text
    assert f"after 2-8 x ml.g6.2xlarge {' '.join(money(x) for x in after)}" in text
    assert f"change {' '.join(money(x, signed=True) for x in delta)}" in text
    assert (f"This change adds {money(delta[1])}/month at typical load ({money(delta[0], True)} at min, "
            f"{money(delta[2], True)} at max).") in text
    assert "typical day: 2 h at max capacity, the rest at min" in text

    monkeypatch.delenv("COLUMNS")
    summary = json.loads(run("plan", "fastscale.yaml", "--json").stdout)
    cost = summary["cost"]
    assert (cost["currency"], cost["as_of"], cost["price_region"], cost["new_stack"]) == ("USD", catalog.as_of(), "us-east-1", False)
    assert cost["excludes"] == ["storage", "data transfer", "CloudWatch"]
    [chat] = cost["endpoints"]
    assert (chat["endpoint"], chat["status"]) == ("demo-chat", "changed")
    keys = ("min", "typical", "max")
    assert chat["before"]["monthly_usd"] == {k: pytest.approx(v, abs=0.006) for k, v in zip(keys, before, strict=True)}
    assert chat["after"]["monthly_usd"] == {k: pytest.approx(v, abs=0.006) for k, v in zip(keys, after, strict=True)}
    assert cost["delta_monthly_usd"] == {k: pytest.approx(v, abs=0.006) for k, v in zip(keys, delta, strict=True)}
    assert cost["total"]["before"] == chat["before"]["monthly_usd"] and cost["total"]["after"] == chat["after"]["monthly_usd"]

    deployed = run("deploy", "fastscale.yaml", "--auto-approve", "--json", "--no-wait")
    assert deployed.exit_code == 0, deployed.output
    assert json.loads(deployed.stdout)["cost"]["delta_monthly_usd"] == cost["delta_monthly_usd"]

    # Nothing left to change: no plan to price.
    again = run("plan", "fastscale.yaml")
    assert "No changes" in again.stdout and "Cost per month" not in again.stdout


def test_a_first_deploy_is_a_new_stack(runtime, project, aws):
    plan_scenario(runtime, aws, "create")
    at_min, typical, at_max = month("ml.g6.2xlarge", 1, 4)
    headline = (f"New stack: it adds {money(typical)}/month at typical load ({money(at_min)} at min, "
                f"{money(at_max)} at max).")

    result = run("plan", "fastscale.yaml")
    assert result.exit_code == 0, result.output
    assert headline in flat(result.stdout)
    assert "before (new) - - -" in flat(result.stdout)
    cost = json.loads(run("plan", "fastscale.yaml", "--json").stdout)["cost"]
    assert cost["new_stack"] is True and cost["total"]["before"] is None
    assert cost["endpoints"][0]["status"] == "new" and cost["endpoints"][0]["before"] is None

    # deploy shows it with the plan, before it applies (moto holds what the apply would create, for the check after).
    deploy_single_model(aws)
    deployed = run("deploy", "fastscale.yaml", "--auto-approve", "--no-wait")
    assert deployed.exit_code == 0, deployed.output
    shown = flat(deployed.stdout)
    assert BASIS in shown and headline in shown
    assert shown.index(headline) < shown.index("Live state after deploy")


def test_a_type_without_a_catalog_price_is_price_unknown(runtime, project, aws):
    plan_scenario(runtime, aws, "unknown_price")
    result = run("plan", "fastscale.yaml")
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert "before 1-2 x ml.m5.xlarge price unknown price unknown price unknown" in text
    assert ("The change's cost is unknown: no catalog price for ml.m5.xlarge (the catalog prices accelerator "
            "instance types).") in text
    cost = json.loads(run("plan", "fastscale.yaml", "--json").stdout)["cost"]
    assert cost["delta_monthly_usd"] is None and cost["total"]["complete"] is False
    assert cost["endpoints"][0]["after"]["monthly_usd"] is None
