"""FS107: an override that sends the endpoint's data to a bucket the config does not otherwise use, or encrypts it
with a KMS key of another account, says what it does."""

from __future__ import annotations

import pytest

ROLE = "arn:aws:iam::123456789012:role/sagemaker"
OWN_KEY = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
OTHER_KEY = "arn:aws:kms:us-east-1:210987654321:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
CONFIG = "aws_sagemaker_endpoint_configuration"
BASE = f"endpoints[0].overrides.{CONFIG}"


def with_overrides(single_model, overrides, *, role: bool = True):
    ep = single_model["endpoints"][0]
    ep["model"]["model_data"] = "s3://demo-models/llm/"
    if role:
        ep["execution_role_arn"] = ROLE
    else:
        ep.pop("execution_role_arn", None)
    ep["overrides"] = {CONFIG: overrides}
    return single_model


def test_data_capture_to_a_bucket_the_config_uses_nowhere_else_says_what_it_copies(run_rule, hits, single_model):
    found = run_rule("FS107", with_overrides(single_model, {
        "data_capture_config": {"destination_s3_uri": "s3://collector/capture", "enable_capture": True}}))
    assert hits(found) == [("FS107", "warning", f"{BASE}.data_capture_config.destination_s3_uri")]
    assert "copies the requests and responses sent to the endpoint" in found[0].message
    assert "s3://collector/capture" in found[0].message and "uses nowhere else" in found[0].message
    assert "s3://collector is yours" in found[0].hint


def test_data_capture_to_the_configs_own_bucket_passes(run_rule, single_model):
    assert run_rule("FS107", with_overrides(single_model, {
        "data_capture_config.0.destination_s3_uri": "s3://demo-models/capture"})) == []


def test_a_bucket_named_for_another_account_is_flagged_even_if_the_config_uses_it(run_rule, hits, single_model):
    data = with_overrides(single_model, {"data_capture_config.0.destination_s3_uri": "s3://sagemaker-us-east-1-210987654321/c"})
    data["endpoints"][0]["model"]["model_data"] = "s3://sagemaker-us-east-1-210987654321/llm/"
    found = run_rule("FS107", data)
    assert hits(found) == [("FS107", "warning", f'{BASE}["data_capture_config.0.destination_s3_uri"]')]
    assert "carries account 210987654321, not the account of this config's other ARNs (123456789012)" in found[0].message


@pytest.mark.parametrize(("path", "words"), [
    ("production_variants.0.core_dump_config.destination_s3_uri", "memory dump"),
    ("async_inference_config.0.output_config.0.s3_output_path", "every asynchronous inference response"),
    ("async_inference_config.0.output_config.0.s3_failure_path", "failed asynchronous request"),
])
def test_every_destination_says_what_is_written_there(run_rule, hits, single_model, path, words):
    found = run_rule("FS107", with_overrides(single_model, {path: "s3://elsewhere/x"}))
    assert [h[:2] for h in hits(found)] == [("FS107", "warning")]
    assert words in found[0].message


def test_a_kms_key_of_another_account_than_the_roles_is_flagged(run_rule, hits, single_model):
    found = run_rule("FS107", with_overrides(single_model, {"kms_key_arn": OTHER_KEY}))
    assert hits(found) == [("FS107", "warning", f"{BASE}.kms_key_arn")]
    assert "of account 210987654321 encrypts the endpoint's ML storage volume" in found[0].message
    assert "account 123456789012" in found[0].message
    captured = run_rule("FS107", with_overrides(single_model, {
        "data_capture_config": {"destination_s3_uri": "s3://demo-models/c", "kms_key_id": OTHER_KEY}}))
    assert hits(captured) == [("FS107", "warning", f"{BASE}.data_capture_config.kms_key_id")]
    assert "encrypts the captured requests and responses" in captured[0].message


def test_a_key_of_the_configs_account_or_an_unjudgeable_key_passes(run_rule, single_model):
    assert run_rule("FS107", with_overrides(single_model, {"kms_key_arn": OWN_KEY})) == []
    # No ARN of the config's own to compare with, or a key id rather than an ARN: nothing to say.
    assert run_rule("FS107", with_overrides(single_model, {"kms_key_arn": OTHER_KEY}, role=False)) == []
    assert run_rule("FS107", with_overrides(single_model, {"kms_key_arn": "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"})) == []


def test_the_example_is_flagged(run_rule):
    import yaml

    from fastscale.infra.rules.fs107_override_sends_data_elsewhere import EXAMPLE

    assert {f.path.rsplit(".", 1)[-1] for f in run_rule("FS107", yaml.safe_load(EXAMPLE))} == {"destination_s3_uri", "kms_key_id"}
