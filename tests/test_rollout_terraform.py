"""Plan classification against plans the real Terraform binary made: a live ``terraform_data`` stack,
changed, planned, and read back with ``terraform show -json`` (see :mod:`tests.rollout_support` for what is
real and the one step that gives the resources their SageMaker types)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastscale.infra.terraform.rollout import ChangeKind, RolloutInputs, classify_plan
from fastscale.infra.terraform.runner import TerraformError, TerraformRunner
from tests.rollout_support import (
    COMPONENT,
    ENDPOINT,
    as_sagemaker,
    live_stack,
    renamed_component_endpoint_stack,
    replaced_endpoint_stack,
    tags_only_stack,
)
from tests.test_terraform_runner import REAL_BINARY, needs_binary

pytestmark = needs_binary


def plan_change(tmp_path: Path, stack) -> dict:
    """Apply version 1 of ``stack``, then plan version 2 into a saved plan and return its JSON."""
    rc = tmp_path / "terraformrc"
    rc.write_text("")
    workdir = tmp_path / "stack"
    workdir.mkdir()
    main = workdir / "main.tf.json"
    main.write_text(json.dumps(stack(1)))
    runner = TerraformRunner(REAL_BINARY, workdir, env={"TF_CLI_CONFIG_FILE": str(rc), "TF_DATA_DIR": str(tmp_path / "data")})
    runner.init().raise_for_status()
    runner.apply(auto_approve=True).raise_for_status()
    main.write_text(json.dumps(stack(2)))
    plan = runner.plan(out=workdir / "change.tfplan")
    assert plan.ok and plan.has_changes
    return runner.show_plan(workdir / "change.tfplan")


def test_every_kind_of_change_in_one_real_plan(tmp_path):
    raw = plan_change(tmp_path, live_stack)
    inputs = {
        "demo-chat": RolloutInputs(units=4, unit="instance", startup_seconds=300.0),
        "demo-chat-ic": RolloutInputs(units=3, unit="copy", startup_seconds=90.0),
        "demo-embed": RolloutInputs(units=2, unit="copy", startup_seconds=100.0),
    }
    found = {c.address: c for c in classify_plan(as_sagemaker(raw), inputs).changes}

    kinds = {address: c.kind for address, c in found.items()}
    assert kinds == {
        "terraform_data.endpoint_config": ChangeKind.REPLACE,
        "terraform_data.endpoint": ChangeKind.BLUE_GREEN,
        "terraform_data.chat": ChangeKind.ROLLING,
        "terraform_data.embed": ChangeKind.BLUE_GREEN,
        "terraform_data.summarize": ChangeKind.DOWNTIME,
        "terraform_data.latency_alarm": ChangeKind.IN_PLACE,
        "terraform_data.renamed": ChangeKind.DOWNTIME,
        "terraform_data.added": ChangeKind.CREATE,
        "terraform_data.retired_alarm": ChangeKind.DELETE,
    }

    config = found["terraform_data.endpoint_config"]
    assert config.actions == ("create", "delete")  # create_before_destroy, as Terraform planned it
    assert config.replace_paths == ("production_variants",)

    endpoint = found["terraform_data.endpoint"]
    assert endpoint.actions == ("update",) and "endpoint_config_name" in endpoint.changed  # unknown until apply
    assert endpoint.strategy.traffic == "CANARY" and endpoint.strategy.wait_seconds == 600
    assert endpoint.strategy.alarms == ("demo-chat-5xx-errors", "demo-chat-model-latency")
    # 300 s for the new fleet, then a bake after the canary step and after the rest: 300 + 2 × 600.
    assert endpoint.duration.seconds == 1500 and endpoint.duration.steps == 2

    chat = found["terraform_data.chat"]
    assert chat.changed == ("specification",) and chat.strategy.alarms == ("demo-chat-model-latency",)
    assert chat.strategy.step.value == 1 and chat.strategy.wait_seconds == 120
    assert chat.duration.seconds == 3 * (90 + 120)  # batches of one copy, looked up by the component's name

    embed = found["terraform_data.embed"]
    assert not embed.strategy.configured and embed.strategy.traffic == "ALL_AT_ONCE"
    assert embed.duration.seconds == 100 and "default" in embed.reason

    moved = found["terraform_data.summarize"]
    assert moved.actions == ("delete", "create") and moved.replace_paths == ("endpoint_name",)
    assert "endpoint_name cannot change in place" in moved.reason and "deleted, then created" in moved.reason
    assert "new name" in moved.avoid

    renamed = found["terraform_data.renamed"]
    assert renamed.replace_paths == ("name",) and renamed.name == "demo-batch-v2"
    assert "keep the old name" in renamed.avoid

    assert found["terraform_data.latency_alarm"].changed == ("threshold",)
    summary = classify_plan(as_sagemaker(raw), inputs).summary()
    assert sorted(summary["downtime"]) == ["terraform_data.renamed", "terraform_data.summarize"]
    assert summary["longest_rollout_seconds"] == 1500  # the endpoint's canary
    assert summary["counts"]["replace_with_downtime"] == 2 and summary["counts"]["create"] == 1


def test_a_tag_change_on_a_live_endpoint_is_in_place(tmp_path):
    raw = plan_change(tmp_path, tags_only_stack)
    [change] = classify_plan(as_sagemaker(raw)).changes
    assert (change.kind, change.changed, change.actions) == (ChangeKind.IN_PLACE, ("tags",), ("update",))


def test_renaming_a_live_endpoint_is_downtime_with_the_path_terraform_gave(tmp_path):
    raw = plan_change(tmp_path, replaced_endpoint_stack)
    # Unchanged by the rewrite: Terraform itself decided to delete and then create.
    [resource] = raw["resource_changes"]
    assert resource["change"]["actions"] == ["delete", "create"]
    assert resource["change"]["replace_paths"] == [["triggers_replace"]]
    assert resource["action_reason"] == "replace_because_cannot_update"

    [change] = classify_plan(as_sagemaker(raw)).changes
    assert change.kind is ChangeKind.DOWNTIME and change.replace_paths == ("name",)


def test_without_the_sagemaker_types_nothing_is_downtime(tmp_path):
    """The classification is by resource type: a plain terraform_data replacement serves no traffic."""
    raw = plan_change(tmp_path, replaced_endpoint_stack)
    [change] = classify_plan(raw).changes
    assert change.kind is ChangeKind.REPLACE and change.replace_paths == ("triggers_replace",)


def test_show_plan_of_a_file_that_is_not_a_plan_fails_clearly(tmp_path):
    workdir = tmp_path / "stack"
    workdir.mkdir()
    (workdir / "main.tf.json").write_text(json.dumps(tags_only_stack(1)))
    (workdir / "bogus.tfplan").write_text("not a plan")
    runner = TerraformRunner(REAL_BINARY, workdir, env={"TF_CLI_CONFIG_FILE": str(tmp_path / "none")})
    with pytest.raises(TerraformError, match="terraform show -json` failed"):
        runner.show_plan(workdir / "bogus.tfplan")


def test_renaming_an_endpoint_replaces_its_components_too(tmp_path):
    """The component would be updated in place without its trigger (awscc has no replace-on-change for
    endpoint_name), and UpdateInferenceComponent cannot move it: the plan replaces it, and says why."""
    raw = plan_change(tmp_path, renamed_component_endpoint_stack)
    actions = {rc["name"]: (rc["change"]["actions"], rc.get("action_reason")) for rc in raw["resource_changes"]}
    assert actions["chat"] == (["delete", "create"], "replace_by_triggers")
    assert actions["shared"][0] == ["delete", "create"]

    found = {c.address: c for c in classify_plan(as_sagemaker(raw, {"shared": ENDPOINT, "chat": COMPONENT})).changes}
    chat = found["terraform_data.chat"]
    assert chat.kind is ChangeKind.DOWNTIME and chat.name == "demo-chat"
    assert chat.reason.startswith("its endpoint is renamed, and a component cannot move to another endpoint")
    assert "cannot move to another endpoint or variant in place" in chat.avoid
    assert found["terraform_data.shared"].kind is ChangeKind.DOWNTIME
    assert found["terraform_data.shared_name"].kind is ChangeKind.IN_PLACE  # the trigger itself
    assert sorted(classify_plan(as_sagemaker(raw, {"shared": ENDPOINT, "chat": COMPONENT})).summary()["downtime"]) == [
        "terraform_data.chat", "terraform_data.shared"]


def test_without_the_trigger_the_component_would_only_be_updated(tmp_path):
    """What the trigger prevents: Terraform would send the new endpoint name as an in-place update."""

    def untriggered(version: int = 1) -> dict:
        stack = renamed_component_endpoint_stack(version)
        del stack["resource"]["terraform_data"]["chat"]["lifecycle"]
        return stack

    raw = plan_change(tmp_path, untriggered)
    [chat] = [rc for rc in raw["resource_changes"] if rc["name"] == "chat"]
    assert chat["change"]["actions"] == ["update"]
