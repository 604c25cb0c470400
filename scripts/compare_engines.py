"""Compare the Terraform JSON that two CDK engines synthesized for the same configs.

    python scripts/compare_engines.py DIR_A DIR_B

Each DIR holds one `fastscale synth --out` directory per example (DIR/<example>/stacks/<stack>/cdk.tf.json).
The documents must be equal once the engine's own version stamp ("//".metadata.version) is set aside;
whitespace never matters because the files are compared as parsed JSON. Exit code 0 when every stack
matches, 1 with the differing paths otherwise, 2 when the directories do not hold the same stacks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def stacks(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.glob("*/stacks/*/cdk.tf.json"))}


def normalized(path: Path) -> tuple[dict[str, Any], str | None]:
    doc = json.loads(path.read_text())
    version = doc.get("//", {}).get("metadata", {}).pop("version", None)
    return doc, version


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b)):
            where = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                out.append(f"{where}: only in {'the second' if key not in a else 'the first'}")
            else:
                out.extend(differences(a[key], b[key], where))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {json.dumps(a)[:80]} != {json.dumps(b)[:80]}"]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    first, second = (Path(a) for a in argv)
    a, b = stacks(first), stacks(second)
    if not a or sorted(a) != sorted(b):
        print(f"error: the directories hold different stacks: {sorted(a)} vs {sorted(b)}", file=sys.stderr)
        return 2
    failed = False
    for name in a:
        (doc_a, version_a), (doc_b, version_b) = normalized(a[name]), normalized(b[name])
        diff = differences(doc_a, doc_b)
        verdict = "same" if not diff else f"{len(diff)} difference(s)"
        print(f"{name}: {verdict} (engine versions {version_a} / {version_b})")
        for line in diff[:20]:
            print(f"  {line}")
        failed = failed or bool(diff)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
