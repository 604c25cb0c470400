"""Write a generated file, or check that the committed one is current (the scripts' --check mode)."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(path: Path, text: str, root: Path, command: str, check: bool) -> int:
    """0 when written or current; 1 (with the command that regenerates it on stderr) when stale."""
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    if check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{shown} is stale: run {command}", file=sys.stderr)
            return 1
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {shown}")
    return 0
