def test_distinct_names_pass(run_rule, components, scale_to_zero):
    assert run_rule("FS049", components) == [] and run_rule("FS049", scale_to_zero) == []


def test_a_component_named_like_its_endpoint_fails(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["name"] = "shared"
    found = run_rule("FS049", components)
    # its 5xx and latency alarms are named like the endpoint's
    assert hits(found) == [("FS049", "error", "endpoints[0].inference_components[0].name")] * 2
    assert "shared-5xx-errors" in found[0].message


def test_no_clash_when_the_component_has_no_alarms_of_its_own(run_rule, components):
    components["endpoints"][0]["inference_components"][0]["name"] = "shared"
    components["endpoints"][0]["deployment"] = {"auto_rollback": False}
    assert run_rule("FS049", components) == []
