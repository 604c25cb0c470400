RESERVATION = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/g6-for-inference"


def test_scale_in_on_components_and_reservation_alone_pass(run_rule, scale_to_zero, single_model):
    scale_to_zero["endpoints"][0]["scale_in"] = {"strategy": "IDLE_RELEASE", "cooldown_minutes": 5}
    single_model["endpoints"][0]["capacity"] = {"reservation_arn": RESERVATION}
    assert run_rule("FS044", scale_to_zero) == []
    assert run_rule("FS044", single_model) == []


def test_scale_in_on_a_single_model_endpoint_fails(run_rule, hits, single_model):
    single_model["endpoints"][0]["scale_in"] = {"strategy": "IDLE_RELEASE"}
    found = run_rule("FS044", single_model)
    assert hits(found) == [("FS044", "error", "endpoints[0].scale_in")]
    assert "inference components" in found[0].message


def test_reservation_with_fallback_pools_fails(run_rule, hits, components):
    components["endpoints"][0]["capacity"] = {"reservation_arn": RESERVATION, "fallback": [{"instance_type": "ml.g5.12xlarge"}]}
    assert hits(run_rule("FS044", components)) == [("FS044", "error", "endpoints[0].capacity.reservation_arn")]
