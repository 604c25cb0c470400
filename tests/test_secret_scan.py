"""Secrets by value, everywhere in the config: what is caught, what must stay clean (the false-positive
corpus), and that no message ever repeats a secret, whichever rule wrote it."""

from __future__ import annotations

import base64
import json

import pytest

from fastscale.infra.config import parse_config, secrets
from fastscale.infra.project.scaffold import ProjectOptions, config_errors, model_choices, render_config
from fastscale.infra.rules import Finding, Severity, masked, run_rules
from tests.rules.conftest import components_config, single_model_config

#: Realistic values that are not secrets: each must stay clean wherever it is written.
NOT_SECRETS = [
    "meta-llama/Llama-3.1-8B-Instruct",
    "meta-llama/Meta-Llama-3.1-70B-Instruct",
    "Qwen/Qwen3-8B",
    "mistralai/Mistral-7B-Instruct-v0.3",
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B",
    "TheBloke/Llama-2-13B-chat-GPTQ",
    "s3://demo-models/qwen3-8b/",
    "s3://ml-artifacts-prod-123456789012/models/Qwen3-8B-AWQ/model.tar.gz",
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128",
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm@sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-token-AbCdEf",
    "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
    "arn:aws:sns:us-east-1:123456789012:ml-alerts",
    "arn:aws:iam::123456789012:role/service-role/AmazonSageMaker-ExecutionRole-20240101T000000",
    "123e4567-e89b-12d3-a456-426614174000",
    "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    json.dumps({"max_model_len": 8192, "tensor_parallel_size": 1, "dtype": "bfloat16",
                "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}),
    base64.b64encode(json.dumps({"max_model_len": 8192, "enable_prefix_caching": True,
                                 "served_model_name": "Qwen3-8B-Instruct-AWQ"}).encode()).decode(),
    base64.urlsafe_b64encode(b'{"chat_template":"{% for m in messages %}{{ m.content }}{% endfor %}"}').decode(),
    base64.b64encode(b"You are a helpful assistant. Answer briefly and cite the product catalog.").decode(),
    "--max-model-len 8192 --gpu-memory-utilization 0.9 --enable-prefix-caching",
    "postgres://reader@db.internal:5432/app",
    "postgres://app:${DB_PASSWORD}@db.internal:5432/app",
    "Server=db;Database=app;User Id=app;Password=<set at runtime>;",
    "https://huggingface.co/Qwen/Qwen3-8B/resolve/main/config.json",
    "https://api.example.com/v1/chat/completions",
    "{{resolve:secretsmanager:hf-token:SecretString:token}}",
    "ml-platform",
    "genai-cost-center-4711",
    "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
    "lmi-dist",
    "/opt/ml/model/Qwen3-8B",
    "~> 6.25",
]

#: Made-up credentials (none of them was ever issued), each with the kind the message must name.
SECRETS = {
    "postgres://admin:S3cr3tPassw0rd@db:5432/app": "a password in a URL",
    "mongodb+srv://svc:pa55w0rd-Zx9@cluster0.example.net/prod": "a password in a URL",
    "Server=tcp:db.example.net,1433;Database=app;User ID=app;Password=Tr0ub4dor&3x;": "a password in a connection string",
    "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Q0FGRUJBQkVGQUtFS0VZMDAx+/Zz9==;EndpointSuffix=core.windows.net":
        "an Azure storage account key",
    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=AbCdEfGh1234567890/+=":
        "an Azure shared access key",
    "hf_" + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dE3f": "a Hugging Face access token",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY": "a long random string",
    base64.b64encode(json.dumps({"auths": {"hub": {"token": "hf_" + "Zz9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9e"}}}).encode()).decode():
        "base64 of a Hugging Face access token",
}


@pytest.mark.parametrize("value", NOT_SECRETS)
def test_realistic_values_are_not_secrets(value):
    assert secrets.secret_kind(value) is None


@pytest.mark.parametrize(("value", "kind"), SECRETS.items())
def test_credentials_are_found_by_kind(value, kind):
    found = secrets.secret_kind(value)
    assert found is not None and found.startswith(kind)
    masked_text = secrets.redact(f"value: {value}")
    assert masked_text.startswith("value: ") and secrets.MASK in masked_text
    assert secrets.secret_kind(masked_text) is None


