from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from tests.aws.factories import REGION, FakeClock

SERVICES = ("sagemaker", "application-autoscaling", "cloudwatch", "iam", "resourcegroupstaggingapi", "ecr", "s3")


@pytest.fixture
def aws():
    """moto-backed clients, keyed by boto3 service name (the shape `clients=` accepts)."""
    with mock_aws():
        yield {s: boto3.client(s, region_name=REGION) for s in SERVICES}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
