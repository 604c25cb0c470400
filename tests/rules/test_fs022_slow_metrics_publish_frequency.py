def test_ten_or_unset_passes(run_rule, single_model):
    assert run_rule("FS022", single_model) == []
    single_model["endpoints"][0]["metrics_publish_frequency"] = 10
    assert run_rule("FS022", single_model) == []


def test_slower_frequency_with_high_resolution_warns(run_rule, hits, components):
    components["endpoints"][0]["metrics_publish_frequency"] = 60
    found = run_rule("FS022", components)
    assert hits(found) == [("FS022", "warning", "endpoints[0].metrics_publish_frequency")]
    assert "'qwen'" in found[0].message and "'llama'" in found[0].message


def test_no_warning_without_high_resolution_scaling(run_rule, single_model):
    ep = single_model["endpoints"][0]
    ep["metrics_publish_frequency"] = 60
    ep["model"]["autoscaling"] = {"metric": "invocations"}
    assert run_rule("FS022", single_model) == []
    ep["model"]["autoscaling"] = {"enabled": False}
    assert run_rule("FS022", single_model) == []


def test_invalid_values_are_left_to_fs021(run_rule, single_model):
    single_model["endpoints"][0]["metrics_publish_frequency"] = 15
    assert run_rule("FS022", single_model) == []


def test_the_message_names_the_metrics_the_frequency_paces(run_rule, components):
    ep = components["endpoints"][0]
    ep["metrics_publish_frequency"] = 60
    [found] = run_rule("FS022", components)
    assert found.message.startswith("utilization metrics (invocation metrics stay at 60 s without enhanced_metrics)")
    ep["enhanced_metrics"] = True
    [found] = run_rule("FS022", components)
    assert found.message.startswith("utilization and invocation metrics are published every 60 s")
