def test_fallback_with_enough_memory_passes(run_rule, single_model):
    # 16 GB on one L4 (ml.g6.2xlarge) falls back to one A10G (ml.g5.2xlarge): both 24 GiB.
    single_model["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge"}]}
    assert run_rule("FS036", single_model) == []


def test_fallback_too_small_fails_and_an_override_fixes_it(run_rule, hits, single_model):
    ep = single_model["endpoints"][0]
    ep["instance_type"] = "ml.g6e.2xlarge"  # one 48 GiB L40S
    ep["model"]["model_size_gb"] = 32
    ep["capacity"] = {"fallback": [{"instance_type": "ml.g6.2xlarge"}]}
    found = run_rule("FS036", single_model)
    assert hits(found) == [("FS036", "error", "endpoints[0].capacity.fallback[0].model")]
    assert "ml.g6.2xlarge" in found[0].message
    ep["capacity"]["fallback"][0]["model"] = {"model_data": "s3://models/awq/", "model_size_gb": 9}
    assert run_rule("FS036", single_model) == []


def test_component_override_of_devices_is_what_counts(run_rule, hits, components):
    ep = components["endpoints"][0]
    ep["inference_components"][0]["model_size_gb"] = 40
    ep["inference_components"][0]["resources"]["accelerators"] = 2  # 2 x 24 GiB L4 on the primary
    ep["capacity"] = {"fallback": [{"instance_type": "ml.g5.12xlarge",
                                    "components": {"qwen": {"resources": {"accelerators": 1, "memory_mb": 32768}}}}]}
    found = run_rule("FS036", components)
    assert hits(found) == [("FS036", "error", "endpoints[0].capacity.fallback[0].components.qwen")]
    assert "accelerators: 2" in found[0].hint
