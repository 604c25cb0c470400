from __future__ import annotations

import json

import pytest

from fastscale.infra.aws.cleanup import verify_cleanup
from fastscale.infra.config import parse_config
from fastscale.infra.naming import all_endpoint_names
from tests.aws.factories import (
    IMAGE,
    MOTO_INSTANCE_TYPE,
    VARIANT_DIM,
    component_config,
    create_role,
    endpoint_desc,
    ic_list,
    ic_summary,
    not_found,
    put_alarm,
    single_model_config,
    stubbed,
)

SINGLE = all_endpoint_names(single_model_config())[0]
COMPONENTS = all_endpoint_names(component_config())[0]


def kinds(report) -> set[str]:
    return {x.kind for x in report.leftovers}


def leftover(report, kind: str, name: str):
    matches = [x for x in report.leftovers if x.kind == kind and x.name == name]
    assert len(matches) == 1, report.leftovers
    return matches[0]


def _model(sm, name: str, tags: dict[str, str] | None = None) -> None:
    sm.create_model(
        ModelName=name,
        ExecutionRoleArn="arn:aws:iam::123456789012:role/whatever",
        PrimaryContainer={"Image": IMAGE},
        Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()],
    )


def _endpoint_config(sm, name: str, model: str) -> None:
    sm.create_endpoint_config(
        EndpointConfigName=name,
        ProductionVariants=[{"VariantName": "AllTraffic", "ModelName": model, "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}],
    )


@pytest.mark.parametrize("config", [single_model_config(), component_config()], ids=["single-model", "components"])
def test_clean_account_passes(aws, config):
    # Unrelated resources in the same account are not leftovers.
    put_alarm(aws["cloudwatch"], "someone-else-latency", {"fastscale:stack": "another-project"})
    create_role(aws["iam"], "someone-else-role")
    report = verify_cleanup(config, clients=aws)
    assert report.ok, report.leftovers
    assert "are gone" in report.caches and all_endpoint_names(config)[0].endpoint in report.caches
    assert any("endpoint" in c for c in report.checked)
    assert json.loads(json.dumps(report.to_dict()))["ok"] is True


def test_endpoint_still_there(aws):
    sm = aws["sagemaker"]
    _model(sm, "m")
    _endpoint_config(sm, "not-ours-config", "m")
    sm.create_endpoint(EndpointName=SINGLE.endpoint, EndpointConfigName="not-ours-config")
    report = verify_cleanup(single_model_config(), clients=aws)
    assert not report.ok
    assert kinds(report) == {"endpoint"}
    assert "InService" in leftover(report, "endpoint", SINGLE.endpoint).detail
    assert "may still exist" in report.caches and SINGLE.endpoint in report.caches


def test_endpoint_still_deleting_is_a_leftover(aws):
    sm, stub = stubbed("sagemaker")
    stub.add_response("describe_endpoint", endpoint_desc(SINGLE.endpoint, "Deleting", managed=None), {"EndpointName": SINGLE.endpoint})
    stub.add_response("list_endpoint_configs", {"EndpointConfigs": []}, {"NameContains": SINGLE.endpoint_config_prefix})
    not_found(stub, "describe_model", "model", SINGLE.model, ModelName=SINGLE.model)
    report = verify_cleanup(single_model_config(), clients={**aws, "sagemaker": sm})
    stub.assert_no_pending_responses()
    assert kinds(report) == {"endpoint"}
    assert "Deleting" in leftover(report, "endpoint", SINGLE.endpoint).detail
    assert "may still exist" in report.caches


def test_component_left(aws):
    sm, stub = stubbed("sagemaker")
    ep = COMPONENTS.endpoint
    stub.add_response("describe_endpoint", endpoint_desc(ep, "InService"), {"EndpointName": ep})
    stub.add_response("list_inference_components", ic_list(ic_summary("demo-qwen", ep, "Deleting")), {"EndpointNameEquals": ep})
    stub.add_response("list_endpoint_configs", {"EndpointConfigs": []}, {"NameContains": COMPONENTS.endpoint_config_prefix})
    for c in COMPONENTS.components:
        not_found(stub, "describe_model", "model", c.model, ModelName=c.model)
    report = verify_cleanup(component_config(), clients={**aws, "sagemaker": sm})
    stub.assert_no_pending_responses()
    assert kinds(report) == {"endpoint", "inference-component"}
    assert "Deleting" in leftover(report, "inference-component", "demo-qwen").detail
    assert "inference component demo-qwen" in report.caches


def test_configuration_left(aws):
    sm = aws["sagemaker"]
    _model(sm, "m")
    ours = SINGLE.endpoint_config_prefix + "20260101000000000000000001"
    _endpoint_config(sm, ours, "m")
    _endpoint_config(sm, "other-" + ours, "m")  # contains the prefix, but is not ours
    sm.delete_model(ModelName="m")
    report = verify_cleanup(single_model_config(), clients=aws)
    assert [(x.kind, x.name) for x in report.leftovers] == [("endpoint-config", ours)]


def test_model_left(aws):
    _model(aws["sagemaker"], SINGLE.model)
    report = verify_cleanup(single_model_config(), clients=aws)
    assert [(x.kind, x.name) for x in report.leftovers] == [("model", SINGLE.model)]


def test_scalable_target_left(aws):
    aas = aws["application-autoscaling"]
    aas.register_scalable_target(
        ServiceNamespace="sagemaker", ResourceId=SINGLE.resource_id, ScalableDimension=VARIANT_DIM, MinCapacity=1, MaxCapacity=4
    )
    aas.put_scaling_policy(
        PolicyName=SINGLE.target_tracking_policy,
        ServiceNamespace="sagemaker",
        ResourceId=SINGLE.resource_id,
        ScalableDimension=VARIANT_DIM,
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 4.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "SageMakerVariantConcurrentRequestsPerModelHighResolution"},
        },
    )
    report = verify_cleanup(single_model_config(), clients=aws)
    assert kinds(report) == {"scalable-target", "scaling-policy"}
    assert "min 1 max 4" in leftover(report, "scalable-target", SINGLE.resource_id).detail
    leftover(report, "scaling-policy", SINGLE.target_tracking_policy)


