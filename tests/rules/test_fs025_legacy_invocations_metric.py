def test_high_resolution_passes(run_rule, single_model, components):
    assert run_rule("FS025", single_model) == []
    assert run_rule("FS025", components) == []


def test_invocations_metric_warns_with_the_cost(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][1]["autoscaling"] = {"metric": "invocations"}
    found = run_rule("FS025", components)
    assert hits(found) == [("FS025", "warning", "endpoints[0].inference_components[1].autoscaling.metric")]
    assert "3 minutes" in found[0].message and "30 s" in found[0].message
    assert "metric: high_resolution" in found[0].hint


def test_disabled_autoscaling_is_not_checked(run_rule, single_model):
    single_model["endpoints"][0]["model"]["autoscaling"] = {"enabled": False, "metric": "invocations"}
    assert run_rule("FS025", single_model) == []
