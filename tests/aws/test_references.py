"""`infra.aws.references`: what the live endpoints, components and configurations of a region use (moto, and
botocore's Stubber for what moto leaves out)."""

from __future__ import annotations

from fastscale.infra.aws.clients import resolve
from fastscale.infra.aws.references import in_use
from tests.aws.factories import (
    MOTO_INSTANCE_TYPE,
    NOW,
    REGION,
    endpoint_arn,
    endpoint_config_desc,
    endpoint_desc,
    stubbed,
)

ROLE = "arn:aws:iam::123456789012:role/r"


def model(sm, name: str) -> None:
    sm.create_model(ModelName=name, ExecutionRoleArn=ROLE, PrimaryContainer={"Image": "x"})


def variant(name: str, model_name: str) -> dict:
    return {"VariantName": name, "ModelName": model_name, "InstanceType": MOTO_INSTANCE_TYPE, "InitialInstanceCount": 1}


def test_a_shadow_variants_model_is_in_use_by_the_endpoint():
    """moto drops ShadowProductionVariants: botocore's Stubber answers as SageMaker does."""
    sm, stub = stubbed("sagemaker")
    stub.add_response("list_endpoints", {"Endpoints": [{"EndpointName": "ep", "EndpointArn": endpoint_arn("ep"), "CreationTime": NOW,
                                                        "LastModifiedTime": NOW, "EndpointStatus": "InService"}]}, {})
    stub.add_response("describe_endpoint", endpoint_desc("ep", config_name="cfg"), {"EndpointName": "ep"})
    stub.add_response("describe_endpoint_config", {**endpoint_config_desc("cfg", ["prod"]), "ShadowProductionVariants": [
        {"VariantName": "copy", "ModelName": "shadow", "InstanceType": "ml.g6.2xlarge", "InitialInstanceCount": 1}]},
        {"EndpointConfigName": "cfg"})
    uses = in_use(resolve({"sagemaker": sm}, REGION))
    stub.assert_no_pending_responses()
    assert uses.unknown == ""
    assert uses.of("model", "SHADOW") == [("endpoint", "ep")]  # any case, as SageMaker compares names
    assert uses.of("model", "prod") == [("endpoint", "ep")] and uses.of("endpoint-config", "cfg") == [("endpoint", "ep")]


def test_configurations_no_endpoint_runs_count_only_when_asked_and_skipped_users_never(aws):
    sm = aws["sagemaker"]
    model(sm, "m")
    sm.create_endpoint_config(EndpointConfigName="idle", ProductionVariants=[variant("main", "m")])
    assert in_use(resolve(aws, REGION)).of("model", "m") == []
    assert in_use(resolve(aws, REGION), configurations=True).of("model", "m") == [("endpoint-config", "idle")]
    skipped = in_use(resolve(aws, REGION), configurations=True, skip=lambda kind, name, arn: name == "idle")
    assert skipped.of("model", "m") == []


def test_the_models_role_counts_when_roles_are_asked_for(aws):
    sm = aws["sagemaker"]
    model(sm, "m")
    sm.create_endpoint_config(EndpointConfigName="cfg", ProductionVariants=[variant("main", "m")])
    sm.create_endpoint(EndpointName="ep", EndpointConfigName="cfg")
    assert in_use(resolve(aws, REGION)).of("iam-role", "r") == []
    assert in_use(resolve(aws, REGION), roles=True).of("iam-role", "r") == [("endpoint", "ep")]
