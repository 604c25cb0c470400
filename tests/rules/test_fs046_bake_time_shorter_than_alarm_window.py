def test_default_and_long_enough_bake_times_pass(run_rule, single_model, components):
    assert run_rule("FS046", single_model) == []  # default: 5 x 60 s + 60 s
    assert run_rule("FS046", components) == []
    single_model["endpoints"][0]["deployment"] = {"blue_green": {"bake_time": 300}}
    assert run_rule("FS046", single_model) == []  # exactly the window


def test_a_bake_time_shorter_than_the_window_warns(run_rule, hits, single_model):
    single_model["endpoints"][0]["deployment"] = {"blue_green": {"traffic": "ALL_AT_ONCE", "bake_time": 299}}
    found = run_rule("FS046", single_model)
    assert hits(found) == [("FS046", "warning", "endpoints[0].deployment.blue_green.bake_time")]
    assert found[0].hint.startswith("set bake_time: 360")


def test_a_component_override_is_checked_where_it_is_set(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][1]["deployment"] = {"rolling": {"bake_time": 60}}
    assert hits(run_rule("FS046", components)) == [
        ("FS046", "warning", "endpoints[0].inference_components[1].deployment.rolling.bake_time")]


def test_a_window_longer_than_any_bake_time_warns_on_the_alarms(run_rule, hits, single_model):
    single_model["endpoints"][0]["alarms"] = {"period": 300, "evaluation_periods": 13}  # 3900 s
    found = run_rule("FS046", single_model)
    assert hits(found) == [("FS046", "warning", "endpoints[0].deployment.rollback_alarms")]
    assert "shorten" in found[0].hint


def test_without_automatic_rollback_nothing_to_bake_for(run_rule, single_model):
    single_model["endpoints"][0]["deployment"] = {"auto_rollback": False, "blue_green": {"bake_time": 0}}
    assert run_rule("FS046", single_model) == []
