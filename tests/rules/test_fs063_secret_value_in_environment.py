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


#: Identifiers AWS, CloudFormation, the SageMaker Python SDK (2.x and 3.x) and JumpStart generate, in the
#: shapes they really have: none is a secret, whatever its length or mix of cases.
GENERATED_IDENTIFIERS = {
    "sdk role with timestamp": "arn:aws:iam::123456789012:role/SageMakerExecutionRole-sdk-tags2-2026-11-30-09-41-07-512",
    "console role": "arn:aws:iam::123456789012:role/service-role/AmazonSageMaker-ExecutionRole-20241130T094107",
    "sdk role name": "SageMakerExecutionRole-sdk-tags2-2026-11-30-09-41-07-512",
    "cloudformation role": "arn:aws:iam::123456789012:role/ChatStack-SageMakerExecutionRole8F2D7A91-1XK8Q7Z9M3N4P",
    "cdk role with hashed suffix": "arn:aws:iam::123456789012:role/FastscaleStack-ChatExecutionRoleB8C3d9F2-Xy7Qm2Lp9Rt4",
    "sdk endpoint name": "huggingface-pytorch-tgi-inference-2026-11-30-09-41-07-512",
    "sdk model name": "sagemaker-jumpstart-2026-11-30-09-41-07-512",
    "jumpstart model id": "meta-textgeneration-llama-3-1-8b-instruct",
    "jumpstart component": "meta-textgeneration-llama-3-1-8b-instruct-20261130-094107-512",
    "component arn": "arn:aws:sagemaker:us-east-1:123456789012:inference-component/"
                     "huggingface-llm-mistral-7b-instruct-v3-2026-11-30-09-41-07-512",
    "ecr image by digest": "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference@sha256:"
                           + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "ecr image by tag": "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:"
                        "2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04",
    "sdk s3 uri": "s3://sagemaker-us-east-1-123456789012/huggingface-pytorch-tgi-inference-2026-11-30-09-41-07-512/"
                  "model.tar.gz",
    "jumpstart s3 uri": "s3://jumpstart-cache-prod-us-east-1/meta-textgeneration/"
                        "meta-textgeneration-llama-3-1-8b-instruct/artifacts/inference-prepack/v2.0.0/",
    "kms key arn": "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
    "kms key id": "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d",
    "scaling policy arn": "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:5ad8d2e6-3c3f-4ff6-8bfa-"
                          "d2b6a2f7b2a1:resource/sagemaker/endpoint/chat/variant/AllTraffic:policyName/"
                          "SageMakerEndpointInvocationScalingPolicy",
    "target tracking alarm": "TargetTracking-endpoint/chat/variant/AllTraffic-AlarmHigh-0b5b6a2f-8c1d-4c2e-9f5a-1d2e3f4a5b6c",
    "model package arn": "arn:aws:sagemaker:us-east-1:865070037744:model-package/"
                         "llama2-7b-f-v4-55c7c39a0cf535e8bad0d342598c219c",
    "instance type": "ml.g6e.12xlarge",
}


@pytest.mark.parametrize("kind", sorted(GENERATED_IDENTIFIERS))
def test_identifiers_aws_and_the_sdk_generate_are_not_secrets(run_rule, single_model, kind):
    assert run_rule("FS063", _env(single_model, SOME_SETTING=GENERATED_IDENTIFIERS[kind])) == []


def test_generated_identifiers_pass_where_they_stand_in_a_config(run_rule, single_model):
    ids = GENERATED_IDENTIFIERS
    ep = single_model["endpoints"][0]
    ep.update(execution_role_arn=ids["sdk role with timestamp"], kms_key_arn=ids["kms key arn"],
              adopted={"endpoint": ids["sdk endpoint name"], "model": ids["sdk model name"],
                       "endpoint_config": ids["sdk endpoint name"]})
    ep["model"].update(image=ids["ecr image by digest"], model_data=ids["sdk s3 uri"])
    single_model["tags"] = {"sagemaker-sdk-role": ids["cloudformation role"], "created-by": ids["jumpstart model id"]}
    assert run_rule("FS063", single_model) == []


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_a_secret_is_still_found_beside_generated_identifiers(run_rule, hits, single_model, kind):
    value = f"{GENERATED_IDENTIFIERS['sdk endpoint name']} {TOKENS[kind]}"
    assert hits(run_rule("FS063", _env(single_model, MODEL_SETTING=value))) == [
        ("FS063", "error", "endpoints[0].model.environment.MODEL_SETTING")]


def test_a_token_inside_an_arn_is_still_found(run_rule, hits, single_model):
    value = "arn:aws:iam::123456789012:role/" + TOKENS["github"]
    assert hits(run_rule("FS063", _env(single_model, MODEL_SETTING=value))) == [
        ("FS063", "error", "endpoints[0].model.environment.MODEL_SETTING")]
