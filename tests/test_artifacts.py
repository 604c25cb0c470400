"""Image and S3 URI parsing shared by rules, stacks and preflight."""

from __future__ import annotations

import pytest

from fastscale.infra.base.artifacts import parse_image, parse_s3_uri


@pytest.mark.parametrize(
    "uri,registry,repository,tag,ecr_region,pinned",
    [
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com/lmi:0.33.0", "123456789012.dkr.ecr.us-east-1.amazonaws.com",
         "lmi", "0.33.0", "us-east-1", True),
        ("123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/lmi", "123456789012.dkr.ecr.eu-west-1.amazonaws.com",
         "team/lmi", None, "eu-west-1", False),
        ("123456789012.dkr.ecr.us-east-1.amazonaws.com/lmi:latest", "123456789012.dkr.ecr.us-east-1.amazonaws.com",
         "lmi", "latest", "us-east-1", False),
        ("localhost:5000/lmi:1", "localhost:5000", "lmi", "1", None, True),
        ("vllm/vllm-openai:v0.9", None, "vllm/vllm-openai", "v0.9", None, True),
        ("public.ecr.aws/lmi/img:1", "public.ecr.aws", "lmi/img", "1", None, True),
    ],
)
def test_parse_image(uri, registry, repository, tag, ecr_region, pinned):
    image = parse_image(uri)
    assert (image.registry, image.repository, image.tag, image.ecr_region, image.pinned) == (
        registry, repository, tag, ecr_region, pinned)
    assert image.is_ecr == (ecr_region is not None)


def test_digest_pins_and_wins_over_tag():
    digest = "sha256:" + "a" * 64
    image = parse_image(f"123456789012.dkr.ecr.us-east-1.amazonaws.com/lmi:1@{digest}")
    assert image.pinned and image.digest == digest
    assert image.image_id == {"imageDigest": digest}
    assert parse_image("123456789012.dkr.ecr.us-east-1.amazonaws.com/lmi").image_id == {"imageTag": "latest"}


def test_parse_s3_uri():
    prefix = parse_s3_uri("s3://models/qwen3-8b/")
    assert (prefix.bucket, prefix.key, prefix.is_prefix) == ("models", "qwen3-8b/", True)
    obj = parse_s3_uri("s3://models/qwen3.tar.gz")
    assert (obj.key, obj.is_prefix) == ("qwen3.tar.gz", False)
    assert parse_s3_uri("s3://") is None
    assert parse_s3_uri("https://models.s3.amazonaws.com/x") is None
