import pytest


def test_in_range_and_unset_pass(run_rule, single_model, components):
    assert run_rule("FS020", single_model) == []
    ep = single_model["endpoints"][0]
    ep["model_download_timeout"], ep["startup_health_check_timeout"] = 60, 3600
    assert run_rule("FS020", single_model) == []


@pytest.mark.parametrize(("value", "fix"), [(59, 60), (3601, 3600), (0, 60)])
def test_endpoint_level_out_of_range(run_rule, hits, single_model, value, fix):
    single_model["endpoints"][0]["startup_health_check_timeout"] = value
    found = run_rule("FS020", single_model)
    assert hits(found) == [("FS020", "error", "endpoints[0].startup_health_check_timeout")]
    assert found[0].hint == f"set startup_health_check_timeout: {fix}"


def test_workload_level_out_of_range(run_rule, hits, components, single_model):
    components["endpoints"][0]["inference_components"][1]["model_download_timeout"] = 7200
    assert hits(run_rule("FS020", components)) == [
        ("FS020", "error", "endpoints[0].inference_components[1].model_download_timeout")
    ]
    single_model["endpoints"][0]["model"]["startup_health_check_timeout"] = 30
    assert hits(run_rule("FS020", single_model)) == [("FS020", "error", "endpoints[0].model.startup_health_check_timeout")]
