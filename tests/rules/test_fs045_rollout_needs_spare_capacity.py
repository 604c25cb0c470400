from fastscale.infra.config import parse_config
from fastscale.infra.rules import run_rules


def test_room_for_one_batch_at_max_copies_passes(run_rule, components):
    # 4 + 1 copies of qwen and llama at its minimum (1): 6 of the 8 GPUs of 2 x ml.g6.12xlarge
    components["endpoints"][0]["deployment"] = {"components": {"batch": {"type": "COPY_COUNT", "value": 1}}}
    assert run_rule("FS045", components) == []


def test_fastscales_default_batch_on_a_full_endpoint_stays_quiet(run_rule, components):
    ep = components["endpoints"][0]
    ep["inference_components"][0]["copies"]["max"] = 7  # 7 + 1 + llama's 1 = 9 GPUs > 8, but no batch chosen
    assert run_rule("FS045", components) == []
    # Other update settings without a batch are not a choice of batch either.
    ep["deployment"] = {"components": {"bake_time": 600}}
    ep["inference_components"][0]["deployment"] = {"rolling": {"bake_time": 300}}
    assert run_rule("FS045", components) == []


def test_a_chosen_batch_on_a_full_endpoint_warns(run_rule, hits, components):
    ep = components["endpoints"][0]
    ep["inference_components"][0]["copies"]["max"] = 7  # 7 + 1 + llama's 1 = 9 GPUs > 8
    ep["deployment"] = {"components": {"batch": {"type": "COPY_COUNT", "value": 1}}}
    found = run_rule("FS045", components)
    assert hits(found) == [("FS045", "warning", "endpoints[0].deployment.components.batch")]
    assert "instances.max: 3" in found[0].hint and "qwen" in found[0].message


def test_a_percentage_batch_counts_copies_of_the_maximum(run_rule, hits, components):
    ep = components["endpoints"][0]
    ep["inference_components"][0]["deployment"] = {"rolling": {"batch": {"type": "CAPACITY_PERCENT", "value": 50}}}
    # 4 + 2 copies of qwen and llama's 1: 7 of 8 GPUs still fit
    assert run_rule("FS045", components) == []
    ep["inference_components"][0]["copies"]["max"] = 6  # 6 + 3 + 1 = 10 > 8
    assert hits(run_rule("FS045", components)) == [
        ("FS045", "warning", "endpoints[0].inference_components[0].deployment.rolling.batch")]


def test_aws_workshop_layout_with_defaults_has_no_warning(components):
    # Two 1-GPU components, copies 0-2 each, on up to two 1-GPU instances: a deliberate cap of shared capacity.
    ep = components["endpoints"][0]
    ep.update(instance_type="ml.g5.2xlarge", instances={"initial": 1, "min": 0, "max": 2})
    for comp in ep["inference_components"]:
        comp.update(resources={"accelerators": 1, "memory_mb": 8192}, copies={"initial": 1, "min": 0, "max": 2})
    findings = run_rules(parse_config(components))
    assert [(f.code, f.severity.value) for f in findings if f.severity.value != "info"] == [("FS011", "warning")]
