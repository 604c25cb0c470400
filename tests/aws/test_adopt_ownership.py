"""`adopt` never takes another team's resources: what another stack's tags claim is refused unless handed over
by name, and a configuration or model that something else uses is not adopted (the stack makes its own).
moto for single-model endpoints, botocore's Stubber for inference components and the tagging index of
scalable targets (moto has neither)."""

from __future__ import annotations

import pytest

from fastscale.infra.aws.adopt import OwnedByAnotherStack, build_config, read_live
from fastscale.infra.config import parse_config
from fastscale.infra.model.naming import endpoint_names
from fastscale.infra.rules import has_errors, run_rules
from tests.aws.factories import REGION, stubbed
from tests.aws.test_adopt import (
    IC,
    IC_ARN,
    IC_MODEL,
    MODEL,
    NAME,
    RID,
    ROLE,
    scaling,
    sdk_endpoint,
    stub_component_endpoint,
)

A_TAGS = [{"Key": "fastscale:stack", "Value": "team-a"}, {"Key": "managed-by", "Value": "fastscale"}]


def _arn(aws, kind: str, name: str) -> str:
    sm = aws["sagemaker"]
    return {"endpoint": lambda: sm.describe_endpoint(EndpointName=name)["EndpointArn"],
            "config": lambda: sm.describe_endpoint_config(EndpointConfigName=name)["EndpointConfigArn"],
            "model": lambda: sm.describe_model(ModelName=name)["ModelArn"]}[kind]()


def adopted_of(adoption) -> dict:
    return adoption.data["endpoints"][0]["adopted"]


def valid(adoption):
    config = parse_config(adoption.data)
    assert not has_errors(run_rules(config)), [f.to_dict() for f in run_rules(config)]
    return config


# --------------------------------------------------------------------------------------------- another stack's tags


@pytest.mark.parametrize("kind, name", [("endpoint", NAME), ("config", NAME), ("model", MODEL)])
def test_a_resource_tagged_for_another_stack_is_refused_naming_it_and_its_stack(aws, kind, name):
    sdk_endpoint(aws)
    aws["sagemaker"].add_tags(ResourceArn=_arn(aws, kind, name), Tags=A_TAGS)
    with pytest.raises(OwnedByAnotherStack) as refused:
        build_config(read_live(NAME, REGION, clients=aws), REGION, "team-b")
    [owned] = refused.value.owned
    label = {"endpoint": "endpoint", "config": "endpoint configuration", "model": "model"}[kind]
    assert (owned.kind, owned.name, owned.stack) == (label, name, "team-a")
    assert refused.value.stacks == ["team-a"]


def test_a_hand_over_names_the_stack_and_says_what_the_first_deploy_does(aws):
    sdk_endpoint(aws)
    aws["sagemaker"].add_tags(ResourceArn=_arn(aws, "endpoint", NAME), Tags=A_TAGS)
    with pytest.raises(OwnedByAnotherStack):  # another stack's name hands nothing over
        build_config(read_live(NAME, REGION, clients=aws), REGION, "team-b", ("team-c",))
    adoption = build_config(read_live(NAME, REGION, clients=aws), REGION, "team-b", ("team-a",))
    assert adopted_of(adoption)["endpoint"] == NAME
    [note] = [n for n in adoption.notes if "team-a" in n.message]
    assert note.effect == "in-place" and "--take-over-from team-a" in note.message and "re-tags it" in note.message
    valid(adoption)


