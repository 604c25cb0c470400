def test_large_but_accepted_target_passes(run_rule, single_model):
    single_model["endpoints"][0]["model"]["autoscaling"] = {"target_concurrency": 2.0**360}
    assert run_rule("FS062", single_model) == []


def test_target_beyond_the_api_range_is_an_error(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["autoscaling"] = {"target_concurrency": 1e300}
    findings = run_rule("FS062", components)
    assert hits(findings) == [("FS062", "error", "endpoints[0].inference_components[0].autoscaling.target_concurrency")]
    assert "2^360" in findings[0].message


def test_disabled_autoscaling_is_not_checked(run_rule, single_model):
    single_model["endpoints"][0]["model"]["autoscaling"] = {"enabled": False, "target_concurrency": 1e300}
    assert run_rule("FS062", single_model) == []
