from __future__ import annotations

import pytest


def test_ordinary_tags_pass(run_rule, single_model):
    single_model["tags"] = {"team": "ml-platform", "cost-center": "genai", "Owner": "Zoë Müller",
                            "app:tier": "web/api=1+2@x", "empty": ""}
    assert run_rule("FS079", single_model) == []


@pytest.mark.parametrize("key", ["aws:team", "AWS:team", "Aws:cloudformation:stack-name"])
def test_reserved_prefix_is_an_error(run_rule, hits, single_model, key):
    single_model["tags"] = {key: "x"}
    found = run_rule("FS079", single_model)
    assert hits(found) == [("FS079", "error", f'tags["{key}"]')]
    assert "reserved for AWS" in found[0].message and "without the 'aws:' prefix" in found[0].hint


@pytest.mark.parametrize(("key", "value"), [("team!", "x"), ("team", "a;b"), ("team", "$(id)"), ("t", "line\nbreak")])
def test_characters_aws_refuses_are_errors(run_rule, hits, single_model, key, value):
    single_model["tags"] = {key: value}
    found = run_rule("FS079", single_model)
    assert [h[0] for h in hits(found)] == ["FS079"]
    assert "characters AWS refuses" in found[0].message


def test_fastscale_own_keys_are_errors(run_rule, hits, single_model):
    single_model["tags"] = {"managed-by": "terraform", "fastscale:stack": "other"}
    found = run_rule("FS079", single_model)
    assert sorted(hits(found)) == [("FS079", "error", 'tags["fastscale:stack"]'), ("FS079", "error", 'tags["managed-by"]')]
    assert "teardown proves ownership" in found[0].message


def test_too_many_tags_with_fastscale_own(run_rule, hits, single_model):
    single_model["tags"] = {f"t{i}": "x" for i in range(47)}
    found = run_rule("FS079", single_model)
    assert hits(found) == [("FS079", "error", "tags")]
    assert "51 tags" in found[0].message and "remove at least 1" in found[0].hint
    single_model["tags"] = {f"t{i}": "x" for i in range(46)}
    assert run_rule("FS079", single_model) == []
