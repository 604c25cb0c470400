"""fastscale's emulator: moto's server plus Application Auto Scaling tags, UpdateEndpoint and a clear Service
Quotas answer, each asked through boto3 over HTTP as the provider and fastscale ask it."""

from __future__ import annotations

import socket

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from fastscale.infra.aws.preflight import check_quotas
from fastscale.infra.model.resolved import resolve
from fastscale.infra.project import emulator as emu
from fastscale.infra.project.emulator import Emulator, environment
from fastscale.infra.rules import Severity
from tests.aws.factories import single_model_config

REGION = "us-east-1"
VARIANT = {"ServiceNamespace": "sagemaker", "ResourceId": "endpoint/emu-chat/variant/primary",
           "ScalableDimension": "sagemaker:variant:DesiredInstanceCount"}


@pytest.fixture
def server():
    with Emulator(port=0) as running:
        yield running


def client(server, service):
    return boto3.client(service, region_name=REGION, endpoint_url=server.url, aws_access_key_id="testing",
                        aws_secret_access_key="testing")


def test_a_scalable_target_keeps_the_tags_it_was_registered_with_and_can_be_retagged(server):
    aas = client(server, "application-autoscaling")
    arn = aas.register_scalable_target(**VARIANT, MinCapacity=1, MaxCapacity=2,
                                       Tags={"fastscale:stack": "emu"})["ScalableTargetARN"]
    try:
        assert aas.list_tags_for_resource(ResourceARN=arn)["Tags"] == {"fastscale:stack": "emu"}
        # Registering again updates the target; as AWS documents, Tags only apply at creation.
        aas.register_scalable_target(**VARIANT, MinCapacity=1, MaxCapacity=3, Tags={"other": "x"})
        assert aas.list_tags_for_resource(ResourceARN=arn)["Tags"] == {"fastscale:stack": "emu"}
        aas.tag_resource(ResourceARN=arn, Tags={"team": "ml"})
        aas.untag_resource(ResourceARN=arn, TagKeys=["fastscale:stack"])
        assert aas.list_tags_for_resource(ResourceARN=arn)["Tags"] == {"team": "ml"}
    finally:
        aas.deregister_scalable_target(**VARIANT)
    with pytest.raises(ClientError) as gone:
        aas.list_tags_for_resource(ResourceARN=arn)
    assert gone.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_update_endpoint_moves_the_endpoint_to_the_new_configuration(server):
    sm = client(server, "sagemaker")
    sm.create_model(ModelName="m", ExecutionRoleArn="arn:aws:iam::123456789012:role/r",
                    PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"})
    for name, count in (("c1", 1), ("c2", 2)):
        sm.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[{
            "VariantName": "primary", "ModelName": "m", "InstanceType": "ml.g4dn.xlarge",
            "InitialInstanceCount": count}])
    sm.create_endpoint(EndpointName="upd", EndpointConfigName="c1")
    sm.update_endpoint(EndpointName="upd", EndpointConfigName="c2")
    live = sm.describe_endpoint(EndpointName="upd")
    assert live["EndpointConfigName"] == "c2"
    assert live["ProductionVariants"][0]["DesiredInstanceCount"] == 2
    with pytest.raises(ClientError, match="Could not find endpoint"):
        sm.update_endpoint(EndpointName="nope", EndpointConfigName="c2")


def test_service_quotas_says_the_emulator_has_none_and_the_preflight_repeats_it(server):
    with pytest.raises(ClientError) as answer:
        client(server, "service-quotas").list_service_quotas(ServiceCode="sagemaker")
    assert answer.value.response["Error"]["Code"] == "UnknownOperationException"
    assert answer.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400  # not retried as a 5xx
    config = single_model_config().model_copy(update={"endpoint_url": server.url})
    (finding,) = check_quotas(resolve(config), clients={"service-quotas": client(server, "service-quotas")})
    assert (finding.code, finding.severity) == ("FS902", Severity.WARNING)
    assert f"the emulator at {server.url} has no Service Quotas API" in finding.message
    assert finding.message.endswith("quotas not checked")
    assert "run again later" not in finding.message


def test_plain_moto_server_is_recognised_as_lacking_service_quotas_too():
    from moto.server import ThreadedMotoServer

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    plain = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    plain.start()
    try:
        url = f"http://127.0.0.1:{port}"
        quotas = boto3.client("service-quotas", region_name=REGION, endpoint_url=url, aws_access_key_id="t",
                              aws_secret_access_key="t", config=Config(retries={"total_max_attempts": 1}))
        config = single_model_config().model_copy(update={"endpoint_url": url})
        (finding,) = check_quotas(resolve(config), clients={"service-quotas": quotas})
    finally:
        plain.stop()
    assert "has no Service Quotas API (HTTP 500 from ListServiceQuotas); quotas not checked" in finding.message


