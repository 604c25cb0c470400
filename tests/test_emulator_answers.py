"""The emulator answers as AWS does, checked against botocore's service models: every call fastscale, the aws
provider and the SageMaker Python SDK read, on resources made the way the SDK (and fastscale) make them.

Each answer's raw body may only hold members of the operation's output shape, none of them empty where AWS leaves
it out, and passes botocore's own validation of the parsed answer (required members, types). moto alone fails
that check (the first test), so the check is what holds the emulator to AWS."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from botocore.exceptions import ClientError

from fastscale.infra.project.emulator import DEFAULT_VARIANT_WEIGHT, Emulator
from tests.service_model_check import answer_problems, recording

ROLE = "arn:aws:iam::123456789012:role/sdk-role"
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-tgi-inference:2.1.1-tgi1.4.0-gpu-py310"
RESOURCE_ID = "endpoint/sdk-ep/variant/AllTraffic"
DIMENSION = "sagemaker:variant:DesiredInstanceCount"
TRUST = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"sagemaker.amazonaws.com"},"Action":"sts:AssumeRole"}]}'


@pytest.fixture(scope="module")
def server():
    with Emulator(port=0) as running:
        yield running.url


def sdk_shaped_endpoint(url: str | None, name: str = "sdk-ep", **variant: object) -> dict[str, object]:
    """Model, configuration and endpoint as the SageMaker Python SDK creates them (no Mode, no weight unless
    given, no VPC, no data capture), the execution role and SDK-style auto scaling; the clients used."""
    api = {s: recording(url, s) for s in ("sagemaker", "application-autoscaling", "cloudwatch", "iam", "sts")}
    sm = api["sagemaker"]
    sm.create_model(ModelName=name, ExecutionRoleArn=ROLE, PrimaryContainer={
        "Image": IMAGE, "ModelDataUrl": "s3://sdk-bucket/model.tar.gz", "Environment": {"SM_NUM_GPUS": "1"}})
    sm.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": name, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge",
        **variant}])
    sm.create_endpoint(EndpointName=name, EndpointConfigName=name)
    return api


def test_moto_alone_fails_the_check_the_emulator_is_held_to():
    from moto import mock_aws

    with mock_aws():
        sm = sdk_shaped_endpoint(None)["sagemaker"]
        problems = answer_problems(sm, "DescribeEndpoint", sm.describe_endpoint(EndpointName="sdk-ep"))
        problems += answer_problems(sm, "DescribeModel", sm.describe_model(ModelName="sdk-ep"))
    assert "DescribeEndpoint.DataCaptureConfig: {} where AWS leaves the member out" in problems
    assert "DescribeModel.Containers: [] where AWS leaves the member out" in problems


def test_moto_alone_answers_a_configurations_arn_in_the_tagging_index_as_no_arn():
    from moto import mock_aws

    with mock_aws():
        tagged_sdk_endpoint(None, "model")
        tagging = recording(None, "resourcegroupstaggingapi")
        answer = tagging.get_resources(TagFilters=[{"Key": SOURCE_TAG, "Values": ["s3://sdk-bucket/model.tar.gz"]}])
    assert any(p.endswith("is not an ARN") for p in answer_problems(tagging, "GetResources", answer))


def test_the_tagging_index_answers_the_arns_sdk_3_reuse_looks_up(server):
    """SDK 3.x finds what it made by the model-source tag through GetResources, filtered by resource type."""
    api = tagged_sdk_endpoint(server, "reuse")
    sm, tagging = api["sagemaker"], recording(server, "resourcegroupstaggingapi")
    arns = {"sagemaker:endpoint": sm.describe_endpoint(EndpointName="reuse")["EndpointArn"],
            "sagemaker:endpoint-config": sm.describe_endpoint_config(EndpointConfigName="reuse")["EndpointConfigArn"],
            "sagemaker:model": sm.describe_model(ModelName="reuse")["ModelArn"]}
    for kind, arn in arns.items():
        answer = tagging.get_resources(TagFilters=[{"Key": SOURCE_TAG, "Values": ["s3://sdk-bucket/reuse.tar.gz"]}],
                                       ResourceTypeFilters=[kind])
        assert [m["ResourceARN"] for m in answer["ResourceTagMappingList"]] == [arn]
        assert answer_problems(tagging, "GetResources", answer) == []
    assert sm.list_tags(ResourceArn=arns["sagemaker:endpoint-config"])["Tags"][0]["Key"] == SOURCE_TAG


SOURCE_TAG = "sagemaker.amazonaws.com/model-source"


def tagged_sdk_endpoint(url: str | None, name: str) -> dict[str, object]:
    """Model, configuration and endpoint as SDK 3.x's ModelBuilder.deploy() creates them: each tagged with the
    model source it was made from."""
    api = {"sagemaker": recording(url, "sagemaker")}
    sm = api["sagemaker"]
    tags = [{"Key": SOURCE_TAG, "Value": f"s3://sdk-bucket/{name}.tar.gz"}]
    sm.create_model(ModelName=name, ExecutionRoleArn=ROLE, PrimaryContainer={
        "Image": IMAGE, "ModelDataUrl": f"s3://sdk-bucket/{name}.tar.gz", "Environment": {}}, Tags=tags)
    sm.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": name, "InitialVariantWeight": 1, "InitialInstanceCount": 1,
        "InstanceType": "ml.g4dn.xlarge"}], Tags=tags)
    sm.create_endpoint(EndpointName=name, EndpointConfigName=name, Tags=tags)
    return api


def test_every_answer_fastscale_the_provider_and_the_sdk_read_matches_the_service_model(server):
    api = sdk_shaped_endpoint(server)
    sm, aas, cw, iam, sts = (api[s] for s in ("sagemaker", "application-autoscaling", "cloudwatch", "iam", "sts"))
    iam.create_role(RoleName="sdk-role", AssumeRolePolicyDocument=TRUST)
    aas.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID, ScalableDimension=DIMENSION,
                                 MinCapacity=1, MaxCapacity=3, Tags={"team": "ml"})
    aas.put_scaling_policy(
        PolicyName="SageMakerEndpointInvocationScalingPolicy", ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID,
        ScalableDimension=DIMENSION, PolicyType="TargetTrackingScaling", TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 70.0, "PredefinedMetricSpecification": {
                "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}})
    cw.put_metric_alarm(AlarmName="sdk-ep-no-capacity", Namespace="AWS/SageMaker", MetricName="Invocations",
                        Statistic="Sum", Period=60, EvaluationPeriods=1, Threshold=1,
                        ComparisonOperator="GreaterThanThreshold")
    target_arn = aas.describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"][0]["ScalableTargetARN"]
    now = datetime.now(UTC)
    calls = [
        (sm, "DescribeModel", sm.describe_model(ModelName="sdk-ep")),
        (sm, "DescribeEndpointConfig", sm.describe_endpoint_config(EndpointConfigName="sdk-ep")),
        (sm, "DescribeEndpoint", sm.describe_endpoint(EndpointName="sdk-ep")),
        (sm, "ListEndpoints", sm.list_endpoints()),
        (sm, "ListModels", sm.list_models()),
        (sm, "ListEndpointConfigs", sm.list_endpoint_configs()),
        (sm, "ListTags", sm.list_tags(ResourceArn=sm.describe_endpoint(EndpointName="sdk-ep")["EndpointArn"])),
        (aas, "DescribeScalableTargets", aas.describe_scalable_targets(ServiceNamespace="sagemaker")),
        (aas, "DescribeScalingPolicies", aas.describe_scaling_policies(ServiceNamespace="sagemaker")),
        (aas, "DescribeScalingActivities", aas.describe_scaling_activities(
            ServiceNamespace="sagemaker", ResourceId=RESOURCE_ID, ScalableDimension=DIMENSION,
            IncludeNotScaledActivities=True)),
        (aas, "ListTagsForResource", aas.list_tags_for_resource(ResourceARN=target_arn)),
        (cw, "DescribeAlarms", cw.describe_alarms(AlarmNames=["sdk-ep-no-capacity"])),
        (cw, "DescribeAlarmHistory", cw.describe_alarm_history(
            AlarmName="sdk-ep-no-capacity", StartDate=now - timedelta(hours=1), EndDate=now + timedelta(hours=1))),
        (iam, "GetRole", iam.get_role(RoleName="sdk-role")),  # the SDK's role check
        (sts, "GetCallerIdentity", sts.get_caller_identity()),  # the SDK's account and role lookup
    ]
    problems = [p for client, operation, answer in calls for p in answer_problems(client, operation, answer)]
    assert problems == []
    raw = sm.raw["DescribeEndpoint"]
    assert "DataCaptureConfig" not in raw  # what SDK 3.x's Endpoint.get() failed on


def test_aws_defaults_are_filled_where_aws_fills_them(server):
    sm = sdk_shaped_endpoint(server, "defaults")["sagemaker"]
    [configured] = sm.describe_endpoint_config(EndpointConfigName="defaults")["ProductionVariants"]
    assert configured["InitialVariantWeight"] == DEFAULT_VARIANT_WEIGHT == 1.0
    [summary] = sm.describe_endpoint(EndpointName="defaults")["ProductionVariants"]
    assert (summary["CurrentWeight"], summary["DesiredWeight"]) == (1.0, 1.0)
    assert (summary["CurrentInstanceCount"], summary["DesiredInstanceCount"]) == (1, 1)
    assert "VariantStatus" not in summary and "DeployedImages" not in summary  # not emulated (docs/emulator.md)
    assert sm.describe_model(ModelName="defaults")["PrimaryContainer"]["Mode"] == "SingleModel"


def test_a_weight_and_settings_given_are_answered_as_given(server):
    scaling = {"Status": "ENABLED", "MinInstanceCount": 1, "MaxInstanceCount": 4}
    sm = sdk_shaped_endpoint(server, "given", InitialVariantWeight=0.5, ManagedInstanceScaling=scaling,
                             RoutingConfig={"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"})["sagemaker"]
    assert sm.describe_endpoint_config(EndpointConfigName="given")["ProductionVariants"][0]["InitialVariantWeight"] == 0.5
    [summary] = sm.describe_endpoint(EndpointName="given")["ProductionVariants"]
    assert (summary["CurrentWeight"], summary["DesiredWeight"]) == (0.5, 0.5)
    assert summary["ManagedInstanceScaling"] == scaling
    assert summary["RoutingConfig"] == {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}
    assert answer_problems(sm, "DescribeEndpoint", sm.describe_endpoint(EndpointName="given")) == []


def test_data_capture_is_answered_as_the_summary_aws_gives(server):
    sm = recording(server, "sagemaker")
    sm.create_model(ModelName="cap", ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE})
    sm.create_endpoint_config(
        EndpointConfigName="cap", ProductionVariants=[{"VariantName": "v", "ModelName": "cap",
                                                       "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}],
        DataCaptureConfig={"InitialSamplingPercentage": 20, "DestinationS3Uri": "s3://capture/x",
                           "KmsKeyId": "alias/capture", "CaptureOptions": [{"CaptureMode": "Input"}]})
    sm.create_endpoint(EndpointName="cap", EndpointConfigName="cap")
    answer = sm.describe_endpoint(EndpointName="cap")
    assert answer["DataCaptureConfig"] == {"EnableCapture": True, "CaptureStatus": "Started",
                                           "CurrentSamplingPercentage": 20, "DestinationS3Uri": "s3://capture/x",
                                           "KmsKeyId": "alias/capture"}
    assert answer_problems(sm, "DescribeEndpoint", answer) == []


def test_an_update_answers_the_data_capture_of_the_configuration_the_endpoint_now_runs(server):
    sm = recording(server, "sagemaker")
    sm.create_model(ModelName="cap-u", ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE})
    variants = [{"VariantName": "v", "ModelName": "cap-u", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}]
    sm.create_endpoint_config(EndpointConfigName="cap-u-1", ProductionVariants=variants)
    sm.create_endpoint_config(EndpointConfigName="cap-u-2", ProductionVariants=variants, DataCaptureConfig={
        "InitialSamplingPercentage": 50, "DestinationS3Uri": "s3://capture/u", "CaptureOptions": [{"CaptureMode": "Input"}]})
    sm.create_endpoint(EndpointName="cap-u", EndpointConfigName="cap-u-1")
    assert "DataCaptureConfig" not in sm.describe_endpoint(EndpointName="cap-u")
    sm.update_endpoint(EndpointName="cap-u", EndpointConfigName="cap-u-2")  # capture turned on
    answer = sm.describe_endpoint(EndpointName="cap-u")
    assert answer["DataCaptureConfig"] == {"EnableCapture": True, "CaptureStatus": "Started",
                                           "CurrentSamplingPercentage": 50, "DestinationS3Uri": "s3://capture/u"}
    assert answer_problems(sm, "DescribeEndpoint", answer) == []
    sm.update_endpoint(EndpointName="cap-u", EndpointConfigName="cap-u-1")  # and off again
    assert "DataCaptureConfig" not in sm.describe_endpoint(EndpointName="cap-u")


def test_scaling_activities_are_an_empty_history_and_a_call_without_namespace_is_refused(server):
    aas = recording(server, "application-autoscaling")
    answer = aas.describe_scaling_activities(ServiceNamespace="sagemaker", ResourceId="endpoint/none/variant/v",
                                             ScalableDimension=DIMENSION)
    assert answer["ScalingActivities"] == []
    assert answer_problems(aas, "DescribeScalingActivities", answer) == []


def test_alarm_history_records_each_state_change(server):
    cw = recording(server, "cloudwatch")
    cw.put_metric_alarm(AlarmName="hist", Namespace="AWS/SageMaker", MetricName="Invocations", Statistic="Sum",
                        Period=60, EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanThreshold")
    cw.set_alarm_state(AlarmName="hist", StateValue="ALARM", StateReason="traffic")
    cw.set_alarm_state(AlarmName="hist", StateValue="OK", StateReason="quiet")
    items = cw.describe_alarm_history(AlarmName="hist", ScanBy="TimestampAscending")["AlarmHistoryItems"]
    assert [(i["HistoryItemType"], i["HistorySummary"]) for i in items] == [
        ("StateUpdate", "Alarm updated from OK to ALARM"), ("StateUpdate", "Alarm updated from ALARM to OK")]
    newest_first = cw.describe_alarm_history(AlarmName="hist")["AlarmHistoryItems"]
    assert [i["HistorySummary"] for i in newest_first] == [i["HistorySummary"] for i in reversed(items)]
    later = datetime.now(UTC) + timedelta(hours=1)
    assert cw.describe_alarm_history(AlarmName="hist", StartDate=later)["AlarmHistoryItems"] == []
    assert cw.describe_alarm_history(AlarmName="other")["AlarmHistoryItems"] == []


@pytest.mark.parametrize(("service", "operation", "params", "code"), [
    ("sagemaker", "list_inference_components", {}, "UnknownOperationException"),
    ("iam", "simulate_principal_policy", {"PolicySourceArn": ROLE, "ActionNames": ["s3:GetObject"]}, "InvalidAction"),
    ("service-quotas", "list_service_quotas", {"ServiceCode": "sagemaker"}, "UnknownOperationException"),
])
def test_a_call_the_emulator_lacks_is_named_as_not_implemented_not_a_server_error(server, service, operation, params, code):
    with pytest.raises(ClientError) as lacking:
        getattr(recording(server, service), operation)(**params)
    error = lacking.value.response
    assert error["Error"]["Code"] == code
    assert error["ResponseMetadata"]["HTTPStatusCode"] == 400 and error["ResponseMetadata"]["RetryAttempts"] == 0
    assert error["Error"]["Message"].startswith(f"the emulator does not implement {lacking.value.operation_name} (")


def test_update_endpoint_refuses_an_instance_type_change_of_an_auto_scaled_variant_as_aws_does(server):
    sm, aas = recording(server, "sagemaker"), recording(server, "application-autoscaling")
    sm.create_model(ModelName="upd-m", ExecutionRoleArn=ROLE, PrimaryContainer={"Image": IMAGE})
    for name, instance_type in (("upd-1", "ml.g4dn.xlarge"), ("upd-2", "ml.g4dn.2xlarge")):
        sm.create_endpoint_config(EndpointConfigName=name, ProductionVariants=[{
            "VariantName": "v", "ModelName": "upd-m", "InitialInstanceCount": 1, "InstanceType": instance_type}])
    sm.create_endpoint(EndpointName="upd", EndpointConfigName="upd-1")
    target = {"ServiceNamespace": "sagemaker", "ResourceId": "endpoint/upd/variant/v", "ScalableDimension": DIMENSION}
    aas.register_scalable_target(**target, MinCapacity=1, MaxCapacity=2)
    with pytest.raises(ClientError, match="which is a target for auto scaling"):
        sm.update_endpoint(EndpointName="upd", EndpointConfigName="upd-2")
    assert sm.describe_endpoint(EndpointName="upd")["EndpointConfigName"] == "upd-1"
    aas.deregister_scalable_target(**target)
    sm.update_endpoint(EndpointName="upd", EndpointConfigName="upd-2")
    assert sm.describe_endpoint(EndpointName="upd")["EndpointConfigName"] == "upd-2"


def test_each_host_is_looked_up_among_motos_backends_once_and_answered_as_moto_answers(monkeypatch):
    from moto import backends
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    from fastscale.infra.project.emulator import _dispatcher

    hosts = [None, "moto_api", "s3", "api.sagemaker.us-east-1.amazonaws.com", "monitoring.eu-west-1.amazonaws.com",
             "application-autoscaling.us-east-1.amazonaws.com"]
    expected = {host: DomainDispatcherApplication(create_backend_app).get_backend_for_host(host) for host in hosts}
    assert expected["api.sagemaker.us-east-1.amazonaws.com"] == "sagemaker" and expected["s3"] == "s3"
    listed = []
    listing = backends.list_of_moto_modules
    monkeypatch.setattr(backends, "list_of_moto_modules", lambda: listed.append(1) or listing())
    dispatcher = _dispatcher(create_backend_app)
    assert [dispatcher.get_backend_for_host(host) for host in hosts * 3] == [expected[host] for host in hosts * 3]
    assert len(listed) == 4  # once for each host that names a service, not once per request


def test_the_dispatcher_remembers_a_bounded_number_of_hosts(monkeypatch):
    # The Host header is the client's: a client sending a new one with every request must not grow the emulator.
    from moto.moto_server.werkzeug_app import create_backend_app

    from fastscale.infra.project import emulator

    monkeypatch.setattr(emulator, "_HOSTS_REMEMBERED", 2)
    dispatcher = emulator._dispatcher(create_backend_app)
    hosts = [f"api.sagemaker.{region}.amazonaws.com" for region in ("us-east-1", "eu-west-1", "ap-south-1")]
    assert [dispatcher.get_backend_for_host(host) for host in hosts * 2] == ["sagemaker"] * 6
    assert list(dispatcher.backends) == hosts[:2]
