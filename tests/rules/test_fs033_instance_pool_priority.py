def _fallback(data, *pools):
    data["endpoints"][0]["capacity"] = {"fallback": list(pools)}
    return data


def test_default_and_explicit_unique_priorities_pass(run_rule, components):
    _fallback(components, {"instance_type": "ml.g5.12xlarge"}, {"instance_type": "ml.g6e.12xlarge", "priority": 5})
    assert run_rule("FS033", components) == []


def test_duplicate_priority_fails(run_rule, hits, components):
    _fallback(components, {"instance_type": "ml.g5.12xlarge", "priority": 3}, {"instance_type": "ml.g6e.12xlarge", "priority": 3})
    found = run_rule("FS033", components)
    assert hits(found) == [("FS033", "error", "endpoints[0].capacity.fallback[1].priority")]
    assert "ml.g5.12xlarge" in found[0].message


def test_priority_one_clashes_with_the_endpoint_instance_type(run_rule, hits, components):
    _fallback(components, {"instance_type": "ml.g5.12xlarge", "priority": 1})
    assert hits(run_rule("FS033", components)) == [("FS033", "error", "endpoints[0].capacity.fallback[0].priority")]


def test_priority_out_of_range_and_repeated_type_fail(run_rule, hits, components):
    _fallback(components, {"instance_type": "ml.g5.12xlarge", "priority": 9}, {"instance_type": "ml.g6.12xlarge"})
    assert hits(run_rule("FS033", components)) == [
        ("FS033", "error", "endpoints[0].capacity.fallback[0].priority"),
        ("FS033", "error", "endpoints[0].capacity.fallback[1].instance_type"),
    ]
