def test_placement_on_components_passes(run_rule, components):
    components["endpoints"][0]["capacity"] = {"placement": {"strategy": "SPREAD", "az_balance": {"max_imbalance": 0}}}
    assert run_rule("FS043", components) == []


def test_imbalance_out_of_range_fails(run_rule, hits, components):
    components["endpoints"][0]["capacity"] = {"placement": {"az_balance": {"max_imbalance": 101}}}
    found = run_rule("FS043", components)
    assert hits(found) == [("FS043", "error", "endpoints[0].capacity.placement.az_balance.max_imbalance")]
    assert found[0].hint == "set max_imbalance: 100"


def test_placement_on_a_single_model_endpoint_fails(run_rule, hits, single_model):
    single_model["endpoints"][0]["capacity"] = {"placement": {"strategy": "BINPACK"}}
    assert hits(run_rule("FS043", single_model)) == [("FS043", "error", "endpoints[0].capacity.placement")]
