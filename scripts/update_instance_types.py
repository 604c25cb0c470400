#!/usr/bin/env python3
"""Regenerate infra/base/catalog/sagemaker_instance_types.json from the installed botocore.

The list is every value of the SageMaker ``ProductionVariantInstanceType`` enum, sorted. fastscale commits it so
that validating an instance type never loads botocore's SageMaker service model (several megabytes of JSON).

Run it after upgrading botocore:

    .venv/bin/python scripts/update_instance_types.py           # rewrite the file
    .venv/bin/python scripts/update_instance_types.py --check   # exit 1 if the file is stale (for CI)

It then lists enum types of a catalogued accelerator family that ``accelerators.json`` has no entry for, since
those entries (specs, prices, sources) are curated by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import botocore
import botocore.session

CATALOG_DIR = Path(__file__).resolve().parents[1] / "infra" / "base" / "catalog"
DEFAULT_OUTPUT = CATALOG_DIR / "sagemaker_instance_types.json"
ACCELERATORS = CATALOG_DIR / "accelerators.json"
SHAPE = "ProductionVariantInstanceType"


def enum_values() -> list[str]:
    model = botocore.session.get_session().get_service_model("sagemaker")
    return sorted(model.shape_for(SHAPE).enum)


def render(values: list[str]) -> str:
    document = {
        "generated_by": "scripts/update_instance_types.py",
        "botocore_version": botocore.__version__,
        "shape": f"sagemaker.{SHAPE}",
        "instance_types": values,
    }
    return json.dumps(document, indent=2) + "\n"


def _family(instance_type: str) -> str:
    return instance_type.removeprefix("ml.").split(".", 1)[0]


def uncatalogued_accelerator_types(values: list[str], accelerators_file: Path = ACCELERATORS) -> list[str]:
    """Enum types whose family has catalog entries but which have none themselves (a new size)."""
    try:
        doc = json.loads(accelerators_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return []
    listed = {entry["instance_type"] for entry in doc.get("instances", [])}
    families = {_family(t) for t in listed}
    return [t for t in values if _family(t) in families and t not in listed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the file differs")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="file to write or check")
    args = parser.parse_args(argv)

    values = enum_values()
    wanted = render(values)
    current = args.output.read_text(encoding="utf-8") if args.output.exists() else None

    if args.check:
        if current == wanted:
            print(f"{args.output.name} is up to date ({len(values)} types, botocore {botocore.__version__})")
            return 0
        try:
            old = set(json.loads(current or "{}").get("instance_types", []))
        except json.JSONDecodeError:
            old = set()
        added, removed = sorted(set(values) - old), sorted(old - set(values))
        print(f"{args.output} is stale for botocore {botocore.__version__}; run {Path(__file__).name}", file=sys.stderr)
        if added:
            print(f"  added:   {', '.join(added)}", file=sys.stderr)
        if removed:
            print(f"  removed: {', '.join(removed)}", file=sys.stderr)
        return 1

    args.output.write_text(wanted, encoding="utf-8")
    print(f"wrote {args.output} ({len(values)} types, botocore {botocore.__version__})")
    missing = uncatalogued_accelerator_types(values)
    if missing:
        print(f"accelerators.json has no entry for: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
