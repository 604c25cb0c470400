from __future__ import annotations

import pytest


@pytest.mark.parametrize(("region", "arn"), [
    ("us-east-1", "arn:aws:iam::123456789012:role/fastscale-exec"),
    ("us-east-1", "arn:aws:iam::123456789012:role/service-role/AmazonSageMaker-ExecutionRole-20240101T000000"),
    ("cn-north-1", "arn:aws-cn:iam::123456789012:role/exec"),
    ("us-gov-west-1", "arn:aws-us-gov:iam::123456789012:role/exec"),
])
def test_concrete_roles_pass(run_rule, single_model, region, arn):
    single_model["region"] = region
    single_model["endpoints"][0]["execution_role_arn"] = arn
    assert run_rule("FS078", single_model) == []


@pytest.mark.parametrize(
    ("arn", "why"),
    [
        ("arn:aws:iam::*:role/*", "wildcard"),
        ("arn:aws:iam::123456789012:role/sagemaker-?", "wildcard"),
        ("arn:aws:iam::123456789012:user/alice", "not an IAM role ARN"),
        ("arn:aws:iam::12345:role/exec", "not an IAM role ARN"),
        ("exec-role", "not an IAM role ARN"),
        ("arn:aws:iam::123456789012:role/" + "r" * 65, "not an IAM role ARN"),
        ("arn:aws-cn:iam::123456789012:role/exec", "partition aws-cn"),
    ],
)
def test_anything_else_is_an_error(run_rule, hits, single_model, arn, why):
    single_model["endpoints"][0]["execution_role_arn"] = arn
    found = run_rule("FS078", single_model)
    assert hits(found) == [("FS078", "error", "endpoints[0].execution_role_arn")]
    assert why in found[0].message
    assert "arn:aws:iam::<account>:role/<name>" in found[0].hint
