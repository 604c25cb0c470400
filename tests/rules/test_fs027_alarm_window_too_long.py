def test_windows_within_limits_pass(run_rule, single_model, scale_to_zero):
    assert run_rule("FS027", single_model) == []
    assert run_rule("FS027", scale_to_zero) == []
    single_model["endpoints"][0]["alarms"] = {"period": 60, "evaluation_periods": 1440}  # exactly one day
    assert run_rule("FS027", single_model) == []
    single_model["endpoints"][0]["alarms"] = {"period": 3600, "evaluation_periods": 168}  # exactly seven days
    assert run_rule("FS027", single_model) == []


def test_short_periods_are_limited_to_one_day(run_rule, hits, single_model):
    single_model["endpoints"][0]["alarms"] = {"period": 60, "evaluation_periods": 1441}
    found = run_rule("FS027", single_model)
    assert hits(found) == [("FS027", "error", "endpoints[0].alarms.evaluation_periods")]
    assert "at most 1440" in found[0].hint


def test_hour_periods_are_limited_to_seven_days(run_rule, hits, single_model):
    single_model["endpoints"][0]["alarms"] = {"period": 3600, "evaluation_periods": 169}
    found = run_rule("FS027", single_model)
    assert hits(found) == [("FS027", "error", "endpoints[0].alarms.evaluation_periods")]
    assert "at most 168" in found[0].hint


def test_zero_evaluation_periods(run_rule, hits, scale_to_zero):
    scale_to_zero["endpoints"][0]["inference_components"][0]["autoscaling"] = {"scale_from_zero": {"evaluation_periods": 0}}
    assert hits(run_rule("FS027", scale_to_zero)) == [
        ("FS027", "error", "endpoints[0].inference_components[0].autoscaling.scale_from_zero.evaluation_periods")
    ]


def test_stuck_at_zero_alarm_window(run_rule, hits, scale_to_zero, components):
    scale_to_zero["endpoints"][0]["alarms"] = {"stuck_at_zero_minutes": 2000}
    assert hits(run_rule("FS027", scale_to_zero)) == [("FS027", "error", "endpoints[0].alarms.stuck_at_zero_minutes")]
    # Without scale to zero there is no stuck-at-zero alarm to check.
    components["endpoints"][0]["alarms"] = {"stuck_at_zero_minutes": 2000}
    assert run_rule("FS027", components) == []
