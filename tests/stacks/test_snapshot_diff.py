"""The stack snapshot's diff: what changed, by resource address and path, JSON held in strings compared as JSON."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml

from fastscale.stacks.testing import stack_changes, synth
from fastscale.stacks.testing.snapshot import StackSnapshotExtension

EXAMPLE = Path(__file__).parents[2] / "examples" / "emulator.yaml"


def _stacks(**endpoint: object) -> tuple[dict, dict]:
    config = yaml.safe_load(EXAMPLE.read_text())
    changed = copy.deepcopy(config)
    changed["endpoints"][0].update(endpoint)
    return synth(config).normalized(), synth(changed).normalized()


def test_an_instance_type_change_is_named_by_resource_and_path():
    before, after = _stacks(instance_type="ml.g4dn.2xlarge")
    [config_id] = before["resource"]["aws_sagemaker_endpoint_configuration"]
    [dashboard_id] = before["resource"]["aws_cloudwatch_dashboard"]
    lines = stack_changes(before, after)
    assert (f'aws_sagemaker_endpoint_configuration.{config_id} production_variants[0].instance_type: '
            '"ml.g4dn.xlarge" -> "ml.g4dn.2xlarge"') in lines
    [dashboard] = [line for line in lines if line.startswith(f"aws_cloudwatch_dashboard.{dashboard_id} ")]
    assert dashboard.startswith(f"aws_cloudwatch_dashboard.{dashboard_id} dashboard_body<json>.widgets[")
    assert '\\"' not in dashboard and len(dashboard) < 200  # the widget's title, not the escaped body


def test_resources_added_and_removed_and_other_sections():
    before = {"resource": {"aws_iam_role": {"role": {"name": "a"}}, "aws_sagemaker_model": {"m": {"name": "m"}}},
              "data": {"aws_caller_identity": {"current": {}}},
              "terraform": {"required_providers": {"aws": {"version": "~> 6.25"}}}}
    after = {"resource": {"aws_iam_role": {"role": {"name": "a"}, "other": {"name": "b"}}},
             "data": {"aws_caller_identity": {"current": {"x": 1}}},
             "terraform": {"required_providers": {"aws": {"version": "~> 6.30"}}}}
    assert stack_changes(before, after) == [
        "data.aws_caller_identity.current x: (absent) -> 1",
        "+ aws_iam_role.other (not in the snapshot)",
        "- aws_sagemaker_model.m (in the snapshot, no longer in the stack)",
        'terraform.required_providers.aws.version: "~> 6.25" -> "~> 6.30"',
    ]
    assert stack_changes(before, copy.deepcopy(before)) == []


def test_the_syrupy_extension_shows_those_lines_and_falls_back_for_other_data():
    before, after = _stacks(instance_type="ml.g4dn.2xlarge")
    extension = StackSnapshotExtension()
    shown = extension.diff_snapshots(extension.serialize(after), extension.serialize(before)).splitlines()
    assert shown[0] == f"{len(stack_changes(before, after))} change(s) from the snapshot to the synthesized stack (snapshot -> stack):"
    assert shown[1:] == stack_changes(before, after)
    assert json.loads(extension.serialize(after)) == after  # stored as syrupy's JSON extension stores it
    plain = extension.diff_snapshots("not json", "still not")
    assert "change(s) from the snapshot" not in plain
