"""`cdktf synth`, `cdktf diff` and `cdktf deploy` in a project made by `fastscale init --emulator URL`, through the
project's own Makefile targets, against fastscale's emulator and the real terraform binary with hashicorp/aws
from the offline provider mirror (tests/tf_mirror.py).

The CDK for Terraform CLI is a Node.js program from npm: the test runs it when `cdktf` is on PATH, else
tests/e2e/cdktf_standin.py, which runs the commands that CLI runs (the app, then `terraform init`, `providers lock`
on a first run, `plan` or `apply`) with the environment it is given. The shell the targets run from is a user's
who also works with AWS: a profile this machine does not have, and keys that are not the emulator's. The stack's
provider block carries the emulator's URL and the dummy credentials; the targets clear the shell's AWS variables
(the provider would otherwise look the profile up and fail) and skip `terraform providers lock` (which asks the
public registry, whatever mirror the Terraform CLI configuration names, and so fails offline).

Then another team starts running the stack's model (an endpoint tagged by its own stack) and `fastscale destroy`
takes the stack down: it deletes the stack's endpoint but keeps that model and the role it runs as (a targeted
destroy of the real provider's plan), and the other team's endpoint keeps serving.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.emulator_support import (
    MARKS,
    STEP_TIMEOUT,
    aws,
    fastscale,
    fresh_emulator,
    project_env,
    state_resources,
    summary,
)

pytestmark = [*MARKS, pytest.mark.skipif(shutil.which("make") is None, reason="needs make")]

STANDIN = Path(__file__).with_name("cdktf_standin.py")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def cdktf() -> str:
    """The CDK for Terraform CLI if installed, else the stand-in that runs what it runs."""
    return shutil.which("cdktf") or f"{sys.executable} {STANDIN}"


def test_cdktf_synth_diff_deploy_work_in_an_init_emulator_project(tmp_path):
    with fresh_emulator() as url:
        env = project_env(tmp_path)
        created = fastscale(tmp_path, env, "init", "demo", "--emulator", url)
        assert created.returncode == 0, created.stderr
        demo = tmp_path / "demo"
        shell = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}",  # python3 main.py
                 "AWS_PROFILE": "no-such-profile", "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
                 "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "CI": "1"}

        def make(target: str) -> str:
            done = subprocess.run(["make", "--no-print-directory", target, f"CDKTF={cdktf()}"], cwd=demo, env=shell,
                                  capture_output=True, text=True, timeout=STEP_TIMEOUT)
            output = _ANSI.sub("", done.stdout + done.stderr)
            assert done.returncode == 0, output
            return output

        make("cdktf-synth")
        document = json.loads((demo / "cdktf.out" / "stacks" / "demo" / "cdk.tf.json").read_text())
        [provider] = document["provider"]["aws"]
        assert (provider["access_key"], provider["secret_key"]) == ("testing", "testing")
        assert set(provider["endpoints"][0].values()) == {url}

        # the first run in the project (no lock file yet): the plan it shows, then what it applied
        deployed = make("cdktf-deploy")
        assert re.search(r"Plan: \d+ to add, 0 to change, 0 to destroy", deployed), deployed
        assert re.search(r"Apply complete! Resources: \d+ added, 0 changed, 0 destroyed", deployed), deployed
        assert aws(url, "sagemaker").describe_endpoint(EndpointName="demo-llm")["EndpointStatus"] == "InService"
        # what cdktf deployed is the stack fastscale verifies, and planning it again changes nothing
        status = fastscale(demo, env, "status", "fastscale.yaml", "--json")
        assert status.returncode == 0, status.stdout + status.stderr
        assert summary(status)["ok"] is True
        assert "No changes." in make("cdktf-diff")
        another_team_runs_its_model_and_destroy_keeps_it(demo, env, url)


TEAM_A = [{"Key": "fastscale:stack", "Value": "team-a"}, {"Key": "managed-by", "Value": "fastscale"}]


def another_team_runs_its_model_and_destroy_keeps_it(demo: Path, env: dict[str, str], url: str) -> None:
    sm = aws(url, "sagemaker")
    [b_model] = [m["ModelName"] for m in sm.list_models()["Models"] if m["ModelName"].startswith("demo-")]
    sm.create_endpoint_config(EndpointConfigName="team-a-config-2", Tags=TEAM_A, ProductionVariants=[{
        "VariantName": "AllTraffic", "ModelName": b_model, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge"}])
    sm.create_endpoint(EndpointName="team-a-endpoint-2", EndpointConfigName="team-a-config-2", Tags=TEAM_A)

    destroyed = fastscale(demo, env, "destroy", "fastscale.yaml", "--auto-approve", "--json")
    report = summary(destroyed)
    kept = {k["address"].split(".")[0]: k["reason"] for k in report["kept"]}
    assert kept["aws_sagemaker_model"] == "in use by endpoint team-a-endpoint-2"
    assert "aws_iam_role" in kept and "aws_iam_role_policy" in kept  # the role it runs as, with its permissions
    assert destroyed.returncode == 1  # what is kept is still this stack's, and the proof says it is left
    assert "demo-llm" not in {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    assert sm.describe_endpoint(EndpointName="team-a-endpoint-2")["EndpointStatus"] == "InService"
    assert sm.describe_model(ModelName=b_model)["ModelName"] == b_model
    assert {r["type"] for r in state_resources(demo) if r["mode"] == "managed"} == {
        "aws_sagemaker_model", "aws_iam_role", "aws_iam_role_policy"}
