"""The plan classifier on plans hashicorp/aws itself makes for a live endpoint, offline: nothing rewritten.

A hand-written state holds a live ``aws_sagemaker_endpoint`` per case; each case changes its configuration,
all are planned at once with ``-refresh=false`` (no AWS call) into a saved plan (with the other contract modules'
cases: tests/contract/conftest.py), read back with the runner's ``terraform show -json`` and each change is
classified alone. So the actions and replace paths are the
provider's own: a new endpoint configuration is an update (a rollout), a new name or new rollback alarms
replace the endpoint.

Skips, with the reason, where there is no terraform binary or no mirror with hashicorp/aws.
"""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from fastscale.infra.terraform.rollout import ChangeKind, RolloutInputs, classify_plan
from tests.tf_mirror import AWS_PROVIDER, changes_named, find_aws_mirror, prefixed, where_looked

TERRAFORM = shutil.which("terraform")
MIRROR = find_aws_mirror()
pytestmark = [
    pytest.mark.terraform,
    pytest.mark.skipif(TERRAFORM is None, reason="needs the terraform binary on PATH"),
    pytest.mark.skipif(MIRROR is None, reason=f"no provider mirror with {AWS_PROVIDER} (looked in {where_looked()})"),
]

LIVE = {"name": "demo-chat", "endpoint_config_name": "demo-chat-1", "tags": {"fastscale:stack": "demo"}}
ALARMS = ("demo-chat-5xx-errors", "demo-chat-model-latency")


ROLLBACK = {"blue_green_update_policy": {"traffic_routing_configuration": {"type": "ALL_AT_ONCE", "wait_interval_in_seconds": 360}},
            "auto_rollback_configuration": {"alarms": [{"alarm_name": a} for a in ALARMS]}}
#: case -> the endpoint's new configuration, each planned from the same live endpoint
CASES = {
    "new_config": {**LIVE, "endpoint_config_name": "demo-chat-2"},
    "rollback_alarms": {**LIVE, "deployment_config": ROLLBACK},
    "renamed": {**LIVE, "name": "demo-chat-2"},
    "tagged": {**LIVE, "tags": {"fastscale:stack": "demo", "team": "ml"}},
}


PREFIX = "classify_"
LIVE_STATE = {"arn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/demo-chat", "deployment_config": [],
              "id": "demo-chat", "tags_all": LIVE["tags"], **LIVE}


def planned_cases(root) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Every case a live endpoint of its own (planned with the other modules' cases in one plan:
    tests/contract/conftest.py)."""
    return (prefixed(PREFIX, {"aws_sagemaker_endpoint": CASES}),
            prefixed(PREFIX, {"aws_sagemaker_endpoint": dict.fromkeys(CASES, LIVE_STATE)}))


@pytest.fixture(scope="module")
def plan(offline_plan):
    """case -> classify_plan of what hashicorp/aws plans from the live endpoint, each change classified alone."""
    changes = changes_named(offline_plan, PREFIX)
    assert set(changes) == set(CASES)
    classified = {}
    for case, change in changes.items():
        [classified[case]] = classify_plan({**offline_plan, "resource_changes": [change]},
                                           {"demo-chat": RolloutInputs(2, "instance", 300.0)}).changes
    return classified


def test_a_new_endpoint_configuration_rolls_out_blue_green(plan):
    change = plan["new_config"]
    assert (change.kind, change.actions, change.name) == (ChangeKind.BLUE_GREEN, ("update",), "demo-chat")
    assert not change.strategy.configured and change.duration.seconds == 300


def test_new_rollback_alarms_replace_the_endpoint_with_the_providers_path(plan):
    change = plan["rollback_alarms"]
    assert change.kind is ChangeKind.DOWNTIME and change.actions == ("delete", "create")
    assert "deployment_config[0].auto_rollback_configuration" in change.replace_paths
    assert "deployment.auto_rollback" in change.avoid


def test_a_new_name_replaces_and_new_tags_do_not(plan):
    renamed = plan["renamed"]
    assert renamed.kind is ChangeKind.DOWNTIME and renamed.replace_paths == ("name",)
    tagged = plan["tagged"]
    assert tagged.kind is ChangeKind.IN_PLACE and "tags" in tagged.changed
