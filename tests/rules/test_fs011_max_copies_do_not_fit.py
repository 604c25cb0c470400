def test_copies_that_fit_pass(run_rule, components, single_model):
    # 2 components x 4 copies x 1 GPU = 8 GPUs = 2 instances x 4.
    assert run_rule("FS011", components) == []
    assert run_rule("FS011", single_model) == []


def test_too_many_accelerators_at_max(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["copies"]["max"] = 5  # 9 GPUs > 8
    found = run_rule("FS011", components)
    assert hits(found) == [("FS011", "error", "endpoints[0].instances.max")]
    assert "9 accelerator devices" in found[0].message and " 8:" in found[0].message
    assert "instances.max: 3" in found[0].hint  # ceil(9 / 4)


def test_memory_and_cpus_are_summed_too(run_rule, components):
    for comp in components["endpoints"][0]["inference_components"]:
        comp["resources"].update(memory_mb=100_000, cpus=20)  # 8 x 100000 MB > 2 x 196608; 8 x 20 > 2 x 48
    found = run_rule("FS011", components)
    assert [f.path for f in found] == ["endpoints[0].instances.max"] * 2
    assert "MB of host memory" in found[0].message and "vCPUs" in found[1].message


def test_a_copy_larger_than_an_instance_is_left_to_fs006(run_rule, components):
    components["endpoints"][0]["inference_components"][0]["resources"]["accelerators"] = 8
    assert run_rule("FS011", components) == []
