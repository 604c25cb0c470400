def test_room_for_one_batch_at_max_copies_passes(run_rule, components):
    # 4 + 1 copies of qwen and llama at its minimum (1): 6 of the 8 GPUs of 2 x ml.g6.12xlarge
    assert run_rule("FS045", components) == []


def test_a_full_endpoint_at_max_copies_warns(run_rule, hits, components):
    ep = components["endpoints"][0]
    ep["inference_components"][0]["copies"]["max"] = 7  # 7 + 1 + llama's 1 = 9 GPUs > 8
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
