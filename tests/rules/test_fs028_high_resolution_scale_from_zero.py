import pytest


def test_sixty_seconds_passes(run_rule, scale_to_zero):
    assert run_rule("FS028", scale_to_zero) == []


@pytest.mark.parametrize("period", [10, 20, 30])
def test_sub_minute_period_warns(run_rule, hits, scale_to_zero, period):
    scale_to_zero["endpoints"][0]["inference_components"][0]["autoscaling"] = {"scale_from_zero": {"period": period}}
    found = run_rule("FS028", scale_to_zero)
    assert hits(found) == [("FS028", "warning", "endpoints[0].inference_components[0].autoscaling.scale_from_zero.period")]
    assert "INSUFFICIENT_DATA" in found[0].message


def test_components_that_never_reach_zero_are_not_checked(run_rule, components):
    components["endpoints"][0]["inference_components"][0]["autoscaling"] = {"scale_from_zero": {"period": 10}}
    assert run_rule("FS028", components) == []
