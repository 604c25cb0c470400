GIB_PER_GB = 1e9 / 2**30


def _gb(gib):
    return gib / GIB_PER_GB


def test_enough_headroom_passes(run_rule, single_model, components):
    assert run_rule("FS008", single_model) == []
    assert run_rule("FS008", components) == []
    single_model["endpoints"][0]["model"]["model_size_gb"] = _gb(24 * 0.9)  # exactly 90% is allowed
    assert run_rule("FS008", single_model) == []


def test_between_90_and_100_percent_warns(run_rule, hits, single_model):
    single_model["endpoints"][0]["model"]["model_size_gb"] = _gb(23)  # 96% of 24 GiB
    found = run_rule("FS008", single_model)
    assert hits(found) == [("FS008", "warning", "endpoints[0].model.model_size_gb")]
    assert "96%" in found[0].message and "10%" in found[0].message


def test_over_100_percent_is_fs007_not_fs008(run_rule, single_model):
    single_model["endpoints"][0]["model"]["model_size_gb"] = _gb(25)
    assert run_rule("FS008", single_model) == []
    assert len(run_rule("FS007", single_model)) == 1


def test_component_hint_asks_for_more_devices(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["model_size_gb"] = _gb(22)  # 92% of one L4
    found = run_rule("FS008", components)
    assert hits(found) == [("FS008", "warning", "endpoints[0].inference_components[0].model_size_gb")]
    assert "accelerators: 2" in found[0].hint
