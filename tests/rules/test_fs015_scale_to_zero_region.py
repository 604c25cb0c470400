def _move(data, region):
    data["region"] = region
    for comp in data["endpoints"][0].get("inference_components", []):
        comp["image"] = comp["image"].replace("us-east-1", region)


def test_other_regions_and_warm_endpoints_pass(run_rule, scale_to_zero, components):
    assert run_rule("FS015", scale_to_zero) == []
    _move(components, "eu-west-3")  # instances.min 1: nothing to reject
    assert run_rule("FS015", components) == []


def test_eu_west_3_warns(run_rule, hits, scale_to_zero):
    _move(scale_to_zero, "eu-west-3")
    found = run_rule("FS015", scale_to_zero)
    assert hits(found) == [("FS015", "warning", "endpoints[0].instances.min")]
    assert "eu-west-3" in found[0].message
