def test_devices_that_exist_on_the_fallback_pass(run_rule, components):
    components["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.12xlarge"}]}
    assert run_rule("FS037", components) == []


def test_too_many_devices_for_the_fallback_fail_until_overridden(run_rule, hits, components):
    ep = components["endpoints"][0]
    ep["inference_components"][0]["resources"]["accelerators"] = 4
    ep["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge"}]}  # one A10G
    found = run_rule("FS037", components)
    assert hits(found) == [("FS037", "error", "endpoints[0].capacity.fallback[0].components")]
    assert "qwen" in found[0].message and "accelerators: 1" in found[0].hint
    ep["capacity"]["fallback"][0]["components"] = {"qwen": {"resources": {"accelerators": 1, "memory_mb": 16384}}}
    assert run_rule("FS037", components) == []
    ep["capacity"]["fallback"][0]["components"]["qwen"]["resources"]["accelerators"] = 2
    assert hits(run_rule("FS037", components)) == [
        ("FS037", "error", "endpoints[0].capacity.fallback[0].components.qwen.resources.accelerators")
    ]
