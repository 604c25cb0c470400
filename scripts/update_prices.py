#!/usr/bin/env python3
"""Rewrite the instance catalog's prices from the AWS Price List, with the date they were read.

For every instance type of infra/base/catalog/accelerators.json, asks the AWS Price List Query API (GetProducts,
service code AmazonSageMaker, in us-east-1 where the API answers) for the on-demand rate of real-time inference
(component "Hosting") in the catalog's Region, then writes the rates and the new `as_of` date into the file. A type
the Price List has no rate for keeps its figure, marked as an estimate that says where it comes from; a type with
two different rates stops the run, nothing written. Prints what changed.

Needs AWS credentials allowed pricing:GetProducts (the standard AWS environment variables or profile):

    make prices                                                   # the committed catalog, dated today (UTC)
    .venv/bin/python scripts/update_prices.py --as-of 2027-01-15 --dry-run   # show the changes, write nothing

Exit codes: 0 written (or nothing to change), 1 the API failed or its answer cannot be read, 2 bad arguments.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

from fastscale.infra.aws.clients import AwsError
from fastscale.infra.aws.pricing import (
    HOSTING,
    PRICING_REGION,
    SERVICE_CODE,
    PriceListError,
    hosting_rates,
    pricing_client,
)
from fastscale.infra.base.catalog import CatalogError
from fastscale.infra.base.catalog.refresh import refreshed

CATALOG = Path(__file__).resolve().parents[1] / "infra" / "base" / "catalog" / "accelerators.json"


def _date(text: str) -> str:
    try:
        return dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2027-01-15") from None


def main(argv: list[str] | None = None, api: Any = None) -> int:
    """``api``: a ``pricing`` client to use instead of a new one (tests hand in a stubbed one)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--catalog", type=Path, default=CATALOG, help="the accelerators.json to rewrite")
    parser.add_argument("--as-of", type=_date, default=dt.datetime.now(dt.UTC).date().isoformat(),
                        help="the date the prices were read (default: today, UTC)")
    parser.add_argument("--dry-run", action="store_true", help="print the changes, write nothing")
    args = parser.parse_args(argv)

    text = args.catalog.read_text(encoding="utf-8")
    document = json.loads(text)
    region = document["region"]
    types = [i["instance_type"] for i in document["instances"]]
    try:
        rates = hosting_rates(api if api is not None else pricing_client(), region, types)
        read_from = (f"every price with price_is_estimate false: the on-demand rate of the {HOSTING} product (SageMaker AI "
                     f"real-time inference) of that type in {region}, from GetProducts of the AWS Price List Query API "
                     f"(service code {SERVICE_CODE}, called in {PRICING_REGION}) on {args.as_of}, by scripts/update_prices.py")
        new_text, changes = refreshed(text, {t: r.price_per_hour_usd for t, r in rates.items()}, args.as_of, read_from)
    except (AwsError, PriceListError, CatalogError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for change in changes:
        print(change.describe())
    published = sum(1 for r in rates.values() if r.price_per_hour_usd is not None)
    print(f"{published} of {len(types)} types have a published rate in {region}; prices as of {args.as_of}")
    if args.dry_run:
        print("dry run: nothing written")
        return 0
    args.catalog.write_text(new_text, encoding="utf-8")
    print(f"wrote {args.catalog}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