def test_the_corpus_in_every_place_of_a_config_stays_clean():
    data = single_model_config()
    data["tags"] = {f"t{i}": v[:256] for i, v in enumerate(NOT_SECRETS) if len(v) <= 256}
    data["endpoints"][0]["model"]["environment"] = {f"SETTING_{i}": v for i, v in enumerate(NOT_SECRETS)}
    data["endpoints"][0]["model"]["model_data"] = "s3://ml-artifacts-prod-123456789012/models/Qwen3-8B-AWQ/"
    data["endpoints"][0]["alarms"] = {"sns_topic_arn": "arn:aws:sns:us-east-1:123456789012:ml-alerts"}
    found = [f for f in run_rules(parse_config(data)) if f.code in ("FS018", "FS063")]
    assert found == []


@pytest.mark.parametrize(
    ("place", "path"),
    [
        (lambda d, v: d.__setitem__("tags", {"owner": v}), "tags.owner"),
        (lambda d, v: d.__setitem__("tags", {v: "x"}), "tags"),  # a key: quoted path under tags
        (lambda d, v: d["endpoints"][0]["model"].__setitem__("environment", {"DATABASE_URL": v}),
         "endpoints[0].model.environment.DATABASE_URL"),
        (lambda d, v: d.__setitem__("state", {"backend": "s3", "bucket": "demo-tfstate", "key": v}), "state.key"),
        (lambda d, v: d["endpoints"][0].__setitem__("instance_type", v), "endpoints[0].instance_type"),
    ],
)
def test_secrets_are_found_outside_the_environment_and_never_echoed(place, path):
    value = "postgres://admin:S3cr3tPassw0rd@db:5432/app"
    data = single_model_config()
    place(data, value)
    findings = run_rules(parse_config(data))
    fs063 = [f for f in findings if f.code == "FS063"]
    assert len(fs063) == 1 and fs063[0].path.startswith(path) and fs063[0].severity is Severity.ERROR
    assert "a password in a URL" in fs063[0].message
    for f in findings:  # FS001 quotes the instance type, FS063 names the field: none repeats the password
        assert "S3cr3tPassw0rd" not in f.message + f.hint


def test_a_tag_secret_gets_the_tag_hint():
    data = single_model_config()
    data["tags"] = {"deploy-key": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}
    (finding,) = [f for f in run_rules(parse_config(data)) if f.code == "FS063"]
    assert finding.path == 'tags["deploy-key"]'
    assert "a GitHub token" in finding.message and "a tag never holds a credential" in finding.hint


def test_values_secret_by_their_name_are_masked_in_any_message():
    data = components_config()
    data["endpoints"][0]["inference_components"][0]["environment"] = {"DB_PASSWORD": "correct-horse-battery"}
    config = parse_config(data)
    echo = Finding("FS999", Severity.ERROR, "x", "saw correct-horse-battery here", "and hunter2-correct-horse-battery")
    (out,) = masked([echo], config)
    assert "correct-horse-battery" not in out.message + out.hint
    assert out.message == f"saw {secrets.MASK} here"


@pytest.mark.parametrize("model", model_choices())
@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "cn-north-1", "us-gov-west-1"])
def test_init_presets_raise_nothing_new(model, region):
    import yaml

    opts = ProjectOptions(project="demo-llm", model=model, region=region)
    config = parse_config(yaml.safe_load(render_config(opts)))
    new_codes = {"FS063", "FS075", "FS076", "FS077", "FS078", "FS079", "FS080", "FS081"}
    assert [f.to_dict() for f in run_rules(config) if f.code in new_codes] == []


def test_schema_errors_never_repeat_a_password():
    from fastscale.infra.config import ConfigError

    data = single_model_config()
    data["endpoint_url"] = "http://admin:S3cr3tPassw0rd@localhost:4566"
    with pytest.raises(ConfigError) as err:
        parse_config(data)
    assert "S3cr3tPassw0rd" not in str(err.value) and secrets.MASK in str(err.value)


def test_init_refuses_a_misspelt_region():
    errors = config_errors(ProjectOptions(project="demo-llm", region="us-eats-1"))
    assert [(f.code, f.path) for f in errors] == [("FS075", "region")]
    assert errors[0].hint.startswith("did you mean us-east-1")
