import pytest


@pytest.mark.parametrize("value", [300, 900, 3600])
def test_timeouts_in_range_pass(run_rule, single_model, value):
    single_model["endpoints"][0]["capacity"] = {"provision_timeout": value}
    assert run_rule("FS040", single_model) == []


@pytest.mark.parametrize(("value", "fix"), [(299, 300), (3601, 3600), (0, 300)])
def test_timeouts_out_of_range_fail(run_rule, hits, single_model, value, fix):
    single_model["endpoints"][0]["capacity"] = {"provision_timeout": value}
    found = run_rule("FS040", single_model)
    assert hits(found) == [("FS040", "error", "endpoints[0].capacity.provision_timeout")]
    assert found[0].hint == f"set provision_timeout: {fix}"
