"""What hashicorp/aws plans for a live single-model endpoint when its deployment_config changes, offline.

The endpoint's `deployment_config.auto_rollback_configuration` block forces a new resource in hashicorp/aws
when it is added or removed: a live endpoint that gets rollback alarms (the first deploy with automatic
rollback) is replaced, while a change of the update policy alone (the bake time) is an update in place
(alarms edited inside an existing block: tests/contract/test_update_classes_aws.py). docs/updates.md tells users so; this keeps that statement true for the provider on the machine. It
plans the example's synthesized endpoint against a hand-written state with `-refresh=false`, so no AWS
call is made: every case is a live endpoint of its own in one plan (with the other contract modules' cases:
tests/contract/conftest.py).

Skips, with the reason, where there is no terraform binary or no mirror with hashicorp/aws.
"""

from __future__ import annotations

import copy
import re
import shutil
from typing import Any

import pytest

from fastscale.infra.config import load_config
from tests.conftest import ROOT
from tests.stacks.conftest import synth
from tests.tf_mirror import AWS_PROVIDER, changes_named, find_aws_mirror, prefixed, where_looked

TERRAFORM = shutil.which("terraform")
MIRROR = find_aws_mirror()
pytestmark = [
    pytest.mark.terraform,
    pytest.mark.skipif(TERRAFORM is None, reason="needs the terraform binary on PATH"),
    pytest.mark.skipif(MIRROR is None, reason=f"no provider mirror with {AWS_PROVIDER} (looked in {where_looked()})"),
]
ALARM_REF = re.compile(r"^\$\{aws_cloudwatch_metric_alarm\.(?P<id>[^.}]+)\.alarm_name\}$")


def _live(body: dict[str, Any], deployment_config: list[dict[str, Any]]) -> dict[str, Any]:
    return {"arn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{body['name']}",
            "deployment_config": deployment_config, "endpoint_config_name": body["endpoint_config_name"],
            "id": body["name"], "name": body["name"], "tags": body.get("tags"), "tags_all": body.get("tags") or {}}


def _as_state(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The synthesized deployment_config as the provider stores it (every block a list, unset ones empty)."""
    policy = config["blue_green_update_policy"]
    routing = policy["traffic_routing_configuration"]
    return [{
        "auto_rollback_configuration": [{"alarms": config["auto_rollback_configuration"]["alarms"]}],
        "blue_green_update_policy": [{
            "maximum_execution_timeout_in_seconds": policy.get("maximum_execution_timeout_in_seconds", 0),
            "termination_wait_in_seconds": policy["termination_wait_in_seconds"],
            "traffic_routing_configuration": [{"canary_size": [], "linear_step_size": [], "type": routing["type"],
                                               "wait_interval_in_seconds": routing["wait_interval_in_seconds"]}],
        }],
        "rolling_update_policy": [],
    }]


def _bake_time_changed(config: dict[str, Any]) -> list[dict[str, Any]]:
    live = _as_state(config)
    live[0]["blue_green_update_policy"][0]["traffic_routing_configuration"][0]["wait_interval_in_seconds"] = 120
    return live


#: case -> the live endpoint's deployment_config, from the synthesized one
CASES = {
    "none": lambda config: [],  # a live endpoint deployed without a deployment configuration
    "other_bake_time": _bake_time_changed,
    "same": _as_state,
}


PREFIX = "rollback_"


def planned_cases(root) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """The qwen3-8b example's endpoint, live with each case's deployment_config: every case a resource of its own
    (planned with the other modules' cases in one plan: tests/contract/conftest.py)."""
    doc = synth(load_config(ROOT / "examples" / "qwen3-8b.yaml"), root / "synth").doc
    (body,) = copy.deepcopy(doc["resource"]["aws_sagemaker_endpoint"]).values()
    alarms = doc["resource"]["aws_cloudwatch_metric_alarm"]
    for item in body["deployment_config"]["auto_rollback_configuration"]["alarms"]:
        item["alarm_name"] = alarms[ALARM_REF.match(item["alarm_name"])["id"]]["alarm_name"]  # the literal name
    body["endpoint_config_name"] = "chat-prod-qwen3-20260101000000000000000001"
    body.pop("depends_on", None)
    states = {case: _live(body, live(body["deployment_config"])) for case, live in CASES.items()}
    return (prefixed(PREFIX, {"aws_sagemaker_endpoint": dict.fromkeys(CASES, body)}),
            prefixed(PREFIX, {"aws_sagemaker_endpoint": states}))


@pytest.fixture(scope="module")
def planned(offline_plan) -> dict[str, dict[str, Any]]:
    """case -> the planned change of its endpoint."""
    changes = changes_named(offline_plan, PREFIX)
    assert set(changes) == set(CASES)
    return {case: change["change"] for case, change in changes.items()}


def test_adding_rollback_alarms_to_a_live_endpoint_replaces_it(planned):
    change = planned["none"]
    assert change["actions"] == ["delete", "create"]
    assert ["deployment_config", 0, "auto_rollback_configuration"] in change["replace_paths"]


def test_a_new_bake_time_with_the_same_alarms_is_an_update_in_place(planned):
    assert planned["other_bake_time"]["actions"] == ["update"]
    assert planned["same"]["actions"] == ["no-op"]