def test_a_server_error_from_real_aws_is_still_an_error_not_an_emulator_gap():
    from fastscale.infra.aws.clients import AwsError
    from tests.aws.quota_stubs import quotas_client

    api, stub = quotas_client()
    stub.add_client_error("list_service_quotas", "InternalFailure", "boom", 500)
    with pytest.raises(AwsError, match="server error"):
        check_quotas(resolve(single_model_config()), clients={"service-quotas": api})


def test_structures_never_given_are_left_out_of_the_description_as_aws_does(server):
    # moto answers an empty VpcConfig / DataCaptureConfig, which the provider reads as blocks the config lacks:
    # a replacement of the model (under the same name) and of the endpoint configuration on every deploy.
    sm = client(server, "sagemaker")
    role, image = "arn:aws:iam::123456789012:role/r", {"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1"}
    sm.create_model(ModelName="plain", ExecutionRoleArn=role, PrimaryContainer=image)
    sm.create_model(ModelName="in-vpc", ExecutionRoleArn=role, PrimaryContainer=image,
                    VpcConfig={"SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0123456789abcdef0"]})
    plain = sm.describe_model(ModelName="plain")
    assert "VpcConfig" not in plain and plain["PrimaryContainer"]["Image"] == image["Image"]
    assert sm.describe_model(ModelName="in-vpc")["VpcConfig"] == {
        "SecurityGroupIds": ["sg-0123456789abcdef0"], "Subnets": ["subnet-0123456789abcdef0"]}
    with pytest.raises(ClientError, match="Could not find model"):
        sm.describe_model(ModelName="nope")
    variant = {"VariantName": "primary", "ModelName": "plain", "InstanceType": "ml.g4dn.xlarge", "InitialInstanceCount": 1}
    sm.create_endpoint_config(EndpointConfigName="bare", ProductionVariants=[variant])
    sm.create_endpoint_config(EndpointConfigName="captured", ProductionVariants=[variant], DataCaptureConfig={
        "InitialSamplingPercentage": 10, "DestinationS3Uri": "s3://capture/x",
        "CaptureOptions": [{"CaptureMode": "Input"}]})
    bare = sm.describe_endpoint_config(EndpointConfigName="bare")
    assert "DataCaptureConfig" not in bare and bare["ProductionVariants"][0]["ModelName"] == "plain"
    assert sm.describe_endpoint_config(EndpointConfigName="captured")["DataCaptureConfig"]["InitialSamplingPercentage"] == 10


def test_the_additions_are_removed_when_the_last_server_stops():
    from moto.applicationautoscaling.responses import ApplicationAutoScalingResponse as Aas
    from moto.sagemaker.responses import SageMakerResponse

    original = Aas.register_scalable_target
    with Emulator(port=0):
        assert "tag_resource" in Aas.__dict__ and "update_endpoint" in SageMakerResponse.__dict__
        with emu.extended():  # nested: still installed after the inner block
            pass
        assert "list_tags_for_resource" in Aas.__dict__
    assert "tag_resource" not in Aas.__dict__ and "update_endpoint" not in SageMakerResponse.__dict__
    assert Aas.register_scalable_target is original


def test_a_port_in_use_is_an_error_at_bind_not_a_hang():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(OSError, match=f"127.0.0.1:{port} is already in use"):
            Emulator(port=port).bind()
    from moto.applicationautoscaling.responses import ApplicationAutoScalingResponse as Aas

    assert "tag_resource" not in Aas.__dict__  # the failed start left moto as it was


def test_environment_names_fastscale_target_dummy_credentials_and_region():
    env = environment("http://127.0.0.1:5000", "eu-west-1")
    assert env == {"FASTSCALE_ENDPOINT_URL": "http://127.0.0.1:5000", "AWS_ENDPOINT_URL": "http://127.0.0.1:5000",
                   "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "eu-west-1"}


def test_missing_moto_names_the_install_command(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_moto(name, *args, **kwargs):
        if name.startswith("moto"):
            raise ImportError(f"No module named '{name}'", name=name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_moto)
    monkeypatch.setattr(emu.importlib, "import_module", lambda name: no_moto(name))
    with pytest.raises(emu.EmulatorUnavailable, match=r"pip install 'fastscale\[emulator\]'"):
        emu.require_moto()
