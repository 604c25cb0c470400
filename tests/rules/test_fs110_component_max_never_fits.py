def test_a_max_each_component_reaches_passes(run_rule, components, single_model):
    # qwen 4 + llama's minimum 1 = 5 of 8 GPUs; llama 4 + qwen's 1 the same.
    assert run_rule("FS110", components) == []
    assert run_rule("FS110", single_model) == []


def test_shared_cap_is_not_an_error(run_rule, components):
    ep = components["endpoints"][0]
    ep.update(instance_type="ml.g5.2xlarge", instances={"initial": 1, "min": 0, "max": 2})
    for comp in ep["inference_components"]:
        comp.update(resources={"accelerators": 1, "memory_mb": 8192}, copies={"initial": 1, "min": 0, "max": 2})
    assert run_rule("FS110", components) == []


def test_a_max_that_never_fits_beside_the_others_minimum_is_an_error(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["copies"]["max"] = 8  # 8 + llama's 1 = 9 > 8
    found = run_rule("FS110", components)
    assert hits(found) == [("FS110", "error", "endpoints[0].inference_components[0].copies.max")]
    assert "8 x 1 accelerator devices beside the others' minimum 1 = 9" in found[0].message
    assert "beyond 7" in found[0].message
    assert "instances.max: 3" in found[0].hint and "copies.max: 7 for qwen" in found[0].hint


def test_the_others_at_zero_leave_the_whole_endpoint(run_rule, components):
    ep = components["endpoints"][0]
    ep["instances"]["min"] = 0
    qwen, llama = ep["inference_components"]
    qwen["copies"].update(min=0, max=8)  # 8 of 8 GPUs when llama is at 0
    llama["copies"]["min"] = 0
    assert run_rule("FS110", components) == []


def test_a_copy_larger_than_an_instance_is_left_to_fs006(run_rule, components):
    components["endpoints"][0]["inference_components"][0]["resources"]["accelerators"] = 8
    assert run_rule("FS110", components) == []
