import pytest


def _s3(data, **state):
    data["state"] = {"backend": "s3", "bucket": "demo-tf-state", "key": "demo.tfstate", **state}
    return data


def test_template_syntax_without_the_engine_token_passes(run_rule, single_model):
    # Terraform reads the backend block literally; only the engine's own token syntax is a problem there.
    assert run_rule("FS074", _s3(single_model, key='${file("x")}/%{ if true }y%{ endif }')) == []


def test_the_engine_token_elsewhere_passes(run_rule, single_model):
    # Rendered by the resource layer after the engine resolved its tokens: it arrives literally (FS073 warns).
    single_model["endpoints"][0]["model"]["environment"] = {"X": "${TfToken[TOKEN.1]}"}
    single_model["tags"] = {"t": "${TfToken[TOKEN.1]}"}
    assert run_rule("FS074", single_model) == []


@pytest.mark.parametrize("field", ["key", "region", "dynamodb_table", "kms_key_id"])
def test_the_engine_token_in_a_backend_setting_is_an_error(run_rule, hits, single_model, field):
    found = run_rule("FS074", _s3(single_model, **{field: "a${TfToken[TOKEN.1]}"}))
    assert hits(found) == [("FS074", "error", f"state.{field}")]
    assert "remove 'TfToken['" in found[0].hint


def test_the_engine_token_in_the_local_state_path_and_region_is_an_error(run_rule, hits, single_model):
    single_model["state"] = {"backend": "local", "path": "${TfToken[TOKEN.1]}.tfstate"}
    single_model["region"] = "us-${TfToken[TOKEN.1]}"
    found = sorted(run_rule("FS074", single_model), key=lambda f: f.path)
    assert hits(found) == [("FS074", "error", "region"), ("FS074", "error", "state.path")]
