#!/usr/bin/env python3
"""Write infra/model/override_schema.json: the provider schemas of the resource types an override can target.

`overrides:` are checked against the provider schemas at `validate`, where users have no Terraform and no
providers: the package ships the schemas of just the targetable types (infra.model.overrides.TARGETABLE), cut
from the contract tests' extract (tests/contract/provider_schemas.json, written by
scripts/extract_provider_schemas.py). tests/test_override_schema.py fails when the two differ.

Usage: python scripts/gen_override_schema.py [--check]
  --check  exit 1 if the committed file differs from what would be generated.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastscale.infra.model.overrides import SCHEMA_FILE, TARGETABLE  # noqa: E402
from scripts.generated_file import write_or_check  # noqa: E402

SOURCE = ROOT / "tests" / "contract" / "provider_schemas.json"


def trimmed(full: dict) -> dict:
    """The targetable types' schemas and the provider versions they come from."""
    providers = {name: {"source": p["source"], "version": p["version"]} for name, p in full["providers"].items()}
    return {"providers": providers,
            "resources": {t: {"attributes": full["resources"][t]["attributes"]} for t in sorted(TARGETABLE)}}


def render(full: dict) -> str:
    return json.dumps(trimmed(full), indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed file is stale")
    args = parser.parse_args()
    text = render(json.loads(SOURCE.read_text(encoding="utf-8")))
    return write_or_check(SCHEMA_FILE, text, ROOT, "python scripts/gen_override_schema.py", args.check)


if __name__ == "__main__":
    sys.exit(main())
