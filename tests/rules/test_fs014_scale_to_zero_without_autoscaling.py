def test_scale_to_zero_with_autoscaling_passes(run_rule, scale_to_zero, components):
    assert run_rule("FS014", scale_to_zero) == []
    components["endpoints"][0]["inference_components"][0]["autoscaling"] = {"enabled": False}  # min 1: fine
    assert run_rule("FS014", components) == []


def test_zero_copies_without_autoscaling_is_an_error(run_rule, hits, scale_to_zero):
    scale_to_zero["endpoints"][0]["inference_components"][1]["autoscaling"] = {"enabled": False}
    found = run_rule("FS014", scale_to_zero)
    assert hits(found) == [("FS014", "error", "endpoints[0].inference_components[1].autoscaling.enabled")]
    assert found[0].message.startswith("scale to zero without the step policy being possible")
