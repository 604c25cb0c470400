"""The live instance counts the cut-over count is made of (infra.aws.cutover, infra.model.cutover), on Stubber
clients that validate every request against the SageMaker model."""

from __future__ import annotations

import pytest

from fastscale.infra.aws.clients import AwsError
from fastscale.infra.aws.cutover import live_instance_counts
from fastscale.infra.config import parse_config
from fastscale.infra.model.cutover import cutover_count, tfvars
from fastscale.infra.model.resolved import resolve
from tests.aws.factories import endpoint_desc, not_found, single_model_config, stubbed


def adopted_config():
    """single_model_config() adopting the live endpoint `legacy-llm`, whose variant is `primary`."""
    data = single_model_config().model_dump(mode="json", exclude_defaults=True)
    data["endpoints"][0]["adopted"] = {"endpoint": "legacy-llm", "variant": "primary"}
    return parse_config(data)


def variants(desc: dict, **counts: int) -> dict:
    """``desc`` with one variant per ``name=instances``."""
    desc["ProductionVariants"] = [{**desc["ProductionVariants"][0], "VariantName": name, "CurrentInstanceCount": n,
                                   "DesiredInstanceCount": n} for name, n in counts.items()]
    return desc


def answer(live: dict | None):
    api, stubber = stubbed("sagemaker")
    if live is None:
        not_found(stubber, "describe_endpoint", "endpoint", "demo-chat", EndpointName="demo-chat")
    else:
        stubber.add_response("describe_endpoint", live, {"EndpointName": "demo-chat"})
    return {"sagemaker": api}, stubber


def test_the_live_count_is_the_larger_of_current_and_desired():
    desc = endpoint_desc("demo-chat", managed=None, instances=2)
    desc["ProductionVariants"][0]["DesiredInstanceCount"] = 3  # scaling out
    clients, stubber = answer(desc)
    assert live_instance_counts(resolve(single_model_config()), clients=clients) == {"demo-chat": 3}
    stubber.assert_no_pending_responses()


def test_an_endpoint_not_yet_deployed_has_no_live_count():
    clients, _ = answer(None)
    assert live_instance_counts(resolve(single_model_config()), clients=clients) == {"demo-chat": None}


def test_any_other_error_is_an_aws_error():
    api, stubber = stubbed("sagemaker")
    stubber.add_client_error("describe_endpoint", "AccessDeniedException", "not allowed", 400)
    with pytest.raises(AwsError, match="not allowed"):
        live_instance_counts(resolve(single_model_config()), clients={"sagemaker": api})


@pytest.mark.parametrize(("live", "expected"), [(None, 1), (1, 1), (3, 3), (4, 4), (9, 4), (0, 1)])
def test_cutover_count_is_the_live_fleet_within_initial_and_max(live, expected):
    ep = single_model_config().endpoints[0]  # instances 1..4
    assert cutover_count(ep, live) == expected


def test_tfvars_name_each_endpoint_s_variable():
    stack = resolve(single_model_config())
    assert tfvars(stack, {"demo-chat": 3}) == {"cutover_instances_chat": 3}
    assert tfvars(stack, {}) == {"cutover_instances_chat": 1}


def test_an_adopted_endpoint_is_read_under_its_live_name_and_variant():
    """Its own live fleet, not `<project>-<name>` (asked for nothing here: Stubber refuses any other name) nor
    the default variant's count."""
    api, stubber = stubbed("sagemaker")
    desc = variants(endpoint_desc("legacy-llm", managed=None), AllTraffic=1, primary=3)
    stubber.add_response("describe_endpoint", desc, {"EndpointName": "legacy-llm"})
    stack = resolve(adopted_config())
    live = live_instance_counts(stack, clients={"sagemaker": api})
    stubber.assert_no_pending_responses()
    assert live == {"legacy-llm": 3}
    # ... and the replaced configuration starts at it, not at instances.initial (1)
    assert tfvars(stack, live) == {"cutover_instances_chat": 3}
    assert tfvars(stack, {"demo-chat": 3}) == {"cutover_instances_chat": 1}  # `<project>-<name>` is another endpoint
