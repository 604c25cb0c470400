"""The matchers of fastscale.stacks.testing: each passes and fails where it should, and says where and why."""

from __future__ import annotations

import json

import pytest

from fastscale.stacks.testing import Match, assert_matches, mismatches


def diffs(actual, pattern) -> list[str]:
    return [str(m) for m in mismatches(actual, pattern)]


VARIANT = {"instance_type": "ml.g6.2xlarge", "initial_instance_count": 1,
           "routing_config": [{"routing_strategy": "LEAST_OUTSTANDING_REQUESTS"}]}


def test_plain_dicts_match_partially_at_every_depth():
    doc = {"a": 1, "nested": {"x": 1, "y": 2}, "extra": True}
    assert diffs(doc, {"nested": {"x": 1}}) == []
    assert diffs(doc, {"nested": {"x": 2}}) == ["/nested/x: expected 2, found 1"]
    assert diffs(doc, {"nested": {"z": 1}}) == ["/nested/z: expected 1, but the key is absent"]


def test_object_like_nested_inside_exact_is_partial_and_exact_elsewhere_is_not():
    doc = {"outer": {"keep": 1, "more": 2}, "other": {"a": 1, "b": 2}}
    assert diffs(doc, Match.exact({"outer": Match.object_like({"keep": 1}), "other": {"a": 1, "b": 2}})) == []
    assert diffs(doc, Match.exact({"outer": Match.object_like({"keep": 1}), "other": {"a": 1}})) == [
        "/other/b: unexpected key (found 2); exact allows no key the pattern does not name"]
    assert diffs(doc, Match.object_equals({"outer": {"keep": 1, "more": 2}})) == [
        "/other: unexpected key (found {\"a\": 1, \"b\": 2}); object_equals allows no key the pattern does not name"]


def test_object_like_refuses_a_non_object_and_names_its_type():
    assert diffs({"a": [1]}, {"a": {"b": 1}}) == ["/a: expected an object, found array [1]"]
    with pytest.raises(TypeError, match="takes a dict"):
        Match.object_like([1])


def test_absent_is_not_null():
    assert diffs({"a": 1}, {"b": Match.absent()}) == []
    assert diffs({"b": None}, {"b": Match.absent()}) == ["/b: expected the key to be absent, found null"]
    # None in a pattern means "present, with the value null".
    assert diffs({"b": None}, {"b": None}) == []
    assert diffs({}, {"b": None}) == ["/b: expected null, but the key is absent"]
    assert diffs({"b": 0}, {"b": None}) == ["/b: expected null, found 0"]


def test_any_value_needs_a_present_non_null_value():
    assert diffs({"a": 0}, {"a": Match.any_value()}) == []
    assert diffs({"a": False}, {"a": Match.any_value()}) == []
    assert diffs({"a": None}, {"a": Match.any_value()}) == ["/a: expected any value, found null"]
    assert diffs({}, {"a": Match.any_value()}) == ["/a: expected any value, but the key is absent"]


def test_literals_compare_json_types_not_python_equality():
    assert diffs({"a": True}, {"a": 1}) == ["/a: expected 1, found true"]
    assert diffs({"a": 1}, {"a": True}) == ["/a: expected true, found 1"]
    assert diffs({"a": 1.0}, {"a": 1}) == [], "1 and 1.0 are the same JSON number"
    assert diffs({"a": "1"}, {"a": 1}) == ["/a: expected 1, found '1'"]


def test_plain_lists_need_the_same_length_and_order():
    assert diffs({"l": [1, 2]}, {"l": [1, 2]}) == []
    assert diffs({"l": [2, 1]}, {"l": [1, 2]}) == ["/l/0: expected 1, found 2", "/l/1: expected 2, found 1"]
    assert diffs({"l": [1, 2, 3]}, {"l": [1, 2]}) == ["/l: expected an array of 2 element(s), found 3: [1, 2, 3]"]
    # Objects inside a plain list still match partially.
    assert diffs({"v": [VARIANT]}, {"v": [{"instance_type": "ml.g6.2xlarge"}]}) == []


def test_array_with_finds_elements_in_order_with_others_between():
    doc = {"l": ["a", "b", "c", "d"]}
    assert diffs(doc, {"l": Match.array_with(["b", "d"])}) == []
    assert diffs(doc, {"l": Match.array_with([])}) == []
    [message] = diffs(doc, {"l": Match.array_with(["d", "b"])})
    assert message.startswith("/l: no element at or after index 4 matches pattern element 1 ('b')")
    assert "element 1 matches it, but array_with keeps the pattern's order" in message
    [missing] = diffs(doc, {"l": Match.array_with(["z"])})
    assert missing.startswith("/l: no element anywhere matches pattern element 0 ('z')")