def test_its_own_stacks_tag_is_no_refusal(aws):
    sdk_endpoint(aws)
    aws["sagemaker"].add_tags(ResourceArn=_arn(aws, "endpoint", NAME), Tags=[{"Key": "fastscale:stack", "Value": "sdk"}])
    assert adopted_of(build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk"))["endpoint"] == NAME


def test_a_scalable_target_tagged_for_another_stack_is_refused(aws):
    """The target's tags come from the tagging index (moto lists no scalable targets there: stubbed)."""
    sdk_endpoint(aws)
    scaling(aws)
    tagging, stub = stubbed("resourcegroupstaggingapi")
    [target] = aws["application-autoscaling"].describe_scalable_targets(ServiceNamespace="sagemaker")["ScalableTargets"]
    stub.add_response("get_resources", {"ResourceTagMappingList": [{"ResourceARN": target["ScalableTargetARN"], "Tags": A_TAGS}]},
                      {"ResourceARNList": [target["ScalableTargetARN"]]})
    with pytest.raises(OwnedByAnotherStack) as refused:
        build_config(read_live(NAME, REGION, clients={**aws, "resourcegroupstaggingapi": tagging}), REGION, "team-b")
    assert [(o.kind, o.name, o.stack) for o in refused.value.owned] == [("scalable target", RID, "team-a")]
    stub.assert_no_pending_responses()


# --------------------------------------------------------------------------------------------- shared configuration or model


def test_a_model_another_endpoint_also_runs_is_not_adopted_and_the_stack_makes_its_own(aws):
    sdk_endpoint(aws)
    sm = aws["sagemaker"]
    sm.create_endpoint_config(EndpointConfigName="team-a-config", ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": MODEL, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}])
    sm.create_endpoint(EndpointName="team-a-endpoint", EndpointConfigName="team-a-config")
    adoption = build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk")
    assert adopted_of(adoption) == {"endpoint": NAME}  # neither the model nor the configuration that names it
    [shared] = [n for n in adoption.notes if n.path == "endpoints[0].adopted.endpoint_config"]
    assert shared.effect == "create"
    assert f"model {MODEL} is also used by endpoint team-a-endpoint, endpoint configuration team-a-config" in shared.message
    [left] = [n for n in adoption.notes if n.effect == "not-managed" and n.path == "endpoints[0].adopted"]
    assert f"endpoint configuration {NAME} and what it names stay live outside the stack" in left.message
    config = valid(adoption)
    names = endpoint_names(config, config.endpoints[0])
    assert names.endpoint == NAME and names.model != MODEL and names.endpoint_config is None


def test_a_model_only_another_configuration_names_is_not_adopted(aws):
    sdk_endpoint(aws)
    aws["sagemaker"].create_endpoint_config(EndpointConfigName="idle-config", ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": MODEL, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}])
    adoption = build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk")
    assert "model" not in adopted_of(adoption) and "endpoint_config" not in adopted_of(adoption)
    assert any("endpoint configuration idle-config" in n.message for n in adoption.notes)


def test_a_configuration_another_endpoint_runs_is_not_adopted(aws):
    sdk_endpoint(aws)
    aws["sagemaker"].create_endpoint(EndpointName="twin", EndpointConfigName=NAME)
    adoption = build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk")
    assert adopted_of(adoption) == {"endpoint": NAME}
    [note] = [n for n in adoption.notes if n.path == "endpoints[0].adopted.endpoint_config"]
    assert f"endpoint configuration {NAME} is also used by endpoint twin" in note.message
    valid(adoption)


def test_what_nothing_else_uses_is_adopted_as_before(aws):
    sdk_endpoint(aws)
    sm = aws["sagemaker"]  # another endpoint with its own configuration and model shares nothing
    sm.create_model(ModelName="unrelated", ExecutionRoleArn=ROLE, PrimaryContainer={"Image": "x"})
    sm.create_endpoint_config(EndpointConfigName="unrelated", ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": "unrelated", "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}])
    sm.create_endpoint(EndpointName="unrelated", EndpointConfigName="unrelated")
    adopted = adopted_of(build_config(read_live(NAME, REGION, clients=aws), REGION, "sdk"))
    assert (adopted["endpoint_config"], adopted["model"], adopted["model_data_url"]) == (NAME, MODEL, True)


def test_a_component_model_another_endpoints_component_runs_is_not_adopted():
    adoption = build_config(read_live(NAME, REGION, clients=stub_component_endpoint(
        {"EnableCaching": True}, model_also_on="team-a-endpoint")), REGION, "ic")
    [component] = adoption.data["endpoints"][0]["inference_components"]
    assert component["adopted"] == {"name": IC, "arn": IC_ARN}  # the component itself, not its model
    [note] = [n for n in adoption.notes if n.path == "endpoints[0].inference_components[0].adopted"]
    assert f"model {IC_MODEL} is also used by inference component team-a-endpoint-ic" in note.message
    config = parse_config(adoption.data)
    assert endpoint_names(config, config.endpoints[0]).components[0].model != IC_MODEL


def test_a_component_tagged_for_another_stack_is_refused():
    clients = stub_component_endpoint({"EnableCaching": True}, tags={IC_ARN: {"fastscale:stack": "team-a"}})
    with pytest.raises(OwnedByAnotherStack) as refused:
        build_config(read_live(NAME, REGION, clients=clients), REGION, "ic")
    assert [(o.kind, o.name, o.stack) for o in refused.value.owned] == [("inference component", IC, "team-a")]
