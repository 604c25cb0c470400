import pytest


def _env(data, **env):
    data["endpoints"][0]["model"]["environment"] = env
    return data


def test_ordinary_settings_pass(run_rule, single_model):
    _env(
        single_model,
        OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS="4096",
        MAX_TOKENS="512",
        TOKENIZER="Qwen/Qwen3-8B",
        HF_TOKEN_PATH="/opt/ml/token",
        OPTION_ROLLING_BATCH="vllm",
        AUTH_TYPE="iam",
        PASSWORD_FILE="/run/secrets/db",
        DB_SECRET_ARN="arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf",
        MAX_NEW_TOKENS="1024",
        S3_KEY="models/qwen/config.json",
        CACHE_KEY="v2",
        AUTH_ENABLED="true",
        MAX_TOKEN="4096",  # a number is a setting, not a credential
    )
    assert run_rule("FS018", single_model) == []


@pytest.mark.parametrize(
    "value",
    [
        "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf",
        "arn:aws:ssm:us-east-1:123456789012:parameter/hf-token",
        "arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:hf",
        "{{resolve:secretsmanager:hf-token}}",
        "",
    ],
)
def test_references_and_empty_values_pass(run_rule, single_model, value):
    assert run_rule("FS018", _env(single_model, HF_TOKEN=value)) == []


@pytest.mark.parametrize(
    "key",
    ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
     "db_password", "CLIENT_SECRET", "MY_APIKEY", "DB_PASS", "OPENAI_KEY", "HF_AUTH", "PASSWORD1",
     "AUTH_TOKEN_VALUE", "hfToken", "SLACK_BEARER", "GITHUB_PAT_TOKEN2"],
)
def test_literal_secrets_are_errors(run_rule, hits, single_model, key):
    found = run_rule("FS018", _env(single_model, **{key: "s3cr3t-value-123"}))
    path = f"endpoints[0].model.environment.{key}" if "-" not in key else f'endpoints[0].model.environment["{key}"]'
    assert hits(found) == [("FS018", "error", path)]
    assert "s3cr3t-value-123" not in found[0].message + found[0].hint  # never echo the secret
    if key.upper() in {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}:
        return  # a Hub token's hint is the S3 staging path: test_hub_token_hint_is_the_s3_staging_path
    assert "arn:aws:secretsmanager:us-east-1:" in found[0].hint and "secrets:" in found[0].hint


@pytest.mark.parametrize("key", ["HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HUGGINGFACEHUB_API_TOKEN"])
def test_hub_token_hint_is_the_s3_staging_path(run_rule, hits, components, key):
    # Stock LMI/TGI/vLLM images read the token from their environment, never from a secret ARN: the
    # hint that works for them stages the weights in S3 once, so no token reaches AWS.
    components["endpoints"][0]["inference_components"][0]["environment"] = {key: "hf_not_a_real_token_at_all"}
    found = run_rule("FS018", components)
    assert hits(found) == [("FS018", "error", f"endpoints[0].inference_components[0].environment.{key}")]
    hint = found[0].hint
    assert "huggingface-cli download" in hint and "aws s3 sync" in hint and "model_data: s3://" in hint
    assert f"remove {key}" in hint and "us-east-1" in hint and "Gated models on stock containers" in hint
    assert "secrets:" not in hint


def test_components_are_checked(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][1]["environment"] = {"HF_TOKEN": "hf_abc"}
    assert hits(run_rule("FS018", components)) == [
        ("FS018", "error", "endpoints[0].inference_components[1].environment.HF_TOKEN")
    ]


def test_fallback_overrides_are_checked(run_rule, hits, single_model, components):
    single_model["endpoints"][0]["capacity"] = {
        "fallback": [{"instance_type": "ml.g5.2xlarge", "model": {"environment": {"HF_TOKEN": "hf_abc"}}}]
    }
    assert hits(run_rule("FS018", single_model)) == [
        ("FS018", "error", "endpoints[0].capacity.fallback[0].model.environment.HF_TOKEN")
    ]
    name = components["endpoints"][0]["inference_components"][0]["name"]
    components["endpoints"][0]["capacity"] = {
        "fallback": [{"instance_type": "ml.g5.12xlarge", "components": {name: {"environment": {"DB_PASS": "x1y2"}}}}]
    }
    assert hits(run_rule("FS018", components)) == [
        ("FS018", "error", f"endpoints[0].capacity.fallback[0].components.{name}.environment.DB_PASS")
    ]


def test_the_hub_token_hint_names_a_section_that_exists():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "secrets.md").read_text()
    assert "\n## Gated models on stock containers\n" in text
    section = text.split("## Gated models on stock containers", 1)[1].split("\n## ", 1)[0]
    assert "huggingface-cli download" in section and "aws s3 sync" in section and "model_data: s3://" in section
