def test_known_fallback_passes(run_rule, single_model):
    single_model["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge"}]}
    assert run_rule("FS034", single_model) == []


def test_misspelled_fallback_fails_with_a_suggestion(run_rule, hits, single_model):
    single_model["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarg"}]}
    found = run_rule("FS034", single_model)
    assert hits(found) == [("FS034", "error", "endpoints[0].capacity.fallback[0].instance_type")]
    assert "ml.g5.2xlarge" in found[0].hint
