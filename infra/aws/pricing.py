"""SageMaker AI real-time inference on-demand rates from the AWS Price List Query API, for the instance catalog.

``GetProducts`` with service code ``AmazonSageMaker`` and three ``TERM_MATCH`` filters per instance type: the
Region (``regionCode``), the instance type (``instanceName``) and the product's use (``component``: ``Hosting`` is
real-time inference; training, notebooks, batch transform and the others have components of their own). These are
the attribute names of the AmazonSageMaker offer file, which the API serves
(``aws pricing describe-services --service-code AmazonSageMaker`` lists them, ``aws pricing get-attribute-values``
their values). Each ``PriceList`` entry is one product as a JSON string: its attributes, and its ``terms``, of which
the ``OnDemand`` ones hold price dimensions with a ``unit`` (``Hrs``) and a ``pricePerUnit`` (``USD``).

The Price List Query API answers in us-east-1 (and eu-central-1, ap-south-1) whatever Region the prices are for;
it needs credentials allowed ``pricing:GetProducts``. Read-only.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.client import BaseClient

from fastscale.infra.aws.clients import client, translate_errors

SERVICE_CODE = "AmazonSageMaker"
#: Where the Price List Query API is called (prices of every Region are served there).
PRICING_REGION = "us-east-1"
#: The ``component`` of SageMaker AI real-time inference (hosting) products.
HOSTING = "Hosting"
FORMAT_VERSION = "aws_v1"
_HOURLY_UNIT = "Hrs"
_CURRENCY = "USD"


class PriceListError(ValueError):
    """The Price List's answer cannot be read as one rate (two different rates, a malformed entry)."""


@dataclass(frozen=True)
class HostingRate:
    instance_type: str
    price_per_hour_usd: float | None  # None: the Price List has no Hosting rate for it in the Region
    skus: tuple[str, ...] = ()


def pricing_client() -> BaseClient:
    """A client of the Price List Query API (``pricing``), in the Region that serves it."""
    return client("pricing", PRICING_REGION)


def filters(region: str, instance_type: str) -> list[dict[str, str]]:
    """GetProducts filters for the real-time inference product of ``instance_type`` in ``region``."""
    return [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
        {"Type": "TERM_MATCH", "Field": "instanceName", "Value": instance_type},
        {"Type": "TERM_MATCH", "Field": "component", "Value": HOSTING},
    ]


def _hourly_rates(product: Mapping[str, Any]) -> set[float]:
    """The on-demand USD rates per hour a product lists."""
    out: set[float] = set()
    on_demand = (product.get("terms") or {}).get("OnDemand") or {}
    for term in on_demand.values():
        for dimension in (term.get("priceDimensions") or {}).values():
            if dimension.get("unit") != _HOURLY_UNIT:
                continue
            price = (dimension.get("pricePerUnit") or {}).get(_CURRENCY)
            try:
                out.add(float(str(price)))
            except ValueError:
                raise PriceListError(f"a price dimension of {product.get('product', {}).get('sku')} has no USD price: "
                                     f"{dimension.get('pricePerUnit')!r}") from None
    return out


def _is_hosting(product: Mapping[str, Any], region: str, instance_type: str) -> bool:
    """The filters asked for this, and the answer is checked: a product of another use or type is not its price."""
    attributes = (product.get("product") or {}).get("attributes") or {}
    return (attributes.get("component") == HOSTING and attributes.get("instanceName") == instance_type
            and attributes.get("regionCode") == region)


@translate_errors
def hosting_rates(api: BaseClient, region: str, instance_types: Iterable[str]) -> dict[str, HostingRate]:
    """The on-demand rate per instance-hour of real-time inference on each of ``instance_types`` in ``region``.

    Raises :class:`PriceListError` when an instance type has two different on-demand rates (which to take would
    be a guess) or an entry is not a product; ``AwsError`` when the API fails."""
    out: dict[str, HostingRate] = {}
    paginator = api.get_paginator("get_products")
    for instance_type in instance_types:
        rates: set[float] = set()
        skus: list[str] = []
        pages = paginator.paginate(ServiceCode=SERVICE_CODE, Filters=filters(region, instance_type),
                                   FormatVersion=FORMAT_VERSION)
        for page in pages:
            for entry in page.get("PriceList", []):
                try:
                    product = json.loads(entry)
                except (TypeError, ValueError) as exc:
                    raise PriceListError(f"a PriceList entry for {instance_type} is not JSON: {exc}") from None
                if not isinstance(product, Mapping):
                    raise PriceListError(f"a PriceList entry for {instance_type} is not a product")
                if not _is_hosting(product, region, instance_type):
                    continue
                rates |= _hourly_rates(product)
                skus.append(str((product.get("product") or {}).get("sku") or ""))
        if len(rates) > 1:
            shown = ", ".join(f"{r:g}" for r in sorted(rates))
            raise PriceListError(f"{instance_type} has {len(rates)} on-demand Hosting rates in {region} ({shown}): "
                                 "which one applies is not clear; nothing was changed")
        out[instance_type] = HostingRate(instance_type, rates.pop() if rates else None, tuple(skus))
    return out
