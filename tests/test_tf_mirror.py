"""The helpers that run the real provider offline for several documents at once (tests/tf_mirror.py)."""

from __future__ import annotations

from tests.tf_mirror import _shared_providers

EAST = {"aws": [{"region": "us-east-1"}]}
WEST = {"aws": [{"region": "us-west-2"}]}


def doc(provider=None, **resources):
    return {"resource": resources or {"aws_s3_bucket": {"b": {}}}, **({"provider": provider} if provider else {})}


def test_each_distinct_provider_block_is_configured_once_in_the_root_and_passed_to_its_modules():
    docs = {"a": doc(EAST), "b": doc(WEST), "c": doc(EAST), "none": doc()}
    children, root, passed, users = _shared_providers(docs)
    assert root == {"aws": [{"region": "us-east-1", "alias": "shared0"}, {"region": "us-west-2", "alias": "shared1"}]}
    assert passed == {"a": {"aws": "aws.shared0"}, "b": {"aws": "aws.shared1"}, "c": {"aws": "aws.shared0"}}
    assert users == {"aws.shared0": ["a", "c"], "aws.shared1": ["b"]}
    assert all("provider" not in child for child in children.values())
    assert {name: child["resource"] for name, child in children.items()} == {
        name: d["resource"] for name, d in docs.items()}


def test_blocks_that_cannot_be_passed_on_as_one_stay_in_their_document():
    aliased = doc({"aws": [{"region": "us-east-1", "alias": "other"}]})
    several = doc({"aws": [{"region": "us-east-1"}, {"region": "eu-west-1", "alias": "eu"}]})
    children, root, passed, users = _shared_providers({"aliased": aliased, "several": several, "a": doc(EAST)})
    assert children["aliased"] == aliased and children["several"] == several
    assert set(passed) == {"a"} and root == {"aws": [{"region": "us-east-1", "alias": "shared0"}]}
