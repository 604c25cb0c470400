def test_valid_settings_pass(run_rule, single_model, components):
    assert run_rule("FS048", single_model) == [] and run_rule("FS048", components) == []
    single_model["endpoints"][0]["deployment"] = {"blue_green": {
        "traffic": "LINEAR", "step": {"type": "CAPACITY_PERCENT", "value": 50}, "bake_time": 600,
        "termination_wait": 600, "timeout": 14400}}
    assert run_rule("FS048", single_model) == []
    single_model["endpoints"][0]["deployment"] = {"rolling": {"batch": {"type": "CAPACITY_PERCENT", "value": 5}}}
    assert run_rule("FS048", single_model) == []
    components["endpoints"][0]["deployment"] = {"components": {"timeout": 28800, "rollback_batch": {
        "type": "CAPACITY_PERCENT", "value": 100}}}
    assert run_rule("FS048", components) == []


def test_strategies_of_the_other_kind_of_endpoint_fail(run_rule, hits, single_model, components):
    single_model["endpoints"][0]["deployment"] = {"blue_green": {}, "rolling": {}, "components": {}}
    assert hits(run_rule("FS048", single_model)) == [
        ("FS048", "error", "endpoints[0].deployment"), ("FS048", "error", "endpoints[0].deployment.components")]
    components["endpoints"][0]["deployment"] = {"blue_green": {}}
    found = run_rule("FS048", components)
    assert hits(found) == [("FS048", "error", "endpoints[0].deployment.blue_green")]
    assert "deployment.components" in found[0].hint


def test_traffic_steps_and_percentages(run_rule, hits, single_model):
    ep = single_model["endpoints"][0]
    ep["deployment"] = {"blue_green": {"traffic": "CANARY"}}
    assert hits(run_rule("FS048", single_model)) == [("FS048", "error", "endpoints[0].deployment.blue_green.step")]
    ep["deployment"] = {"blue_green": {"step": {"value": 1}}}  # ALL_AT_ONCE with a step
    assert hits(run_rule("FS048", single_model)) == [("FS048", "error", "endpoints[0].deployment.blue_green.step")]
    ep["deployment"] = {"blue_green": {"traffic": "LINEAR", "step": {"type": "CAPACITY_PERCENT", "value": 5}}}
    found = run_rule("FS048", single_model)
    assert hits(found) == [("FS048", "error", "endpoints[0].deployment.blue_green.step.value")]
    assert found[0].hint == "set value: 10"
    ep["deployment"] = {"rolling": {"batch": {"type": "CAPACITY_PERCENT", "value": 60}}}
    assert [f.hint for f in run_rule("FS048", single_model)] == ["set value: 50"]


def test_timeouts(run_rule, hits, single_model, components):
    ep = single_model["endpoints"][0]
    ep["deployment"] = {"blue_green": {"timeout": 20000}}  # fine for the API, not for hashicorp/aws
    found = run_rule("FS048", single_model)
    assert hits(found) == [("FS048", "error", "endpoints[0].deployment.blue_green.timeout")]
    assert found[0].hint == "set timeout: 14400"
    ep["deployment"] = {"blue_green": {"bake_time": 600, "termination_wait": 600, "timeout": 1200}}
    assert "above 1200" in run_rule("FS048", single_model)[0].hint
    components["endpoints"][0]["inference_components"][0]["deployment"] = {"rolling": {"bake_time": 900, "timeout": 600}}
    assert hits(run_rule("FS048", components)) == [
        ("FS048", "error", "endpoints[0].inference_components[0].deployment.rolling.timeout")]
