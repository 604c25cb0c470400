from __future__ import annotations

import boto3
import pytest
from moto import mock_aws

from tests.aws.factories import REGION, FakeClock

SERVICES = ("sagemaker", "application-autoscaling", "cloudwatch", "iam", "resourcegroupstaggingapi", "ecr", "s3", "logs")


@pytest.fixture(scope="module")
def _moto():
    # One mock and one set of clients per module (building a SageMaker client costs ~0.2 s); every test
    # starts from empty backends all the same.
    with mock_aws() as mock:
        session = boto3.session.Session(region_name=REGION)
        yield mock, {s: session.client(s) for s in SERVICES}


@pytest.fixture
def aws(_moto):
    """moto-backed clients, keyed by boto3 service name (the shape `clients=` accepts)."""
    mock, clients = _moto
    mock.reset()
    return clients


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def aas_tags():
    """moto answers as fastscale's emulator does, which adds what moto lacks and AWS has: Application Auto Scaling's
    tag calls (`ListTagsForResource` on a scalable target, which `adopt` reads), among the rest of its answers."""
    from fastscale.infra.project.emulator import extended

    with extended():
        yield
