"""The synthesized cdk.tf.json of every example, pinned as a readable JSON snapshot.

A change to any resource shows up as a diff of these files in review; update them deliberately with
`pytest tests/stacks --snapshot-update`.
"""

from __future__ import annotations

import pytest
from syrupy.extensions.json import JSONSnapshotExtension

from fastscale.stacks.testing import ENGINE_VERSION
from tests.conftest import EXAMPLES


@pytest.fixture
def snapshot_json(snapshot):
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.mark.parametrize("example", [p.stem for p in EXAMPLES])
def test_stack_matches_snapshot(examples, example, snapshot_json):
    from fastscale.stacks.engine import ENGINE

    # The engine's version stamp is the one line that differs between CDK for Terraform and CDK Terrain (the
    # suite runs on both; see stacks/engine_choice.py): normalized() puts a placeholder there, as in users'
    # own snapshot tests.
    template = examples[example].template
    assert template.document["//"]["metadata"]["version"] == ENGINE.version  # stamped by the engine that synthesized it
    normalized = template.normalized()
    assert normalized["//"]["metadata"]["version"] == ENGINE_VERSION
    assert normalized == snapshot_json


def test_every_example_is_snapshotted(examples):
    # Guards the parametrization: a new example file gets its snapshot with the next --snapshot-update.
    assert sorted(examples) == sorted(p.stem for p in EXAMPLES) and examples
