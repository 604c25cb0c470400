def test_accelerator_types_pass(run_rule, single_model):
    for t in ("ml.g6.2xlarge", "ml.inf2.8xlarge", "ml.p4d.24xlarge"):
        single_model["endpoints"][0]["instance_type"] = t
        assert run_rule("FS002", single_model) == [], t


def test_cpu_type_warns(run_rule, hits, single_model):
    single_model["endpoints"][0]["instance_type"] = "ml.m5.xlarge"
    found = run_rule("FS002", single_model)
    assert hits(found) == [("FS002", "warning", "endpoints[0].instance_type")]
    assert "image caching" in found[0].message


def test_unknown_type_is_left_to_fs001(run_rule, single_model):
    single_model["endpoints"][0]["instance_type"] = "ml.g6.2xlarg"
    assert run_rule("FS002", single_model) == []
