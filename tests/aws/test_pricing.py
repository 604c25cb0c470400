"""The catalog's prices read again from the AWS Price List: GetProducts answered through botocore's Stubber (which
checks every request and every answer against the pricing service model) with a recorded answer in the real shape
(tests/fixtures/pricing/get_products_hosting.json: one list of pages per instance type, each ``PriceList`` entry a
product as a JSON string, as the API returns it), then the catalog rewritten by scripts/update_prices.py.
Nothing reaches AWS."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from fastscale.infra.aws.clients import AwsError
from fastscale.infra.aws.pricing import PriceListError, hosting_rates
from fastscale.infra.base import catalog
from fastscale.infra.base.catalog.refresh import refreshed, render
from tests.aws.factories import stubbed
from tests.conftest import ROOT

ANSWER_FILE = ROOT / "tests" / "fixtures" / "pricing" / "get_products_hosting.json"
ANSWERS: dict[str, list[dict[str, Any]]] = json.loads(ANSWER_FILE.read_text())["answers"]
CATALOG = ROOT / "infra" / "base" / "catalog" / "accelerators.json"


def expected_request(instance_type: str, token: str | None = None) -> dict[str, Any]:
    """What fastscale must ask for: AmazonSageMaker's real-time inference product of the type in us-east-1."""
    request = {
        "ServiceCode": "AmazonSageMaker",
        "FormatVersion": "aws_v1",
        "Filters": [
            {"Type": "TERM_MATCH", "Field": "regionCode", "Value": "us-east-1"},
            {"Type": "TERM_MATCH", "Field": "instanceName", "Value": instance_type},
            {"Type": "TERM_MATCH", "Field": "component", "Value": "Hosting"},
        ],
    }
    if token:
        request["NextToken"] = token
    return request


def queue(stubber, instance_type: str, pages: list[dict[str, Any]] | None = None) -> None:
    token = None
    for page in pages if pages is not None else ANSWERS[instance_type]:
        stubber.add_response("get_products", page, expected_request(instance_type, token))
        token = page.get("NextToken")


def products(instance_type: str) -> list[dict[str, Any]]:
    return [json.loads(entry) for page in ANSWERS[instance_type] for entry in page["PriceList"]]


def page_of(*items: dict[str, Any]) -> dict[str, Any]:
    return {"FormatVersion": "aws_v1", "PriceList": [json.dumps(p) for p in items]}


@pytest.fixture
def pricing():
    api, stubber = stubbed("pricing")
    yield api, stubber
    stubber.assert_no_pending_responses()


# --------------------------------------------------------------------------------------------- reading the rates


def test_every_page_is_read_and_a_type_without_a_product_has_no_rate(pricing):
    api, stubber = pricing
    for name in ANSWERS:
        queue(stubber, name)
    rates = hosting_rates(api, "us-east-1", list(ANSWERS))
    assert {name: r.price_per_hour_usd for name, r in rates.items()} == {
        "ml.g6.2xlarge": 1.3015,
        "ml.g5.xlarge": 1.408,  # on the second page
        "ml.g7e.2xlarge": 4.2039,
        "ml.p5.48xlarge": None,
        "ml.p5en.48xlarge": None,
    }
    assert rates["ml.g6.2xlarge"].skus == ("9QKWXHYX5B4J3M2E",)


def test_a_product_of_another_use_region_or_type_is_not_the_rate(pricing):
    api, stubber = pricing
    [hosting] = products("ml.g6.2xlarge")
    others = []
    for attribute, value in (("component", "Training"), ("regionCode", "us-west-2"), ("instanceName", "ml.g6.4xlarge")):
        other = copy.deepcopy(hosting)
        other["product"]["attributes"][attribute] = value
        for term in other["terms"]["OnDemand"].values():
            for dimension in term["priceDimensions"].values():
                dimension["pricePerUnit"]["USD"] = "9.9900000000"
        others.append(other)
    queue(stubber, "ml.g6.2xlarge", [page_of(*others, hosting)])
    queue(stubber, "ml.g5.xlarge", [page_of(*others)])
    rates = hosting_rates(api, "us-east-1", ["ml.g6.2xlarge", "ml.g5.xlarge"])
    assert rates["ml.g6.2xlarge"].price_per_hour_usd == 1.3015
    assert rates["ml.g5.xlarge"].price_per_hour_usd is None


