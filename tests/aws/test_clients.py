from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError, NoCredentialsError

from fastscale.infra.aws import clients as c


def _err(code: str, message: str = "") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, "Op")


def test_clients_use_bounded_adaptive_retries_and_timeouts():
    sm = c.client("sagemaker", "eu-west-1")
    assert sm.meta.region_name == "eu-west-1"
    assert sm.meta.config.retries == {"mode": "adaptive", "total_max_attempts": 5}
    assert c.MAX_BACKOFF_SECONDS == 15
    assert (sm.meta.config.connect_timeout, sm.meta.config.read_timeout) == (5, 60)
    assert c.client("autoscaling", "us-east-1").meta.service_model.service_name == "application-autoscaling"


def test_overrides_win_and_other_services_are_built_once():
    fake_sm = boto3.client("sagemaker", region_name="us-east-1")
    aws = c.resolve({"sagemaker": fake_sm}, "us-west-2")
    assert aws.sagemaker is fake_sm
    assert aws.cloudwatch is aws.cloudwatch
    assert aws.cloudwatch.meta.region_name == "us-west-2"
    assert aws.get("ecr", "eu-west-1").meta.region_name == "eu-west-1"
    assert c.resolve(aws, "us-east-1") is aws


@pytest.mark.parametrize(
    "code,message,expected",
    [
        ("ValidationException", "Could not find endpoint \"arn:...:endpoint/x\".", True),
        ("ValidationException", "Could not find inference component x", True),
        ("ValidationException", "Cannot delete endpoint with inference component associated", False),
        ("NoSuchEntity", "Role x not found", True),
        ("ObjectNotFoundException", "", True),
        ("ValidationException", "No scalable target found for service namespace: sagemaker", True),
        ("ThrottlingException", "Rate exceeded", False),
    ],
)
def test_not_found_classification(code, message, expected):
    assert c.is_not_found(_err(code, message)) is expected


def test_translate_errors_turns_every_botocore_failure_into_aws_error():
    @c.translate_errors
    def no_creds():
        raise NoCredentialsError()

    @c.translate_errors
    def denied():
        raise ClientError({"Error": {"Code": "AccessDeniedException", "Message": "not allowed"}}, "DescribeEndpoint")

    @c.translate_errors
    def other():
        raise _err("ValidationException", "bad")

    with pytest.raises(c.AwsError, match="credentials"):
        no_creds()
    with pytest.raises(c.AwsError, match="DescribeEndpoint.*not allowed"):
        denied()
    with pytest.raises(c.AwsError, match=r"^AWS rejected Op: ValidationException: bad$") as rejected:
        other()
    assert (rejected.value.code, rejected.value.operation) == ("ValidationException", "Op")
