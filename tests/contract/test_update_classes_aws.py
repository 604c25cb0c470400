"""How each attribute fastscale writes on hashicorp/aws's endpoint configuration and endpoint reaches a
live endpoint, taken from the provider's own plan (aws from the offline mirror, 5.100.0 here) and pinned
per attribute: an update in place, or a replacement (for the configuration: a new one, which moves the
endpoint to it, a blue/green or rolling update; for the endpoint: downtime).

Each case plans one change against a hand-written state of its own live resource with `-refresh=false`, so
no AWS call is made; all cases, of both types, are resources of one plan (with the other contract modules' cases:
tests/contract/conftest.py). docs/updates.md lists the same classes.

Skips, with the reason, where there is no terraform binary or no mirror with hashicorp/aws.
"""

from __future__ import annotations

import copy
import shutil
from typing import Any

import pytest

from fastscale.infra.model.cutover import IGNORE_PATH
from fastscale.infra.terraform.rollout import ChangeKind, classify_plan
from tests.tf_mirror import AWS_PROVIDER, changes_named, find_aws_mirror, prefixed, where_looked

TERRAFORM = shutil.which("terraform")
MIRROR = find_aws_mirror()
pytestmark = [
    pytest.mark.terraform,
    pytest.mark.skipif(TERRAFORM is None, reason="needs the terraform binary on PATH"),
    pytest.mark.skipif(MIRROR is None, reason=f"no provider mirror with {AWS_PROVIDER} (looked in {where_looked()})"),
]

CONFIGURATION, ENDPOINT = "aws_sagemaker_endpoint_configuration", "aws_sagemaker_endpoint"
NAME = "demo-chat-20260101000000000000000001"
KEY = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
VARIANT = {"variant_name": "AllTraffic", "model_name": "demo-chat-0a1b2c3d", "instance_type": "ml.g5.2xlarge",
           "initial_instance_count": 1, "volume_size_in_gb": 100, "model_data_download_timeout_in_seconds": 900,
           "container_startup_health_check_timeout_in_seconds": 900,
           "routing_config": [{"routing_strategy": "LEAST_OUTSTANDING_REQUESTS"}]}
CONFIG = {"name_prefix": "demo-chat-", "production_variants": [VARIANT], "tags": {"fastscale:stack": "demo"},
          "lifecycle": {"create_before_destroy": True, "ignore_changes": [IGNORE_PATH]}}


def _config_state(body: dict[str, Any]) -> dict[str, Any]:
    return {"arn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/{NAME}", "id": NAME, "name": NAME,
            "name_prefix": body["name_prefix"],
            # as the provider stores them: the weight is computed (1) when not set
            "production_variants": [{**v, "initial_variant_weight": 1} for v in body["production_variants"]],
            "kms_key_arn": body.get("kms_key_arn", ""), "tags": body["tags"], "tags_all": body["tags"]}


#: attribute -> (edit of the synthesized body, what the provider plans)
CONFIG_CASES = {
    "tags": (lambda b, v: b.update(tags={"fastscale:stack": "demo", "team": "ml"}), ["update"]),
    "initial_instance_count (ignore_changes)": (lambda b, v: v.update(initial_instance_count=4), ["no-op"]),
    "instance_type": (lambda b, v: v.update(instance_type="ml.g6.2xlarge"), ["create", "delete"]),
    "model_name": (lambda b, v: v.update(model_name="demo-chat-9f8e7d6c"), ["create", "delete"]),
    "volume_size_in_gb": (lambda b, v: v.update(volume_size_in_gb=200), ["create", "delete"]),
    "model_data_download_timeout_in_seconds": (lambda b, v: v.update(model_data_download_timeout_in_seconds=1200),
                                               ["create", "delete"]),
    "container_startup_health_check_timeout_in_seconds": (
        lambda b, v: v.update(container_startup_health_check_timeout_in_seconds=1200), ["create", "delete"]),
    "routing_config": (lambda b, v: v.update(routing_config=[{"routing_strategy": "RANDOM"}]), ["create", "delete"]),
    "kms_key_arn": (lambda b, v: b.update(kms_key_arn=KEY), ["create", "delete"]),
}


CONFIG_IDS = {case: f"config{i}" for i, case in enumerate(CONFIG_CASES)}


def _config_resources() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Every configuration case as its own live configuration: bodies and states by resource name."""
    bodies = {}
    for case, (edit, _) in CONFIG_CASES.items():
        body = copy.deepcopy(CONFIG)
        edit(body, body["production_variants"][0])
        bodies[CONFIG_IDS[case]] = body
    return bodies, {i: _config_state(CONFIG) for i in CONFIG_IDS.values()}


PREFIX = "update_class_"


def planned_cases(root) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Every case below, of the endpoint configuration and of the endpoint, a live resource of its own (planned with
    the other modules' cases in one plan: tests/contract/conftest.py)."""
    config_bodies, config_states = _config_resources()
    endpoint_bodies, endpoint_states = _endpoint_resources()
    return (prefixed(PREFIX, {CONFIGURATION: config_bodies, ENDPOINT: endpoint_bodies}),
            prefixed(PREFIX, {CONFIGURATION: config_states, ENDPOINT: endpoint_states}))


