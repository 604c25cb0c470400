import pytest

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf"
KEY = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"


def _secrets(data, **secrets):
    data["endpoints"][0]["model"]["secrets"] = secrets
    return data


def test_secret_in_the_region_passes(run_rule, single_model):
    assert run_rule("FS064", _secrets(single_model, HF_TOKEN=ARN, DB_PASSWORD={"arn": ARN, "kms_key_arn": KEY})) == []


def test_gov_cloud_partition_passes(run_rule, single_model):
    single_model["region"] = "us-gov-west-1"
    arn = "arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:hf"
    assert run_rule("FS064", _secrets(single_model, HF_TOKEN=arn)) == []


@pytest.mark.parametrize(
    ("secret", "path"),
    [
        ("arn:aws:secretsmanager:eu-west-1:123456789012:secret:hf-AbCdEf", "HF_TOKEN.arn"),  # other region
        ("arn:aws-cn:secretsmanager:us-east-1:123456789012:secret:hf-AbCdEf", "HF_TOKEN.arn"),  # wrong partition
        ("arn:aws:ssm:us-east-1:123456789012:parameter/hf", "HF_TOKEN.arn"),  # not Secrets Manager
        ("hf_not_an_arn", "HF_TOKEN.arn"),
        ({"arn": ARN, "kms_key_arn": "arn:aws:kms:us-east-1:123456789012:alias/hf"}, "HF_TOKEN.kms_key_arn"),
        ({"arn": ARN, "kms_key_arn": KEY.replace("us-east-1", "us-west-2")}, "HF_TOKEN.kms_key_arn"),
    ],
)
def test_unusable_references_are_errors(run_rule, hits, single_model, secret, path):
    found = run_rule("FS064", _secrets(single_model, HF_TOKEN=secret))
    assert hits(found) == [("FS064", "error", f"endpoints[0].model.secrets.{path}")]


@pytest.mark.parametrize("env_name", ["HF_TOKEN", "HF_TOKEN_SECRET_ARN"])
def test_clash_with_environment_is_an_error(run_rule, hits, single_model, env_name):
    single_model["endpoints"][0]["model"]["environment"] = {env_name: ""}
    found = run_rule("FS064", _secrets(single_model, HF_TOKEN=ARN))
    assert hits(found) == [("FS064", "error", "endpoints[0].model.secrets.HF_TOKEN")]
