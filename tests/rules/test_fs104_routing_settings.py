import pytest


def test_prefix_aware_with_settings_and_other_strategies_without_pass(run_rule, single_model):
    ep = single_model["endpoints"][0]
    for routing in ("least_outstanding_requests", "random", "kv_aware"):
        ep["routing"] = routing
        assert run_rule("FS104", single_model) == []
    ep.update(routing="prefix_aware", prefix_routing={"prefix_length": 1024, "concurrency_threshold": 1024})
    assert run_rule("FS104", single_model) == []


def test_prefix_aware_without_settings(run_rule, hits, single_model):
    single_model["endpoints"][0]["routing"] = "prefix_aware"
    found = run_rule("FS104", single_model)
    assert hits(found) == [("FS104", "error", "endpoints[0].routing")]
    assert found[0].hint.startswith("add prefix_routing:")


def test_settings_without_prefix_aware(run_rule, hits, single_model):
    single_model["endpoints"][0].update(routing="kv_aware", prefix_routing={"prefix_length": 2048, "concurrency_threshold": 8})
    found = run_rule("FS104", single_model)
    assert hits(found) == [("FS104", "error", "endpoints[0].prefix_routing")]
    assert found[0].hint == "set routing: prefix_aware, or remove prefix_routing"


@pytest.mark.parametrize(("key", "value"), [("prefix_length", 1023), ("prefix_length", 65537),
                                            ("concurrency_threshold", 0), ("concurrency_threshold", 1025)])
def test_settings_out_of_range(run_rule, hits, single_model, key, value):
    settings = {"prefix_length": 4096, "concurrency_threshold": 16, key: value}
    single_model["endpoints"][0].update(routing="prefix_aware", prefix_routing=settings)
    assert hits(run_rule("FS104", single_model)) == [("FS104", "error", f"endpoints[0].prefix_routing.{key}")]
