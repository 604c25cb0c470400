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


def _adopted(data: dict, **tags: dict[str, str]) -> dict:
    """``data`` (single_model) adopting a live endpoint that keeps ``tags`` per kind of resource."""
    ep = data["endpoints"][0]
    ep["execution_role_arn"] = "arn:aws:iam::123456789012:role/sm"  # a role of its own: no fastscale role
    ep["model"]["autoscaling"] = {"enabled": True}
    ep["adopted"] = {"endpoint": "live-endpoint", "scalable_target": True, "tags": tags}
    return data


def test_a_resource_counts_fastscale_own_the_configs_and_its_kept_live_tags(run_rule, hits, single_model):
    # fastscale's 3 (stack, endpoint, managed-by) + the config's 10 + 37 live ones kept on the target: 50, allowed
    single_model["tags"] = {f"team{i}": "x" for i in range(10)}
    live = {f"live{i}": "x" for i in range(37)}
    assert run_rule("FS079", _adopted(single_model, scalable_target=live)) == []
    # a key in both the config's tags and the live ones is one tag
    assert run_rule("FS079", _adopted(single_model, scalable_target={**live, "team0": "y"})) == []
    # one more live tag: 51 on the scalable target, refused naming it
    found = run_rule("FS079", _adopted(single_model, scalable_target={**live, "live37": "x"}))
    assert hits(found) == [("FS079", "error", "endpoints[0].adopted.tags.scalable_target")]
    assert "endpoint chat's scalable target would carry 51 tags" in found[0].message
    assert "AWS allows 50" in found[0].message
    assert found[0].hint == "remove at least 1 tag(s) from `tags` or `endpoints[0].adopted.tags.scalable_target`"


def test_each_adopted_resource_is_counted_on_its_own(run_rule, hits, single_model):
    # 47 live tags on the endpoint and 47 others on the model: 50 each, though 97 across the stack
    data = _adopted(single_model, endpoint={f"e{i}": "x" for i in range(47)}, model={f"m{i}": "x" for i in range(47)})
    assert run_rule("FS079", data) == []
    data["endpoints"][0]["adopted"]["tags"]["model"]["m47"] = "x"
    found = run_rule("FS079", data)
    assert hits(found) == [("FS079", "error", "endpoints[0].adopted.tags.model")]
    assert "endpoint chat's model would carry 51 tags" in found[0].message


def test_a_components_kept_tags_are_counted_on_the_component(run_rule, hits, components):
    components["endpoints"][0]["adopted"] = {"endpoint": "live-endpoint"}
    comp = components["endpoints"][0]["inference_components"][0]
    comp["adopted"] = {"name": "live-ic", "arn": "arn:aws:sagemaker:us-east-1:123456789012:inference-component/live-ic",
                       "tags": {"component": {f"c{i}": "x" for i in range(48)}}}
    found = run_rule("FS079", components)
    assert hits(found) == [("FS079", "error", "endpoints[0].inference_components[0].adopted.tags.component")]
    assert "component qwen would carry 51 tags" in found[0].message
