import copy


def test_unique_names_pass(run_rule, components, single_model):
    assert run_rule("FS017", components) == []
    single_model["endpoints"].append(components["endpoints"][0])
    assert run_rule("FS017", single_model) == []


def test_duplicate_endpoint_is_an_error_case_insensitively(run_rule, hits, single_model):
    twin = copy.deepcopy(single_model["endpoints"][0])
    twin["name"] = "Chat"
    single_model["endpoints"].append(twin)
    found = run_rule("FS017", single_model)
    assert hits(found) == [("FS017", "error", "endpoints[1].name")]
    assert "endpoints[0].name" in found[0].message


def test_duplicate_component_across_endpoints(run_rule, hits, components):
    other = copy.deepcopy(components["endpoints"][0])
    other["name"] = "shared-2"
    components["endpoints"].append(other)  # same component names on a second endpoint
    found = run_rule("FS017", components)
    assert hits(found) == [
        ("FS017", "error", "endpoints[1].inference_components[0].name"),
        ("FS017", "error", "endpoints[1].inference_components[1].name"),
    ]
