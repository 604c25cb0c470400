"""Patterns that must match a whole value are matched whole: in Python's `re`, `$` also matches before a final
line break, so `re.match(r"^[a-z]+$", "name\\n")` succeeds and a name ending in a newline would pass a check
written that way. fastscale's own patterns anchor their end with `\\Z`, or are used with `fullmatch`; this
test reads every pattern in the source and fails on a `$` anchor."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from fastscale.infra.base.artifacts import parse_image

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for folder in ("infra", "cli", "stacks", "templates") for p in (ROOT / folder).rglob("*.py"))
RE_FUNCTIONS = {"compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer"}
#: A `$` that is not escaped (`\$`) and not inside a character class (`[$]`).
_END_ANCHOR = re.compile(r"(?<!\\)\$(?![^\[]*\])")


def _patterns(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every literal pattern given to a function of `re` in ``path`` (f-strings: their literal parts)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in RE_FUNCTIONS
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
            continue
        first = node.args[0]
        parts = first.values if isinstance(first, ast.JoinedStr) else [first]
        text = "".join(p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str))
        found.append((node.lineno, text))
    return found


def test_the_source_holds_patterns_to_check():
    assert sum(len(_patterns(p)) for p in SOURCES) > 50


def test_no_pattern_anchors_its_end_with_a_dollar():
    offenders = [f"{p.relative_to(ROOT)}:{line}: {text!r}" for p in SOURCES for line, text in _patterns(p)
                 if _END_ANCHOR.search(text)]
    assert offenders == [], "use \\Z or fullmatch: $ also matches before a final line break"


def test_the_check_sees_a_dollar_anchor(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('import re\nNAME = re.compile(r"^[a-z]+$")\nOK = re.compile(r"[$]\\$x\\Z")\n')
    assert [t for _, t in _patterns(sample) if _END_ANCHOR.search(t)] == ["^[a-z]+$"]


def test_an_ecr_host_ending_in_a_line_break_is_not_ecr():
    assert parse_image("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0").ecr_account == "123456789012"
    assert parse_image("123456789012.dkr.ecr.us-east-1.amazonaws.com\n/llm:1.0").ecr_account is None
