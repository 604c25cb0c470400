"""What hashicorp/aws plans for a live single-model endpoint when its deployment_config changes, offline.

The endpoint's `deployment_config.auto_rollback_configuration` forces a new resource in hashicorp/aws: a
live endpoint that gets rollback alarms (the first deploy with automatic rollback, or a change of
`rollback_alarms`) is replaced, while a change of the update policy alone (the bake time) is an update in
place. docs/updates.md tells users so; this keeps that statement true for the provider on the machine. It
plans the example's synthesized endpoint against a hand-written state with `-refresh=false`, so no AWS
call is made.

Skips, with the reason, where there is no terraform binary or no mirror with hashicorp/aws.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
from typing import Any

import pytest

from fastscale.infra.config import load_config
from tests.conftest import ROOT
from tests.stacks.conftest import synth
from tests.tf_mirror import AWS_PROVIDER, find_aws_mirror, where_looked
from tests.tf_mirror import cli_config as mirror_cli_config

TERRAFORM = shutil.which("terraform")
MIRROR = find_aws_mirror()
pytestmark = [
    pytest.mark.skipif(TERRAFORM is None, reason="needs the terraform binary on PATH"),
    pytest.mark.skipif(MIRROR is None, reason=f"no provider mirror with {AWS_PROVIDER} (looked in {where_looked()})"),
]
ALARM_REF = re.compile(r"^\$\{aws_cloudwatch_metric_alarm\.(?P<id>[^.}]+)\.alarm_name\}$")


def _live_state(body: dict[str, Any], deployment_config: list[dict[str, Any]]) -> dict[str, Any]:
    attributes = {"arn": f"arn:aws:sagemaker:us-east-1:123456789012:endpoint/{body['name']}",
                  "deployment_config": deployment_config, "endpoint_config_name": body["endpoint_config_name"],
                  "id": body["name"], "name": body["name"], "tags": body.get("tags"), "tags_all": body.get("tags") or {}}
    return {"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "00000000-0000-0000-0000-000000000014",
            "outputs": {}, "resources": [{"mode": "managed", "type": "aws_sagemaker_endpoint", "name": "endpoint",
                                          "provider": f'provider["{AWS_PROVIDER}"]',
                                          "instances": [{"schema_version": 0, "attributes": attributes}]}]}


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


@pytest.fixture(scope="module")
def planner(tmp_path_factory):
    """plan(state deployment_config) -> the endpoint's planned change, for the qwen3-8b example's endpoint."""
    assert MIRROR is not None and TERRAFORM is not None
    root = tmp_path_factory.mktemp("rollback-plan")
    doc = synth(load_config(ROOT / "examples" / "qwen3-8b.yaml"), root / "synth").doc
    (body,) = copy.deepcopy(doc["resource"]["aws_sagemaker_endpoint"]).values()
    alarms = doc["resource"]["aws_cloudwatch_metric_alarm"]
    for item in body["deployment_config"]["auto_rollback_configuration"]["alarms"]:
        item["alarm_name"] = alarms[ALARM_REF.match(item["alarm_name"])["id"]]["alarm_name"]  # the literal name
    body["endpoint_config_name"] = "chat-prod-qwen3-20260101000000000000000001"
    body.pop("depends_on", None)
    work = root / "tf"
    work.mkdir()
    main = {"terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": MIRROR[1]}}},
            "provider": {"aws": {"region": "us-east-1", "access_key": "AKIAEXAMPLEEXAMPLE", "secret_key": "example",
                                 "skip_credentials_validation": True, "skip_requesting_account_id": True,
                                 "skip_metadata_api_check": True}},
            "resource": {"aws_sagemaker_endpoint": {"endpoint": body}}}
    (work / "main.tf.json").write_text(json.dumps(main))
    (root / "terraformrc").write_text(mirror_cli_config(MIRROR[0]))
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(root / "terraformrc"), "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"}
    env.pop("TF_PLUGIN_CACHE_DIR", None)
    init = subprocess.run([TERRAFORM, "init", "-input=false", "-no-color"], cwd=work, env=env, capture_output=True,
                          text=True, timeout=300)
    assert init.returncode == 0, init.stdout + init.stderr

    def plan(deployment_config: list[dict[str, Any]]) -> dict[str, Any]:
        (work / "terraform.tfstate").write_text(json.dumps(_live_state(body, deployment_config)))
        run = subprocess.run([TERRAFORM, "plan", "-refresh=false", "-input=false", "-no-color", "-out=plan.bin"],
                             cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout + run.stderr
        shown = subprocess.run([TERRAFORM, "show", "-json", "plan.bin"], cwd=work, env=env, capture_output=True,
                               text=True, timeout=300, check=True)
        (change,) = json.loads(shown.stdout)["resource_changes"]
        return change["change"]

    return plan, body


def test_adding_rollback_alarms_to_a_live_endpoint_replaces_it(planner):
    plan, _ = planner
    change = plan([])  # a live endpoint deployed without a deployment configuration
    assert change["actions"] == ["delete", "create"]
    assert ["deployment_config", 0, "auto_rollback_configuration"] in change["replace_paths"]


def test_a_new_bake_time_with_the_same_alarms_is_an_update_in_place(planner):
    plan, body = planner
    live = _as_state(body["deployment_config"])
    live[0]["blue_green_update_policy"][0]["traffic_routing_configuration"][0]["wait_interval_in_seconds"] = 120
    assert plan(live)["actions"] == ["update"]
    assert plan(_as_state(body["deployment_config"]))["actions"] == ["no-op"]