@pytest.fixture(scope="module")
def planned(offline_plan) -> dict[str, dict[str, Any]]:
    """resource name -> the planned change of its case."""
    changes = changes_named(offline_plan, PREFIX)
    assert set(changes) == {*CONFIG_IDS.values(), *ENDPOINT_IDS.values()}
    return changes


@pytest.fixture(scope="module")
def config_changes(planned) -> dict[str, dict[str, Any]]:
    """case -> the planned change of its endpoint configuration."""
    return {case: planned[i] for case, i in CONFIG_IDS.items()}


@pytest.mark.parametrize("attribute", list(CONFIG_CASES))
def test_endpoint_configuration_attribute_class(config_changes, attribute):
    _, actions = CONFIG_CASES[attribute]
    found = config_changes[attribute]
    assert found["change"]["actions"] == actions
    classified = classify_plan({"format_version": "1.2", "resource_changes": [found]}).changes
    if actions == ["no-op"]:
        assert classified == ()
    elif actions == ["update"]:
        assert classified[0].kind is ChangeKind.IN_PLACE
    else:  # a new configuration beside the old one; the endpoint's switch to it is the rollout
        assert classified[0].kind is ChangeKind.REPLACE and classified[0].actions == ("create", "delete")


ALARMS = ["demo-chat-5xx-errors", "demo-chat-model-latency"]


def _body(alarms: list[str] | None) -> dict[str, Any]:
    """The deployment_config as fastscale synthesizes it (see stacks.deployment)."""
    config: dict[str, Any] = {"blue_green_update_policy": {"termination_wait_in_seconds": 0, "traffic_routing_configuration": {
        "type": "ALL_AT_ONCE", "wait_interval_in_seconds": 360}}}
    if alarms is not None:
        config["auto_rollback_configuration"] = {"alarms": [{"alarm_name": a} for a in alarms]}
    return config


def _deployment(alarms: list[str] | None, wait: int = 360) -> list[dict[str, Any]]:
    """The deployment_config as the provider stores it (every block a list, unset ones empty)."""
    config: dict[str, Any] = {
        "blue_green_update_policy": [{"maximum_execution_timeout_in_seconds": 0, "termination_wait_in_seconds": 0,
                                      "traffic_routing_configuration": [{
                                          "canary_size": [], "linear_step_size": [], "type": "ALL_AT_ONCE",
                                          "wait_interval_in_seconds": wait}]}],
        "rolling_update_policy": [],
        "auto_rollback_configuration": [{"alarms": [{"alarm_name": a} for a in alarms]}] if alarms is not None else [],
    }
    return [config]


ENDPOINT_CASES = {
    "same alarms": (ALARMS, ["no-op"]),
    "one alarm fewer": (ALARMS[:1], ["update"]),
    "one alarm more": ([*ALARMS, "demo-chat-gpu-memory"], ["update"]),
    "no rollback block": (None, ["delete", "create"]),
}


ENDPOINT_IDS = {case: f"endpoint{i}" for i, case in enumerate(ENDPOINT_CASES)}


def _endpoint_resources() -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Each endpoint case a live endpoint with rollback alarms: bodies and states by resource name."""
    live = {"arn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/demo-chat", "endpoint_config_name": NAME,
            "deployment_config": _deployment(ALARMS), "tags": {"fastscale:stack": "demo"},
            "tags_all": {"fastscale:stack": "demo"}}
    bodies = {ENDPOINT_IDS[case]: {"name": f"demo-{ENDPOINT_IDS[case]}", "endpoint_config_name": NAME,
                                   "tags": {"fastscale:stack": "demo"}, "deployment_config": _body(alarms)}
              for case, (alarms, _) in ENDPOINT_CASES.items()}
    states = {i: {**live, "id": f"demo-{i}", "name": f"demo-{i}"} for i in ENDPOINT_IDS.values()}
    return bodies, states


@pytest.fixture(scope="module")
def endpoint_changes(planned) -> dict[str, list[str]]:
    """case -> the planned actions of its endpoint."""
    return {case: planned[i]["change"]["actions"] for case, i in ENDPOINT_IDS.items()}


@pytest.mark.parametrize("case", list(ENDPOINT_CASES))
def test_rollback_alarms_are_edited_in_place_and_the_block_is_not(endpoint_changes, case):
    """Alarms edited inside an existing auto_rollback_configuration: in place; the whole block added (see
    test_rollback_replaces_endpoint.py) or removed: the endpoint is replaced."""
    assert endpoint_changes[case] == ENDPOINT_CASES[case][1]
