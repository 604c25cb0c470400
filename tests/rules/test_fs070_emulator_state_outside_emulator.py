URL = "http://localhost:4566"
S3 = {"backend": "s3", "bucket": "team-terraform-state", "key": "demo/terraform.tfstate"}


def test_emulator_with_local_state_passes(run_rule, single_model):
    single_model["endpoint_url"] = URL
    assert run_rule("FS070", single_model) == []


def test_emulator_with_state_in_the_emulator_passes(run_rule, single_model):
    single_model.update(endpoint_url=URL, state={**S3, "endpoint_url": URL})
    assert run_rule("FS070", single_model) == []


def test_real_account_with_s3_state_is_not_checked(run_rule, single_model):
    single_model["state"] = S3
    assert run_rule("FS070", single_model) == []


def test_emulator_with_state_in_real_s3_is_an_error(run_rule, single_model):
    single_model.update(endpoint_url=URL, state=S3)
    [finding] = run_rule("FS070", single_model)
    assert finding.path == "state.endpoint_url"
    assert "team-terraform-state" in finding.message and URL in finding.message
    assert f"state.endpoint_url: {URL}" in finding.hint
