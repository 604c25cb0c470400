def test_min_one_and_component_endpoints_pass(run_rule, single_model, scale_to_zero):
    assert run_rule("FS012", single_model) == []
    assert run_rule("FS012", scale_to_zero) == []


def test_single_model_min_zero_is_an_error(run_rule, hits, single_model):
    single_model["endpoints"][0]["instances"]["min"] = 0
    found = run_rule("FS012", single_model)
    assert hits(found) == [("FS012", "error", "endpoints[0].instances.min")]
    assert "inference_components" in found[0].hint
