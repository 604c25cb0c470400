import pytest


@pytest.mark.parametrize(
    "image",
    [
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128",
        "123456789012.dkr.ecr-fips.us-east-1.amazonaws.com/llm:1.0",
        "123456789012.dkr-ecr.us-east-1.on.aws/llm:1.0",
    ],
)
def test_ecr_images_pass(run_rule, single_model, image):
    single_model["endpoints"][0]["model"]["image"] = image
    assert run_rule("FS003", single_model) == []


@pytest.mark.parametrize(
    "image",
    [
        "vllm/vllm-openai:v0.9.2",  # Docker Hub, implicit registry
        "docker.io/vllm/vllm-openai:v0.9.2",
        "public.ecr.aws/deep-learning-containers/vllm:0.9",  # ECR Public is not a private registry
        "ghcr.io/huggingface/text-generation-inference:3.0",
        "12345.dkr.ecr.us-east-1.amazonaws.com/llm:1.0",  # not a 12-digit account
    ],
)
def test_non_ecr_images_warn(run_rule, hits, components, image):
    components["endpoints"][0]["inference_components"][1]["image"] = image
    found = run_rule("FS003", components)
    assert hits(found) == [("FS003", "warning", "endpoints[0].inference_components[1].image")]
    assert ".dkr.ecr.us-east-1.amazonaws.com/" in found[0].hint
