from __future__ import annotations

import pytest


@pytest.mark.parametrize(("region", "arn"), [
    ("us-east-1", "arn:aws:sns:us-east-1:123456789012:alerts"),
    ("us-east-1", "arn:aws:sns:eu-west-1:123456789012:ops_alerts-2"),
    ("cn-north-1", "arn:aws-cn:sns:cn-north-1:123456789012:alerts"),
    ("us-gov-west-1", "arn:aws-us-gov:sns:us-gov-east-1:123456789012:alerts"),
])
def test_topics_in_the_partition_pass(run_rule, single_model, region, arn):
    single_model["region"] = region
    single_model["endpoints"][0]["alarms"] = {"sns_topic_arn": arn}
    assert run_rule("FS080", single_model) == []


@pytest.mark.parametrize(
    ("region", "arn", "why"),
    [
        ("us-east-1", "arn:aws:sqs:us-east-1:123456789012:alerts", "not an SNS topic ARN"),
        ("us-east-1", "arn:aws:sns:us-east-1:*:alerts", "not an SNS topic ARN"),
        ("us-east-1", "ops@example.com", "not an SNS topic ARN"),
        ("us-east-1", "arn:aws:sns:us-east-1:123456789012:alerts:sub-id", "not an SNS topic ARN"),
        ("us-east-1", "arn:aws-us-gov:sns:us-gov-west-1:123456789012:alerts", "partition aws-us-gov"),
        ("cn-north-1", "arn:aws:sns:us-east-1:123456789012:alerts", "region cn-north-1 is in aws-cn"),
        ("us-east-1", "arn:aws:sns:us-eats-1:123456789012:alerts", "did you mean us-east-1"),
    ],
)
def test_anything_else_is_an_error(run_rule, hits, single_model, region, arn, why):
    single_model["region"] = region
    single_model["endpoints"][0]["alarms"] = {"sns_topic_arn": arn}
    found = run_rule("FS080", single_model)
    assert hits(found) == [("FS080", "error", "endpoints[0].alarms.sns_topic_arn")]
    assert why in found[0].message
