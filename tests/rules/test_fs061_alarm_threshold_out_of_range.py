import pytest


def test_defaults_and_edges_pass(run_rule, single_model):
    assert run_rule("FS061", single_model) == []
    single_model["endpoints"][0]["alarms"] = {"gpu_memory_percent": 100, "model_latency_ms": 60000, "errors_5xx": 1}
    assert run_rule("FS061", single_model) == []


@pytest.mark.parametrize(
    ("key", "value"),
    [("gpu_memory_percent", 250), ("gpu_memory_percent", 0), ("model_latency_ms", 1e300),
     ("model_latency_ms", -5), ("errors_5xx", 0)],
)
def test_unreachable_threshold_is_an_error(run_rule, hits, components, key, value):
    components["endpoints"][0]["alarms"] = {key: value}
    assert hits(run_rule("FS061", components)) == [("FS061", "error", f"endpoints[0].alarms.{key}")]


def test_disabled_alarms_are_not_checked(run_rule, single_model):
    single_model["endpoints"][0]["alarms"] = {"enabled": False, "gpu_memory_percent": 250}
    assert run_rule("FS061", single_model) == []