def test_alarm_left(aws):
    cw = aws["cloudwatch"]
    put_alarm(cw, SINGLE.alarms["model-latency"])
    put_alarm(cw, f"{SINGLE.endpoint}-renamed-kind")  # an older alarm of the same endpoint, found by prefix
    put_alarm(cw, "unrelated-alarm")
    report = verify_cleanup(single_model_config(), clients=aws)
    assert sorted((x.kind, x.name) for x in report.leftovers) == [
        ("alarm", SINGLE.alarms["model-latency"]),
        ("alarm", f"{SINGLE.endpoint}-renamed-kind"),
    ]


def test_dashboard_left(aws):
    aws["cloudwatch"].put_dashboard(DashboardName="demo-fastscale", DashboardBody=json.dumps({"widgets": []}))
    report = verify_cleanup(single_model_config(), clients=aws)
    assert [(x.kind, x.name) for x in report.leftovers] == [("dashboard", "demo-fastscale")]


def test_role_left(aws):
    create_role(aws["iam"], SINGLE.execution_role)
    report = verify_cleanup(single_model_config(), clients=aws)
    assert [(x.kind, x.name) for x in report.leftovers] == [("iam-role", SINGLE.execution_role)]


def test_no_role_check_when_the_user_brings_the_role(aws):
    create_role(aws["iam"], SINGLE.execution_role)
    data = single_model_config().model_dump()
    data["endpoints"][0]["execution_role_arn"] = "arn:aws:iam::123456789012:role/mine"
    report = verify_cleanup(parse_config(data), clients=aws)
    assert report.ok


def test_tagged_resource_left(aws):
    sm = aws["sagemaker"]
    _model(sm, "demo-chat-0ldd1gst", {"fastscale:stack": "demo"})  # e.g. the model of an earlier image
    _model(sm, "other-model", {"fastscale:stack": "another-project"})
    report = verify_cleanup(single_model_config(), clients=aws)
    assert kinds(report) == {"tagged-resource"}
    x = report.leftovers[0]
    assert x.name.endswith(":model/demo-chat-0ldd1gst") and "fastscale:stack=demo" in x.detail


def test_stale_tag_index_entries_are_not_leftovers(aws):
    # The tagging index lags deletions: an ARN it still lists is confirmed with a describe call first.
    tagging, stub = stubbed("resourcegroupstaggingapi")
    gone = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/demo-old"
    alive = "arn:aws:sqs:us-east-1:123456789012:demo-queue"
    stub.add_response(
        "get_resources",
        {"ResourceTagMappingList": [{"ResourceARN": gone, "Tags": []}, {"ResourceARN": alive, "Tags": []}]},
        {"TagFilters": [{"Key": "fastscale:stack", "Values": ["demo"]}]},
    )
    report = verify_cleanup(single_model_config(), clients={**aws, "resourcegroupstaggingapi": tagging})
    assert [(x.kind, x.name) for x in report.leftovers] == [("tagged-resource", alive)]