def test_two_different_rates_for_one_type_stop_the_refresh(pricing):
    api, stubber = pricing
    [hosting] = products("ml.g6.2xlarge")
    second = copy.deepcopy(hosting)
    second["product"]["sku"] = "SECONDSKU0000000"
    for term in second["terms"]["OnDemand"].values():
        for dimension in term["priceDimensions"].values():
            dimension["pricePerUnit"]["USD"] = "1.5000000000"
    queue(stubber, "ml.g6.2xlarge", [page_of(hosting, second)])
    with pytest.raises(PriceListError, match=r"ml\.g6\.2xlarge has 2 on-demand Hosting rates in us-east-1 \(1\.3015, 1\.5\)"):
        hosting_rates(api, "us-east-1", ["ml.g6.2xlarge"])


def test_only_the_hourly_usd_dimension_is_the_rate(pricing):
    api, stubber = pricing
    [hosting] = products("ml.g6.2xlarge")
    [term] = hosting["terms"]["OnDemand"].values()
    term["priceDimensions"]["OTHER.DIMENSION"] = {"unit": "GB-Mo", "pricePerUnit": {"USD": "0.1400000000"},
                                                  "description": "storage", "rateCode": "OTHER.DIMENSION",
                                                  "beginRange": "0", "endRange": "Inf", "appliesTo": []}
    queue(stubber, "ml.g6.2xlarge", [page_of(hosting)])
    assert hosting_rates(api, "us-east-1", ["ml.g6.2xlarge"])["ml.g6.2xlarge"].price_per_hour_usd == 1.3015


def test_an_api_failure_is_one_aws_error(pricing):
    api, stubber = pricing
    stubber.add_client_error("get_products", "AccessDeniedException", "User is not authorized to perform: pricing:GetProducts",
                             400, expected_params=expected_request("ml.g6.2xlarge"))
    with pytest.raises(AwsError, match="AccessDeniedException"):
        hosting_rates(api, "us-east-1", ["ml.g6.2xlarge"])


# --------------------------------------------------------------------------------------------- rewriting the catalog


def test_the_committed_layout_is_kept():
    text = CATALOG.read_text(encoding="utf-8")
    assert render(json.loads(text)) == text


def test_a_refresh_without_rates_changes_only_the_date_and_the_source():
    text = CATALOG.read_text(encoding="utf-8")
    out, changes = refreshed(text, {}, "2027-01-15", "read by a test")
    assert changes == []
    old, new = text.splitlines(), out.splitlines()
    changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    assert changed == [('  "as_of": "2026-12-02",', '  "as_of": "2027-01-15",'),
                       (next(line for line in old if "every price with price_is_estimate false" in line),
                        '      "used_for": "read by a test"')]


