from fastscale.infra.base.aws_facts import MAX_METRICS_PER_MATH_ALARM


def _components(n):
    return [
        {"name": f"m{i}", "image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0",
         "resources": {"accelerators": 1, "memory_mb": 4096}}
        for i in range(n)
    ]


def _endpoint(config, n):
    ep = config["endpoints"][0]
    ep.pop("model", None)
    ep["instance_type"] = "ml.g6.48xlarge"
    ep["inference_components"] = _components(n)
    return config


def test_up_to_the_limit_passes(run_rule, single_model):
    assert run_rule("FS030", _endpoint(single_model, MAX_METRICS_PER_MATH_ALARM)) == []


def test_over_the_limit_is_an_error(run_rule, hits, single_model):
    found = run_rule("FS030", _endpoint(single_model, MAX_METRICS_PER_MATH_ALARM + 1))
    assert hits(found) == [("FS030", "error", "endpoints[0].alarms.enabled")]
    assert "enabled: false" in found[0].hint


def test_alarms_off_passes(run_rule, single_model):
    config = _endpoint(single_model, MAX_METRICS_PER_MATH_ALARM + 1)
    config["endpoints"][0]["alarms"] = {"enabled": False}
    assert run_rule("FS030", config) == []
