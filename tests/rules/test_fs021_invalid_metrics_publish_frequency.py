import pytest


@pytest.mark.parametrize("value", [None, 10, 30, 60, 120, 180, 240, 300])
def test_valid_values_pass(run_rule, single_model, value):
    single_model["endpoints"][0]["metrics_publish_frequency"] = value
    assert run_rule("FS021", single_model) == []


@pytest.mark.parametrize("value", [0, 5, 15, 90, 600])
def test_other_values_are_errors(run_rule, hits, single_model, value):
    single_model["endpoints"][0]["metrics_publish_frequency"] = value
    found = run_rule("FS021", single_model)
    assert hits(found) == [("FS021", "error", "endpoints[0].metrics_publish_frequency")]
    assert "metrics_publish_frequency: 10" in found[0].hint
