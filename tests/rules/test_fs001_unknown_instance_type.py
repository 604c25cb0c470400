def test_known_types_pass(run_rule, single_model, components):
    assert run_rule("FS001", single_model) == []
    assert run_rule("FS001", components) == []
    single_model["endpoints"][0]["instance_type"] = "ml.c7i.2xlarge"  # a CPU type is still a known type
    assert run_rule("FS001", single_model) == []


def test_typo_is_an_error_with_suggestions(run_rule, hits, single_model):
    single_model["endpoints"][0]["instance_type"] = "ml.g6.2xlarg"
    found = run_rule("FS001", single_model)
    assert hits(found) == [("FS001", "error", "endpoints[0].instance_type")]
    assert "ml.g6.2xlarg'" in found[0].message
    assert "ml.g6.2xlarge" in found[0].hint


def test_missing_ml_prefix_suggests_the_prefixed_type(run_rule, single_model):
    single_model["endpoints"][0]["instance_type"] = "g6.12xlarge"
    (finding,) = run_rule("FS001", single_model)
    assert finding.hint.startswith("did you mean ml.g6.12xlarge")


def test_every_endpoint_is_checked(run_rule, hits, single_model, components):
    single_model["endpoints"].append(components["endpoints"][0])
    single_model["endpoints"][1]["instance_type"] = "ml.nonsense.huge"
    assert hits(run_rule("FS001", single_model)) == [("FS001", "error", "endpoints[1].instance_type")]