def _load_script():
    spec = importlib.util.spec_from_file_location("update_prices", ROOT / "scripts" / "update_prices.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def small_catalog(tmp_path: Path) -> Path:
    """The committed catalog cut down to the types the recorded answer has."""
    doc = json.loads(CATALOG.read_text(encoding="utf-8"))
    doc["instances"] = [i for i in doc["instances"] if i["instance_type"] in ANSWERS]
    doc["price_estimates"] = {k: v for k, v in doc["price_estimates"].items() if k in ANSWERS}
    path = tmp_path / "accelerators.json"
    path.write_text(render(doc), encoding="utf-8")
    return path


def _instances(path: Path) -> dict[str, dict[str, Any]]:
    return {i["instance_type"]: i for i in json.loads(path.read_text())["instances"]}


def test_the_script_rewrites_the_prices_and_their_date(pricing, tmp_path, capsys):
    api, stubber = pricing
    path = small_catalog(tmp_path)
    before = _instances(path)
    assert before["ml.p5.48xlarge"]["price_is_estimate"] is False and before["ml.g7e.2xlarge"]["price_is_estimate"] is True
    for name in before:  # the catalog's order
        queue(stubber, name)

    assert _load_script().main(["--catalog", str(path), "--as-of", "2027-01-15"], api=api) == 0
    doc = json.loads(path.read_text())
    catalog.check_accelerators(path.read_text())  # still a catalog fastscale loads
    after = _instances(path)
    assert doc["as_of"] == "2027-01-15"
    assert (after["ml.g6.2xlarge"]["price_per_hour_usd"], after["ml.g6.2xlarge"]["price_is_estimate"]) == (1.3015, False)
    # An estimate replaced by the published rate loses its method.
    assert (after["ml.g7e.2xlarge"]["price_per_hour_usd"], after["ml.g7e.2xlarge"]["price_is_estimate"]) == (4.2039, False)
    assert "ml.g7e.2xlarge" not in doc["price_estimates"]
    # A rate no longer published is kept, but said to be carried over from the earlier list.
    assert after["ml.p5.48xlarge"]["price_per_hour_usd"] == before["ml.p5.48xlarge"]["price_per_hour_usd"]
    assert after["ml.p5.48xlarge"]["price_is_estimate"] is True
    assert doc["price_estimates"]["ml.p5.48xlarge"] == ("no published rate in the AWS Price List on 2027-01-15; the rate "
                                                        "of the 2026-12-02 catalog, carried over")
    # An estimate still without a published rate keeps its own method.
    assert doc["price_estimates"]["ml.p5en.48xlarge"].startswith("EC2 on-demand p5en.48xlarge")
    # Nothing but prices changes on an instance.
    for name, entry in after.items():
        rest = {k: v for k, v in entry.items() if k not in ("price_per_hour_usd", "price_is_estimate")}
        assert rest == {k: v for k, v in before[name].items() if k not in ("price_per_hour_usd", "price_is_estimate")}
    [source] = [s for s in doc["sources"] if s["id"] == "sagemaker-pricing"]
    assert "GetProducts" in source["used_for"] and "2027-01-15" in source["used_for"] and "us-east-1" in source["used_for"]
    out = capsys.readouterr().out
    assert "ml.g6.2xlarge: 1.222 -> 1.3015" in out
    assert "ml.g7e.2xlarge: 4.2039 -> 4.2039 (was an estimate)" in out
    assert "ml.p5.48xlarge: no published rate; 63.296 carried over as an estimate" in out
    assert "3 of 5 types have a published rate in us-east-1; prices as of 2027-01-15" in out


def test_a_dry_run_writes_nothing(pricing, tmp_path, capsys):
    api, stubber = pricing
    path = small_catalog(tmp_path)
    text = path.read_text()
    for name in _instances(path):
        queue(stubber, name)
    assert _load_script().main(["--catalog", str(path), "--as-of", "2027-01-15", "--dry-run"], api=api) == 0
    assert path.read_text() == text
    assert "dry run: nothing written" in capsys.readouterr().out


def test_an_ambiguous_answer_writes_nothing_and_exits_1(pricing, tmp_path, capsys):
    api, stubber = pricing
    path = small_catalog(tmp_path)
    text = path.read_text()
    assert list(_instances(path))[:2] == ["ml.g5.xlarge", "ml.g6.2xlarge"]  # asked in this order
    [hosting] = products("ml.g6.2xlarge")
    second = copy.deepcopy(hosting)
    for term in second["terms"]["OnDemand"].values():
        for dimension in term["priceDimensions"].values():
            dimension["pricePerUnit"]["USD"] = "2.0000000000"
    queue(stubber, "ml.g5.xlarge")
    queue(stubber, "ml.g6.2xlarge", [page_of(hosting, second)])
    assert _load_script().main(["--catalog", str(path), "--as-of", "2027-01-15"], api=api) == 1
    assert path.read_text() == text
    assert "error: ml.g6.2xlarge has 2 on-demand Hosting rates in us-east-1 (1.3015, 2)" in capsys.readouterr().err


def test_an_hourly_dimension_without_a_usd_price_is_refused(pricing):
    api, stubber = pricing
    [hosting] = products("ml.g6.2xlarge")
    for term in hosting["terms"]["OnDemand"].values():
        for dimension in term["priceDimensions"].values():
            dimension["pricePerUnit"] = {"CNY": "9.0000000000"}
    queue(stubber, "ml.g6.2xlarge", [page_of(hosting)])
    with pytest.raises(PriceListError, match="9QKWXHYX5B4J3M2E has no USD price"):
        hosting_rates(api, "us-east-1", ["ml.g6.2xlarge"])
