def _workshop(components):
    """AWS's workshop layout: two 1-GPU components, copies 0-2 each, on at most two 1-GPU instances."""
    ep = components["endpoints"][0]
    ep.update(instance_type="ml.g5.2xlarge", instances={"initial": 1, "min": 0, "max": 2})
    for comp in ep["inference_components"]:
        comp.update(resources={"accelerators": 1, "memory_mb": 8192}, copies={"initial": 1, "min": 0, "max": 2})
    return components


def test_copies_that_fit_pass(run_rule, components, single_model):
    # 2 components x 4 copies x 1 GPU = 8 GPUs = 2 instances x 4.
    assert run_rule("FS011", components) == []
    assert run_rule("FS011", single_model) == []


def test_capped_shared_capacity_is_a_warning_with_the_arithmetic(run_rule, hits, components):
    found = run_rule("FS011", _workshop(components))
    assert hits(found) == [("FS011", "warning", "endpoints[0].instances.max")]
    assert "qwen 2 x 1 + llama 2 x 1 = 4 accelerator devices" in found[0].message
    assert "2 x ml.g5.2xlarge x 1 = 2" in found[0].message
    assert "deliberate" in found[0].hint and "instances.max: 4" in found[0].hint


def test_too_many_accelerators_at_max_together(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["copies"]["max"] = 5  # 9 GPUs > 8, qwen alone 5 + 1
    found = run_rule("FS011", components)
    assert hits(found) == [("FS011", "warning", "endpoints[0].instances.max")]
    assert "= 9 accelerator devices" in found[0].message and "= 8:" in found[0].message
    assert "instances.max: 3" in found[0].hint  # ceil(9 / 4)


def test_memory_and_cpus_are_summed_too(run_rule, components):
    for comp in components["endpoints"][0]["inference_components"]:
        comp["resources"].update(memory_mb=60_000, cpus=16)  # 8 x 60000 MB > 2 x 196608; 8 x 16 > 2 x 48
    found = run_rule("FS011", components)
    assert [f.path for f in found] == ["endpoints[0].instances.max"] * 2
    assert "MB of host memory" in found[0].message and "vCPUs" in found[1].message


def test_what_can_never_fit_is_left_to_fs110_and_fs006(run_rule, components):
    qwen = components["endpoints"][0]["inference_components"][0]
    qwen["copies"]["max"] = 8  # 8 + llama's 1 > 8: qwen alone can never reach it
    assert run_rule("FS011", components) == []
    qwen["copies"]["max"] = 4
    qwen["resources"]["accelerators"] = 8  # one copy larger than an instance
    assert run_rule("FS011", components) == []
