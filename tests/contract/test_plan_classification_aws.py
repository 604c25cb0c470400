"""The plan classifier on plans hashicorp/aws itself makes for a live endpoint, offline: nothing rewritten.

A hand-written state holds a live ``aws_sagemaker_endpoint``; each case changes the configuration, plans
with ``-refresh=false`` (no AWS call) into a saved plan, reads it back with the runner's
``terraform show -json`` and classifies it. So the actions and replace paths are the provider's own: a new
endpoint configuration is an update (a rollout), a new name or new rollback alarms replace the endpoint.

Skips, with the reason, where there is no terraform binary or no mirror with hashicorp/aws.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from typing import Any

import pytest

from fastscale.infra.rollout import ChangeKind, RolloutInputs, classify_plan
from fastscale.infra.terraform import TerraformRunner
from tests.tf_mirror import AWS_PROVIDER, cli_config, find_aws_mirror, where_looked

TERRAFORM = shutil.which("terraform")
MIRROR = find_aws_mirror()
pytestmark = [
    pytest.mark.skipif(TERRAFORM is None, reason="needs the terraform binary on PATH"),
    pytest.mark.skipif(MIRROR is None, reason=f"no provider mirror with {AWS_PROVIDER} (looked in {where_looked()})"),
]

LIVE = {"name": "demo-chat", "endpoint_config_name": "demo-chat-1", "tags": {"fastscale:stack": "demo"}}
ALARMS = ("demo-chat-5xx-errors", "demo-chat-model-latency")


def _state() -> dict[str, Any]:
    attributes = {"arn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/demo-chat", "deployment_config": [],
                  "id": "demo-chat", "tags_all": LIVE["tags"], **LIVE}
    return {"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "00000000-0000-0000-0000-00000000abcd",
            "outputs": {}, "resources": [{"mode": "managed", "type": "aws_sagemaker_endpoint", "name": "chat",
                                          "provider": f'provider["{AWS_PROVIDER}"]',
                                          "instances": [{"schema_version": 0, "attributes": attributes}]}]}


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    """plan(endpoint attributes) -> classify_plan of what hashicorp/aws plans from the live endpoint."""
    assert MIRROR is not None and TERRAFORM is not None
    root = tmp_path_factory.mktemp("classify")
    (root / "terraformrc").write_text(cli_config(MIRROR[0]))
    env = {"TF_CLI_CONFIG_FILE": str(root / "terraformrc"), "TF_DATA_DIR": str(root / "data")}
    work = root / "tf"
    work.mkdir()
    provider = {"region": "us-east-1", "access_key": "AKIAEXAMPLEEXAMPLE", "secret_key": "example",
                "skip_credentials_validation": True, "skip_requesting_account_id": True, "skip_metadata_api_check": True}

    def write(body: dict[str, Any]) -> None:
        (work / "main.tf.json").write_text(json.dumps({
            "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": MIRROR[1]}}},
            "provider": {"aws": provider}, "resource": {"aws_sagemaker_endpoint": {"chat": body}}}))

    write(LIVE)
    runner = TerraformRunner(TERRAFORM, work, env=env)
    runner.init().raise_for_status()
    child_env = {**os.environ, **env, "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    child_env.pop("TF_PLUGIN_CACHE_DIR", None)

    def classify(body: dict[str, Any]):
        write(body)
        (work / "terraform.tfstate").write_text(json.dumps(_state()))
        done = subprocess.run([TERRAFORM, "plan", "-refresh=false", "-input=false", "-no-color", "-out=change.tfplan"],
                              cwd=work, env=child_env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        [change] = classify_plan(runner.show_plan(work / "change.tfplan"),
                                 {"demo-chat": RolloutInputs(2, "instance", 300.0)}).changes
        return change

    return classify


def test_a_new_endpoint_configuration_rolls_out_blue_green(plan):
    change = plan({**LIVE, "endpoint_config_name": "demo-chat-2"})
    assert (change.kind, change.actions, change.name) == (ChangeKind.BLUE_GREEN, ("update",), "demo-chat")
    assert not change.strategy.configured and change.duration.seconds == 300


def test_new_rollback_alarms_replace_the_endpoint_with_the_providers_path(plan):
    config = {"blue_green_update_policy": {"traffic_routing_configuration": {"type": "ALL_AT_ONCE", "wait_interval_in_seconds": 360}},
              "auto_rollback_configuration": {"alarms": [{"alarm_name": a} for a in ALARMS]}}
    change = plan({**LIVE, "deployment_config": config})
    assert change.kind is ChangeKind.DOWNTIME and change.actions == ("delete", "create")
    assert "deployment_config[0].auto_rollback_configuration" in change.replace_paths
    assert "deployment.auto_rollback" in change.avoid


def test_a_new_name_replaces_and_new_tags_do_not(plan):
    renamed = plan({**LIVE, "name": "demo-chat-2"})
    assert renamed.kind is ChangeKind.DOWNTIME and renamed.replace_paths == ("name",)
    tagged = plan({**LIVE, "tags": {"fastscale:stack": "demo", "team": "ml"}})
    assert tagged.kind is ChangeKind.IN_PLACE and "tags" in tagged.changed
