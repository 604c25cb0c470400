GIB_PER_GB = 1e9 / 2**30


def test_models_that_fit_pass(run_rule, single_model, components):
    assert run_rule("FS007", single_model) == []
    assert run_rule("FS007", components) == []
    # No size given: nothing to compare.
    del single_model["endpoints"][0]["model"]["model_size_gb"]
    assert run_rule("FS007", single_model) == []


def test_single_model_too_big_for_the_instance(run_rule, hits, single_model):
    single_model["endpoints"][0]["model"]["model_size_gb"] = 30  # 27.9 GiB > one 24 GiB L4
    found = run_rule("FS007", single_model)
    assert hits(found) == [("FS007", "error", "endpoints[0].model.model_size_gb")]
    assert "27.9 GiB" in found[0].message and "24 GiB" in found[0].message
    assert "e.g. ml." in found[0].hint


def test_single_model_may_use_every_accelerator_of_the_instance(run_rule, single_model):
    ep = single_model["endpoints"][0]
    ep["instance_type"] = "ml.g6.12xlarge"  # 4 x 24 GiB
    ep["model"]["model_size_gb"] = 60  # 55.9 GiB: too big for one L4, fits four
    assert run_rule("FS007", single_model) == []


def test_component_is_limited_to_its_reserved_devices(run_rule, hits, components):
    comp = components["endpoints"][0]["inference_components"][1]
    comp["model_size_gb"] = 40  # 37.3 GiB > 1 x 24 GiB reserved
    found = run_rule("FS007", components)
    assert hits(found) == [("FS007", "error", "endpoints[0].inference_components[1].model_size_gb")]
    # 37.3 GiB needs ceil(37.3 / (24 * 0.9)) = 2 devices to keep 10% headroom.
    assert "accelerators: 2" in found[0].hint
    comp["resources"]["accelerators"] = 2
    assert run_rule("FS007", components) == []


def test_component_without_accelerators_gets_no_accelerator_memory(run_rule, hits, components):
    del components["endpoints"][0]["inference_components"][0]["resources"]["accelerators"]
    found = run_rule("FS007", components)
    assert hits(found) == [("FS007", "error", "endpoints[0].inference_components[0].resources.accelerators")]
    assert "accelerators: 1" in found[0].hint


def test_component_larger_than_the_whole_instance(run_rule, components):
    components["endpoints"][0]["inference_components"][0]["model_size_gb"] = 150  # > 4 x 24 GiB
    (finding,) = run_rule("FS007", components)
    assert "has 4" in finding.hint


def test_boundary_exactly_full_is_not_an_error(run_rule, single_model):
    single_model["endpoints"][0]["model"]["model_size_gb"] = 24 / GIB_PER_GB  # exactly 24 GiB
    assert run_rule("FS007", single_model) == []