def test_array_with_matches_objects_partially_and_shows_the_closest_element():
    variants = {"production_variants": [VARIANT, {**VARIANT, "instance_type": "ml.g5.2xlarge"}]}
    assert diffs(variants, {"production_variants": Match.array_with([{"instance_type": "ml.g5.2xlarge"}])}) == []
    [message] = diffs(variants, {"production_variants": Match.array_with([{"instance_type": "ml.p5.48xlarge"}])})
    assert "the closest element differs at /production_variants/0/instance_type: expected 'ml.p5.48xlarge', " \
           "found 'ml.g6.2xlarge'" in message


def test_array_with_takes_the_earliest_match_so_a_later_element_is_still_found():
    # Greedy earliest matching: {"k": 1} must not use up the element the second pattern needs.
    doc = [{"k": 1, "x": 1}, {"k": 1}, {"x": 1}]
    assert diffs(doc, Match.array_with([{"k": 1}, {"x": 1}])) == []
    assert diffs(doc, Match.array_with([{"x": 1}, {"k": 1}])) == [], "x at 0, then k at 1"
    assert diffs(doc, Match.array_with([{"x": 1}, {"k": 1}, {"k": 1}])) != [], "no second k after index 1"


def test_array_equals_matches_objects_exactly():
    assert diffs([{"a": 1}], Match.array_equals([{"a": 1}])) == []
    assert diffs([{"a": 1, "b": 2}], Match.array_equals([{"a": 1}])) == [
        "/0/b: unexpected key (found 2); exact allows no key the pattern does not name"]


def test_absent_inside_an_array_is_refused():
    with pytest.raises(ValueError, match="no meaning inside an array"):
        Match.array_with([Match.absent()])


def test_string_like_regexp_searches_strings_only():
    metric = {"t": "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"}
    assert diffs(metric, {"t": Match.string_like_regexp("HighResolution$")}) == []
    assert diffs({"t": "SageMakerVariantInvocationsPerInstance"}, {"t": Match.string_like_regexp("HighResolution$")}) \
        == ["/t: expected a string matching /HighResolution$/, found 'SageMakerVariantInvocationsPerInstance'"]
    assert diffs({"t": 10}, {"t": Match.string_like_regexp("1")}) == [
        "/t: expected a string matching /1/, found number 10"]


def test_not_inverts_and_says_what_it_refused():
    assert diffs({"a": 1}, {"a": Match.not_(2)}) == []
    assert diffs({"a": 2}, {"a": Match.not_(2)}) == ["/a: expected anything but 2, found 2"]
    assert diffs({}, {"a": Match.not_(2)}) == [], "a missing key is not 2"


def test_serialized_json_parses_then_matches_exactly_unless_told_otherwise():
    policy = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject"]}]})
    assert diffs({"p": policy}, {"p": Match.serialized_json(Match.object_like({"Version": "2012-10-17"}))}) == []
    assert diffs({"p": policy}, {"p": Match.serialized_json({"Version": "2012-10-17"})}) == [
        "/p/Statement: (in the JSON string) unexpected key (found [{\"Action\": [\"s3:GetObject\"], "
        "\"Effect\": \"Allow\"}]); exact allows no key the pattern does not name"]
    [bad] = diffs({"p": "{nope"}, {"p": Match.serialized_json({})})
    assert bad.startswith("/p: expected a JSON string, found one that does not parse")


def test_every_difference_is_reported_not_only_the_first():
    found = diffs({"a": 1, "b": 2, "c": {"d": 3}}, {"a": 9, "b": 9, "c": {"d": 9}})
    assert found == ["/a: expected 9, found 1", "/b: expected 9, found 2", "/c/d: expected 9, found 3"]


def test_assert_matches_raises_with_every_difference():
    assert_matches({"a": 1}, {"a": 1})
    with pytest.raises(AssertionError) as failure:
        assert_matches({"a": 1, "b": 2}, {"a": 2, "b": 3}, what="the policy")
    assert str(failure.value) == ("the policy does not match the pattern, 2 difference(s):\n"
                                  "  /a: expected 2, found 1\n  /b: expected 3, found 2")


def test_a_pattern_that_is_not_json_data_is_a_type_error():
    with pytest.raises(TypeError, match="JSON data or a Match matcher"):
        mismatches({"a": 1}, {"a": object()})
