def test_consistent_configs_pass(run_rule, scale_to_zero, components, single_model):
    assert run_rule("FS013", scale_to_zero) == []
    assert run_rule("FS013", components) == []
    assert run_rule("FS013", single_model) == []


def test_mixed_components_with_warm_instances_pass(run_rule, components):
    # One component may drop to zero to free its GPU while the other keeps the instance busy.
    components["endpoints"][0]["inference_components"][0]["copies"]["min"] = 0
    assert run_rule("FS013", components) == []


def test_instances_min_zero_needs_every_component_at_zero(run_rule, hits, scale_to_zero):
    scale_to_zero["endpoints"][0]["inference_components"][1]["copies"]["min"] = 1
    found = run_rule("FS013", scale_to_zero)
    assert hits(found) == [("FS013", "error", "endpoints[0].inference_components[1].copies.min")]
    assert "'llama'" in found[0].message


def test_all_components_at_zero_need_instances_min_zero(run_rule, hits, scale_to_zero):
    scale_to_zero["endpoints"][0]["instances"]["min"] = 1
    found = run_rule("FS013", scale_to_zero)
    assert hits(found) == [("FS013", "error", "endpoints[0].instances.min")]
    assert "instances.min: 0" in found[0].hint
