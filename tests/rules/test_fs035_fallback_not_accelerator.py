def test_gpu_fallback_passes(run_rule, single_model):
    single_model["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge"}]}
    assert run_rule("FS035", single_model) == []


def test_cpu_fallback_warns(run_rule, hits, single_model):
    single_model["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.m5.xlarge"}]}
    found = run_rule("FS035", single_model)
    assert hits(found) == [("FS035", "warning", "endpoints[0].capacity.fallback[0].instance_type")]
    assert "image caching" in found[0].message
