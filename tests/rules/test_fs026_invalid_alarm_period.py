import pytest


@pytest.mark.parametrize("period", [10, 20, 30, 60, 300, 3600])
def test_valid_periods_pass(run_rule, scale_to_zero, period):
    ep = scale_to_zero["endpoints"][0]
    ep["alarms"] = {"period": period, "evaluation_periods": 1}
    ep["inference_components"][0]["autoscaling"] = {"scale_from_zero": {"period": period}}
    assert run_rule("FS026", scale_to_zero) == []


@pytest.mark.parametrize(("period", "fix"), [(45, 60), (90, 120), (0, 60), (61, 60)])
def test_operational_alarm_period(run_rule, hits, single_model, period, fix):
    single_model["endpoints"][0]["alarms"] = {"period": period}
    found = run_rule("FS026", single_model)
    assert hits(found) == [("FS026", "error", "endpoints[0].alarms.period")]
    assert found[0].hint == f"set period: {fix}"


def test_scale_from_zero_period(run_rule, hits, scale_to_zero):
    scale_to_zero["endpoints"][0]["inference_components"][1]["autoscaling"] = {"scale_from_zero": {"period": 15}}
    assert hits(run_rule("FS026", scale_to_zero)) == [
        ("FS026", "error", "endpoints[0].inference_components[1].autoscaling.scale_from_zero.period")
    ]


def test_unused_alarms_are_not_checked(run_rule, single_model, components):
    single_model["endpoints"][0]["alarms"] = {"enabled": False, "period": 45}
    assert run_rule("FS026", single_model) == []
    # copies.min 1: no scale-from-zero alarm is created.
    components["endpoints"][0]["inference_components"][1]["autoscaling"] = {"scale_from_zero": {"period": 15}}
    assert run_rule("FS026", components) == []
