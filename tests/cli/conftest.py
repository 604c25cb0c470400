"""Fixtures shared by the CLI tests: moto clients wired into the commands, a project directory, a fake synth."""

from __future__ import annotations

import boto3
import pytest
import yaml
from moto import mock_aws

from tests.aws.factories import REGION, single_model_config
from tests.aws.quota_stubs import quota, quotas_client
from tests.cli.support import FixtureSynth, TestRuntime, active

#: More ml.g6.2xlarge endpoint instances than any test config asks for.
GENEROUS = quota("ml.g6.2xlarge", 20)

SERVICES = ("sagemaker", "application-autoscaling", "cloudwatch", "iam", "resourcegroupstaggingapi", "logs", "s3")


@pytest.fixture(scope="module")
def _moto():
    # One mock and one set of clients per module: building a SageMaker client costs ~0.2 s.
    with mock_aws() as mock:
        session = boto3.session.Session(region_name=REGION)
        yield mock, {s: session.client(s) for s in SERVICES}


@pytest.fixture(autouse=True)
def runtime():
    """The runtime every command of the test gets (``runtime.use(synthesize=...)`` swaps a part): the real one
    until a fixture or the test swaps in its stand-ins."""
    with active(TestRuntime()) as rt:
        yield rt


@pytest.fixture
def aws(_moto, runtime):
    """Empty moto backends; every command's AWS calls go to these clients."""
    mock, clients = _moto
    mock.reset()
    calls: list[str] = []

    def clients_for(stack):
        calls.append(stack.project)
        return clients

    runtime.use(aws_clients=clients_for)
    clients["calls"] = calls  # type: ignore[assignment]  # how many commands asked for AWS
    return clients


@pytest.fixture(autouse=True)
def quotas(runtime):
    """Service Quotas (not in moto) for every command that checks them: a fresh stubbed answer per command,
    ample for the test configs. A test replaces ``quotas.pages`` to answer otherwise."""

    class Answer:
        pages = [[GENEROUS]]
        defaults = None
        asked = 0

    def clients_for(stack):
        Answer.asked += 1
        return {"service-quotas": quotas_client(*Answer.pages, defaults=Answer.defaults)[0]}

    runtime.use(quota_clients=clients_for)
    return Answer


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project directory (the working directory) holding fastscale.yaml, and a private Terraform setup."""
    monkeypatch.chdir(tmp_path)
    rc = tmp_path / "terraformrc"
    rc.write_text("")
    monkeypatch.setenv("TF_CLI_CONFIG_FILE", str(rc))
    monkeypatch.delenv("TF_DATA_DIR", raising=False)
    monkeypatch.delenv("FASTSCALE_TERRAFORM", raising=False)
    config = single_model_config().model_dump(mode="json", exclude_defaults=True)
    (tmp_path / "fastscale.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    return tmp_path


@pytest.fixture
def synth(runtime):
    fake = FixtureSynth("basic")
    runtime.use(synthesize=fake)
    return fake
