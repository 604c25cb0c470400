FALLBACKS = ["ml.g5.12xlarge", "ml.g6e.12xlarge", "ml.g6.24xlarge", "ml.g5.24xlarge", "ml.g6e.24xlarge"]


def test_five_pools_pass(run_rule, components):
    components["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": t} for t in FALLBACKS[:4]]}
    assert run_rule("FS032", components) == []


def test_six_pools_fail(run_rule, hits, components):
    components["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": t} for t in FALLBACKS]}
    found = run_rule("FS032", components)
    assert hits(found) == [("FS032", "error", "endpoints[0].capacity.fallback")]
    assert "6 instance pools" in found[0].message and "at most 4 fallback" in found[0].hint
