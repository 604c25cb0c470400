"""`plan`, `deploy` and `validate --check-aws` refuse a config over the account's instance quota."""

from __future__ import annotations

import json

import yaml

from tests.aws.quota_stubs import quota
from tests.cli.support import needs_binary, run, state_addresses


@needs_binary
def test_plan_over_quota_exits_2_before_synthesizing(project, synth, quotas):
    quotas.pages = [[quota("ml.g6.2xlarge", 2)]]  # the config's endpoint may grow to 4
    result = run("plan", "fastscale.yaml")
    assert result.exit_code == 2, result.output
    assert "FS902" in result.stderr and "up to 4 ml.g6.2xlarge instances" in result.stderr
    assert "nothing was synthesized, planned or applied" in result.stderr
    assert synth.calls == [] and quotas.asked == 1

    as_json = run("plan", "fastscale.yaml", "--json")
    summary = json.loads(as_json.stdout)
    assert as_json.exit_code == 2 and summary["ok"] is False
    assert [f["code"] for f in summary["quota_findings"]] == ["FS902"]


@needs_binary
def test_deploy_over_quota_applies_nothing(project, synth, quotas, aws):
    quotas.pages = [[quota("ml.g6.2xlarge", 1)]]
    result = run("deploy", "fastscale.yaml", "--auto-approve")
    assert result.exit_code == 2
    assert synth.calls == [] and state_addresses(project) == set() and aws["calls"] == []


@needs_binary
def test_plan_goes_on_with_a_warning_for_a_fallback_without_quota(project, synth, quotas, aws):
    config = yaml.safe_load((project / "fastscale.yaml").read_text())
    config["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge"}]}
    (project / "fastscale.yaml").write_text(yaml.safe_dump(config))
    quotas.pages = [[quota("ml.g6.2xlarge", 4), quota("ml.g5.2xlarge", 0)]]
    result = run("plan", "fastscale.yaml")
    assert result.exit_code == 0, result.output
    assert "could never fall back" in result.stderr
    assert synth.calls


def test_validate_check_aws_reports_the_quota(tmp_path, runtime, quotas):
    config = {
        "project": "demo", "region": "us-east-1",
        "endpoints": [{"name": "chat", "instance_type": "ml.g6.2xlarge", "instances": {"initial": 1, "min": 1, "max": 3},
                       "model": {"image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm@sha256:" + "a" * 64}}],
    }
    path = tmp_path / "fastscale.yaml"
    path.write_text(yaml.safe_dump(config))

    def clients_for(cfg):
        from tests.aws.factories import stubbed

        ecr, ecr_stub = stubbed("ecr")
        ecr_stub.add_response("describe_images", {"imageDetails": []})
        return {"ecr": ecr}

    runtime.use(aws_clients=clients_for)  # the image check; the quota check asks the `quotas` fixture's client
    quotas.pages = [[quota("ml.g6.2xlarge", 2)]]
    over = run("validate", str(path), "--check-aws", "--json")
    assert over.exit_code == 2
    (finding,) = json.loads(over.stdout)["files"][0]["findings"]
    assert (finding["code"], finding["path"]) == ("FS902", "endpoints[0].instances.max")
    quotas.pages = [[quota("ml.g6.2xlarge", 3)]]
    assert run("validate", str(path), "--check-aws").exit_code == 0
    assert quotas.asked == 2
