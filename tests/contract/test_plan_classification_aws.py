"""The plan classifier on plans hashicorp/aws itself makes for a live endpoint, offline: nothing rewritten.

A hand-written state holds a live ``aws_sagemaker_endpoint`` per case; each case changes its configuration,
all are planned at once with ``-refresh=false`` (no AWS call) into a saved plan, read back with the runner's
``terraform show -json`` and each change is classified alone. So the actions and replace paths are the
provider's own: a new endpoint configuration is an update (a rollout), a new name or new rollback alarms
replace the endpoint.

Skips, with the reason, where there is no terraform binary or no mirror with hashicorp/aws.
"""

from __future__ import annotations

import shutil

import pytest

from fastscale.infra.terraform.rollout import ChangeKind, RolloutInputs, classify_plan
from fastscale.infra.terraform.runner import TerraformRunner
from tests.tf_mirror import AWS_PROVIDER, OfflineEndpointPlans, find_aws_mirror, where_looked

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


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    """case -> classify_plan of what hashicorp/aws plans from the live endpoint: every case a resource of its
    own in one plan, each change classified alone."""
    assert MIRROR is not None and TERRAFORM is not None
    plans = OfflineEndpointPlans(tmp_path_factory.mktemp("classify"), TERRAFORM, MIRROR)
    live = {"arn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/demo-chat", "deployment_config": [],
            "id": "demo-chat", "tags_all": LIVE["tags"], **LIVE}
    plan_file = plans.plan_many(CASES, dict.fromkeys(CASES, live))
    shown = TerraformRunner(TERRAFORM, plans.work, env=plans.env).show_plan(plan_file)
    assert {c["name"] for c in shown["resource_changes"]} == set(CASES)
    classified = {}
    for change in shown["resource_changes"]:
        [classified[change["name"]]] = classify_plan({**shown, "resource_changes": [change]},
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
