def test_matching_overrides_pass(run_rule, single_model, components):
    single_model["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge", "model": {"model_size_gb": 8}}]}
    components["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.12xlarge", "components": {"qwen": {}}}]}
    assert run_rule("FS039", single_model) == []
    assert run_rule("FS039", components) == []


def test_unknown_component_and_wrong_kind_fail(run_rule, hits, single_model, components):
    components["endpoints"][0]["capacity"] = {"fallback": [
        {"instance_type": "ml.g5.12xlarge", "model": {"model_size_gb": 8}, "components": {"qwen-2": {}}}
    ]}
    found = run_rule("FS039", components)
    assert hits(found) == [
        ("FS039", "error", "endpoints[0].capacity.fallback[0].model"),
        ("FS039", "error", 'endpoints[0].capacity.fallback[0].components["qwen-2"]'),
    ]
    assert "qwen, llama" in found[1].message
    single_model["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge", "components": {"x": {}}}]}
    assert hits(run_rule("FS039", single_model)) == [("FS039", "error", "endpoints[0].capacity.fallback[0].components")]
