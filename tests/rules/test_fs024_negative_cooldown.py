def test_zero_and_positive_cooldowns_pass(run_rule, scale_to_zero):
    scale_to_zero["endpoints"][0]["inference_components"][0]["autoscaling"] = {
        "scale_in_cooldown": 0, "scale_out_cooldown": 0, "scale_from_zero": {"cooldown": 0}
    }
    assert run_rule("FS024", scale_to_zero) == []


def test_negative_target_tracking_cooldowns(run_rule, hits, single_model):
    single_model["endpoints"][0]["model"]["autoscaling"] = {"scale_in_cooldown": -1, "scale_out_cooldown": -60}
    assert hits(run_rule("FS024", single_model)) == [
        ("FS024", "error", "endpoints[0].model.autoscaling.scale_in_cooldown"),
        ("FS024", "error", "endpoints[0].model.autoscaling.scale_out_cooldown"),
    ]


def test_negative_scale_from_zero_cooldown_only_matters_when_used(run_rule, hits, scale_to_zero, components):
    scale_to_zero["endpoints"][0]["inference_components"][1]["autoscaling"] = {"scale_from_zero": {"cooldown": -5}}
    assert hits(run_rule("FS024", scale_to_zero)) == [
        ("FS024", "error", "endpoints[0].inference_components[1].autoscaling.scale_from_zero.cooldown")
    ]
    # copies.min 1: no step policy is created, so its cooldown is never sent.
    components["endpoints"][0]["inference_components"][1]["autoscaling"] = {"scale_from_zero": {"cooldown": -5}}
    assert run_rule("FS024", components) == []
