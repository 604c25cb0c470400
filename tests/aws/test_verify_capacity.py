"""Live verification of instance pools, provision timeout, capacity reservation, scale-in policy and copy placement."""

from __future__ import annotations

from fastscale.infra.aws.verify import verify_live
from fastscale.infra.config import parse_config
from fastscale.infra.model.resolved import resolve
from tests.aws.factories import (
    ACCOUNT,
    NOW,
    REGION,
    component_config,
    deploy_single_model,
    endpoint_arn,
    endpoint_desc,
    model_desc,
    single_model_config,
    stack_tags,
    stubbed,
)
from tests.aws.test_verify import SINGLE_MODEL, _component_deployment

CONFIG_NAME = "demo-chat-20260101000000000000000001"
RESERVATION = f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:training-plan/g6-for-inference"


def pooled_config(**capacity):
    data = single_model_config().model_dump(mode="json", exclude_defaults=True)
    data["endpoints"][0]["capacity"] = capacity or {
        "fallback": [{"instance_type": "ml.g5.2xlarge"}, {"instance_type": "ml.g6e.2xlarge"}],
        "provision_timeout": 600,
    }
    return parse_config(data)


def endpoint_config_desc(variant_extra):
    return {
        "EndpointConfigName": CONFIG_NAME,
        "EndpointConfigArn": f"arn:aws:sagemaker:{REGION}:{ACCOUNT}:endpoint-config/{CONFIG_NAME}",
        "ProductionVariants": [{"VariantName": "AllTraffic", "ModelName": SINGLE_MODEL, "InitialInstanceCount": 1, **variant_extra}],
        "CreationTime": NOW,
    }


POOLS = [{"InstanceType": "ml.g6.2xlarge", "Priority": 1}, {"InstanceType": "ml.g5.2xlarge", "Priority": 2},
         {"InstanceType": "ml.g6e.2xlarge", "Priority": 3}]


def _verify(aws, config, variant_extra):
    deploy_single_model(aws)  # scaling, alarms and dashboard in moto
    sm, stub = stubbed("sagemaker")
    live = endpoint_desc("demo-chat", managed=None, config_name=CONFIG_NAME)
    live["ProductionVariants"][0]["InstancePools"] = [
        {"InstanceType": "ml.g6.2xlarge", "CurrentInstanceCount": 0}, {"InstanceType": "ml.g5.2xlarge", "CurrentInstanceCount": 1}]
    stub.add_response("describe_endpoint", live, {"EndpointName": "demo-chat"})
    # status first proves the endpoint is this stack's (its tags)
    stub.add_response("list_tags", {"Tags": [{"Key": k, "Value": v} for k, v in stack_tags(config).items()]}, {"ResourceArn": endpoint_arn("demo-chat")})
    stub.add_response("describe_endpoint_config", endpoint_config_desc(variant_extra), {"EndpointConfigName": CONFIG_NAME})
    stub.add_response("describe_model", model_desc(SINGLE_MODEL, model_data="s3://demo-models/qwen3/"), {"ModelName": SINGLE_MODEL})
    report = verify_live(resolve(config), clients={**aws, "sagemaker": sm}, wait=False)
    stub.assert_no_pending_responses()
    return {c.check: c for c in report.checks if c.resource == "endpoint/demo-chat"}, report


def test_pools_and_timeout_as_configured_pass_and_show_where_instances_run(aws):
    checks, report = _verify(aws, pooled_config(), {"InstancePools": POOLS, "VariantInstanceProvisionTimeoutInSeconds": 600})
    assert report.ok, [str(c) for c in report.failures]
    assert checks["instance pools"].actual == "1: ml.g6.2xlarge, 2: ml.g5.2xlarge, 3: ml.g6e.2xlarge"
    assert checks["instance pools"].detail == "instances now ml.g6.2xlarge: 0, ml.g5.2xlarge: 1"
    assert checks["provision timeout"].actual == "600 s"
    assert checks["capacity reservation"].ok and checks["capacity reservation"].actual == "not set"


def test_missing_pools_other_timeout_and_reservation_are_reported(aws):
    config = pooled_config(fallback=[{"instance_type": "ml.g5.2xlarge"}], provision_timeout=900)
    checks, report = _verify(aws, config, {"InstanceType": "ml.g6.2xlarge", "VariantInstanceProvisionTimeoutInSeconds": 300,
                                           "CapacityReservationConfig": {"CapacityReservationPreference": "capacity-reservations-only",
                                                                         "MlReservationArn": RESERVATION}})
    assert {c.check for c in report.failures} == {"instance pools", "provision timeout", "capacity reservation"}
    assert checks["instance pools"].expected == "1: ml.g6.2xlarge, 2: ml.g5.2xlarge"
    assert checks["instance pools"].actual == "instance type ml.g6.2xlarge"
    assert (checks["provision timeout"].expected, checks["provision timeout"].actual) == ("900 s", "300 s")
    assert checks["capacity reservation"].actual == f"capacity-reservations-only {RESERVATION}"


def test_reservation_as_configured_passes(aws):
    config = pooled_config(reservation_arn=RESERVATION)
    checks, report = _verify(aws, config, {"InstanceType": "ml.g6.2xlarge", "CapacityReservationConfig": {
        "CapacityReservationPreference": "capacity-reservations-only", "MlReservationArn": RESERVATION}})
    assert report.ok, [str(c) for c in report.failures]
    assert checks["provision timeout"].actual == "not set"


def _with(config, **endpoint_fields):
    data = config.model_dump(mode="json", exclude_defaults=True)
    data["endpoints"][0].update(endpoint_fields)
    return parse_config(data)


def test_scale_in_policy_and_copy_placement_are_compared(aws, clock):
    config = _with(component_config(), scale_in={"strategy": "IDLE_RELEASE", "cooldown_minutes": 5},
                   capacity={"placement": {"strategy": "SPREAD", "az_balance": {"max_imbalance": 1}}})
    # The live configuration has AWS's default scale-in policy; the components have no SchedulingConfig.
    live_config = endpoint_config_desc({"InstanceType": "ml.g6.12xlarge", "ManagedInstanceScaling": {
        "Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 3, "ScaleInPolicy": {"Strategy": "IDLE_RELEASE"}}})
    live_config["EndpointConfigName"] = "demo-shared-20260101000000000000000001"
    live_config["ProductionVariants"][0].pop("ModelName")
    clients, (sm_stub, _) = _component_deployment(aws, endpoint_config=live_config)
    report = verify_live(resolve(config), clients=clients, clock=clock)
    sm_stub.assert_no_pending_responses()
    failures = {(c.resource, c.check): c for c in report.failures}
    assert set(failures) == {
        ("endpoint/demo-shared", "scale-in policy"),
        ("inference-component/demo-qwen", "copy placement"),
        ("inference-component/demo-llama", "copy placement"),
    }
    policy = failures[("endpoint/demo-shared", "scale-in policy")]
    assert (policy.expected, policy.actual) == ("IDLE_RELEASE, cooldown 5 min, step 1", "IDLE_RELEASE, cooldown 20 min, step 1")
    placement = failures[("inference-component/demo-qwen", "copy placement")]
    assert (placement.expected, placement.actual) == ("SPREAD, AZ balance PERMISSIVE max imbalance 1", "not set")
