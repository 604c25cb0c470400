"""Bounded YAML loading: every refusal is a located problem, produced without expanding anything."""

from __future__ import annotations

import pytest

from fastscale.infra.config import ConfigError, load_config, safe_yaml
from fastscale.infra.config.loading import _line_index

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi")
)


def problems(text: str) -> list[safe_yaml.YamlProblem]:
    with pytest.raises(safe_yaml.UnsafeYamlError) as exc:
        safe_yaml.load(text)
    return exc.value.problems


def test_plain_document_loads_with_its_line_index():
    loaded = safe_yaml.load("project: p\nendpoints:\n  - name: e\n    instances: {max: 2}\n")
    assert loaded.data == {"project": "p", "endpoints": [{"name": "e", "instances": {"max": 2}}]}
    assert loaded.lines[("endpoints", 0, "instances", "max")] == 4
    assert loaded.lines[("project",)] == 1


def test_anchor_without_alias_is_fine():
    assert safe_yaml.load("a: &x 1\nb: 2\n").data == {"a": 1, "b": 2}


def test_alias_bomb_is_refused_at_the_first_alias():
    (problem,) = problems(BOMB)
    assert problem.line == 2 and "aliases (*a) are not supported" in problem.message


def test_merge_keys_are_refused():
    (problem,) = problems("base: &b {x: 1}\nother:\n  <<: *b\n")
    assert problem.line == 3 and "merge keys (<<) are not supported" in problem.message
    (problem,) = problems("other:\n  <<: {x: 1}\n")
    assert problem.line == 2 and "merge keys" in problem.message


def test_only_plain_keys_and_tags():
    assert "used as a key" in problems("? [a, b]\n: 1\n")[0].message
    assert "tag !Ref is not supported" in problems("a: !Ref x\n")[0].message
    assert "more than one YAML document" in problems("a: 1\n---\nb: 2\n")[0].message


def test_typed_keys_and_scalars_follow_yaml():
    loaded = safe_yaml.load("1: one\n'1': quoted\nyes_no: yes\nnull_value: ~\nf: 1.5\nlist: [1, two]\n")
    assert loaded.data == {1: "one", "1": "quoted", "yes_no": True, "null_value": None, "f": 1.5, "list": [1, "two"]}
    assert loaded.lines[("list", 1)] == 6


@pytest.mark.parametrize("text", ["[" * 492 + "]" * 492, "a:\n" + "".join("  " * i + "- b:\n" for i in range(1, 60))])
def test_deep_nesting_is_refused_without_recursion(text):
    (problem,) = problems(text)
    assert f"deeper than {safe_yaml.MAX_DEPTH} levels" in problem.message and problem.line


def test_duplicate_keys_name_both_lines():
    found = problems("project: a\nregion: x\nendpoints:\n  - name: e\n    name: f\nproject: b\n")
    assert [(p.line, p.message) for p in found] == [
        (5, "duplicate key 'name' in endpoints[0]: first on line 4, again on line 5 (YAML would silently keep "
            "only the last one; remove or rename one)"),
        (6, "duplicate key 'project': first on line 1, again on line 6 (YAML would silently keep only the last "
            "one; remove or rename one)"),
    ]


def test_tab_is_named_with_line_and_column():
    (problem,) = problems("project: p\nendpoints:\n\t- name: e\n")
    assert (problem.line, problem.column) == (3, 1)
    assert problem.message.startswith("a tab character at line 3, column 1")


def test_tab_inside_a_line():
    # After the colon a tab is a separator, which YAML allows: the value is read without it.
    assert safe_yaml.load("project: p\nregion:\tus-east-1\n").data == {"project": "p", "region": "us-east-1"}
    # An unclosed list after a tab is a syntax error of its own: the tab is not blamed, the end of the text is.
    (problem,) = problems("project: p\nregion:\tus-east-1\nendpoints: [\t\n")
    assert (problem.line, problem.column) == (4, 1)
    assert problem.message == "not valid YAML: while parsing a flow node, did not find expected node content"
    # A tab that indents the next line is blamed, at its own line and column.
    (problem,) = problems("a:\n  b: 1\n  c:\t\n\t d: 2\n")
    assert (problem.line, problem.column) == (4, 1) and problem.message.startswith("a tab character at line 4, column 1")


def test_overlong_integer_is_located_not_converted():
    (problem,) = problems("a:\n  b: " + "9" * 5000 + "\n")
    assert problem.line == 2 and "a.b: an integer of 5000 characters" in problem.message


def test_oversized_text_is_refused_unparsed():
    (problem,) = problems("a: " + "x" * safe_yaml.MAX_BYTES + "\n")
    assert f"larger than {safe_yaml.MAX_BYTES // 1024} KiB" in problem.message


def test_line_index_of_an_alias_bomb_is_empty_and_instant():
    assert _line_index(BOMB) == {}


def test_load_config_reports_every_kind_with_its_line(write_yaml):
    for text, line, words in [
        (BOMB, 2, "aliases"),
        ("project: a\nproject: b\n", 2, "duplicate key 'project'"),
        ("project: p\n\tregion: x\n", 2, "a tab character"),
    ]:
        with pytest.raises(ConfigError) as exc:
            load_config(write_yaml(text))
        (problem,) = exc.value.problems
        assert problem.line == line and words in problem.message


def test_load_config_reads_no_more_than_the_limit(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (safe_yaml.MAX_BYTES * 4))
    with pytest.raises(ConfigError) as exc:
        load_config(big)
    assert "larger than" in exc.value.problems[0].message
