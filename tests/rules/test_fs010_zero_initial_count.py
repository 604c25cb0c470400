def test_initial_one_passes_even_when_scaling_to_zero(run_rule, scale_to_zero, single_model):
    assert run_rule("FS010", scale_to_zero) == []
    assert run_rule("FS010", single_model) == []


def test_zero_initial_copies_is_an_error(run_rule, hits, scale_to_zero):
    scale_to_zero["endpoints"][0]["inference_components"][1]["copies"]["initial"] = 0
    found = run_rule("FS010", scale_to_zero)
    assert hits(found) == [("FS010", "error", "endpoints[0].inference_components[1].copies.initial")]
    assert "initial: 1" in found[0].hint


def test_zero_initial_instances_is_an_error(run_rule, hits, scale_to_zero):
    scale_to_zero["endpoints"][0]["instances"]["initial"] = 0
    assert hits(run_rule("FS010", scale_to_zero)) == [("FS010", "error", "endpoints[0].instances.initial")]
