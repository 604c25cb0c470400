import pytest


def test_positive_target_passes(run_rule, single_model):
    assert run_rule("FS023", single_model) == []
    single_model["endpoints"][0]["model"]["autoscaling"] = {"target_concurrency": 0.5}
    assert run_rule("FS023", single_model) == []


@pytest.mark.parametrize("value", [0, -1])
def test_zero_or_negative_is_an_error(run_rule, hits, components, value):
    components["endpoints"][0]["inference_components"][0]["autoscaling"] = {"target_concurrency": value}
    assert hits(run_rule("FS023", components)) == [
        ("FS023", "error", "endpoints[0].inference_components[0].autoscaling.target_concurrency")
    ]


def test_disabled_autoscaling_is_not_checked(run_rule, single_model):
    single_model["endpoints"][0]["model"]["autoscaling"] = {"enabled": False, "target_concurrency": 0}
    assert run_rule("FS023", single_model) == []
