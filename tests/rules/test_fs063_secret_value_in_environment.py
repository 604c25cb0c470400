import pytest

#: Made-up values in the shapes of real credentials (none of them was ever issued).
TOKENS = {
    "hugging face": "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3f",
    "openai": "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv",
    "aws access key id": "AKIA" + "Q3EXAMPLE7XYZ12A",
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "aws secret access key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
}


def _env(data, **env):
    data["endpoints"][0]["model"]["environment"] = env
    return data


def test_ordinary_values_pass(run_rule, single_model):
    _env(
        single_model,
        HF_MODEL_ID="meta-llama/Meta-Llama-3.1-8B-Instruct",
        OPTION_MODEL_ID="s3://demo-models/qwen3-8b/",
        IMAGE_DIGEST="sha256:" + "0123456789abcdef" * 4,
        RUN_ID="123e4567-e89b-12d3-a456-426614174000",
        OPTION_ROLLING_BATCH="vllm",
        SKETCH="sk-short",
        DESCRIPTION="A helpful assistant that answers questions about the product catalog",
        SECRET_REF="arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf",
    )
    assert run_rule("FS063", single_model) == []


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_token_shaped_values_are_errors_whatever_the_name(run_rule, hits, single_model, kind):
    found = run_rule("FS063", _env(single_model, MODEL_SETTING=TOKENS[kind]))
    assert hits(found) == [("FS063", "error", "endpoints[0].model.environment.MODEL_SETTING")]
    assert TOKENS[kind] not in found[0].message + found[0].hint
    assert TOKENS[kind][:8] not in found[0].message  # not even a prefix of the secret


def test_a_secret_name_is_left_to_fs018(run_rule, single_model):
    assert run_rule("FS063", _env(single_model, HF_TOKEN=TOKENS["hugging face"])) == []


def test_fallback_override_values_are_checked(run_rule, hits, single_model):
    single_model["endpoints"][0]["capacity"] = {
        "fallback": [{"instance_type": "ml.g5.2xlarge", "model": {"environment": {"HUB": TOKENS["github"]}}}]
    }
    assert hits(run_rule("FS063", single_model)) == [
        ("FS063", "error", "endpoints[0].capacity.fallback[0].model.environment.HUB")
    ]


def test_tags_and_other_fields_are_scanned(run_rule, hits, single_model):
    single_model["tags"] = {"team": "ml-platform", "deploy": TOKENS["github"]}
    single_model["endpoints"][0]["model"]["model_data"] = "s3://demo-models/" + TOKENS["aws secret access key"] + "/"
    assert sorted(hits(run_rule("FS063", single_model))) == [
        ("FS063", "error", "endpoints[0].model.model_data"), ("FS063", "error", "tags.deploy")]


@pytest.mark.parametrize(("value", "secret"), [
    ("postgres://admin:S3cr3tPassw0rd@db:5432/app", "S3cr3tPassw0rd"),
    ("Server=db;User Id=app;Password=Tr0ub4dor3;", "Tr0ub4dor3"),
    ("AccountName=a;AccountKey=Q0FGRUJBQkVGQUtF+/Zz9==;", "Q0FGRUJBQkVGQUtF"),
    ("Endpoint=sb://ns/;SharedAccessKeyName=Root;SharedAccessKey=AbCdEf123+/=", "AbCdEf123"),
])
def test_connection_strings_with_credentials_are_errors(run_rule, hits, single_model, value, secret):
    found = run_rule("FS063", _env(single_model, STORE=value))
    assert hits(found) == [("FS063", "error", "endpoints[0].model.environment.STORE")]
    assert secret not in found[0].message + found[0].hint
