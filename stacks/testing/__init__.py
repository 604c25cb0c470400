"""Synth-and-snapshot tests for fastscale stacks: the public testing API (docs/testing.md).

    from fastscale.stacks.testing import Match, synth

    template = synth("fastscale.yaml")
    template.has_resource_properties("aws_sagemaker_endpoint_configuration", {
        "production_variants": Match.array_with([{"instance_type": "ml.g6.2xlarge"}]),
    })
    assert template.normalized() == snapshot.use_extension(StackSnapshotExtension)  # syrupy

Neither importing this package nor `synth` starts the CDK engine: `synth` writes the engine's bytes from Python.
``StackSnapshotExtension`` (:mod:`.snapshot`) needs syrupy and is loaded on first use.
"""

from __future__ import annotations

from typing import Any

from fastscale.infra.project.stack_snapshot import ENGINE_VERSION, normalize, snapshot_json, stack_changes
from fastscale.stacks.testing.match import MISSING, Match, Matcher, Mismatch, assert_matches, mismatches
from fastscale.stacks.testing.template import ConfigInvalid, Template, synth
from fastscale.stacks.testing.terraform import (
    TerraformUnavailable,
    ValidateReport,
    assert_valid_terraform,
    find_aws_mirror,
    validate,
)

__all__ = [
    "ENGINE_VERSION",
    "MISSING",
    "ConfigInvalid",
    "Match",
    "Matcher",
    "Mismatch",
    "Template",
    "TerraformUnavailable",
    "StackSnapshotExtension",
    "ValidateReport",
    "assert_matches",
    "assert_valid_terraform",
    "find_aws_mirror",
    "mismatches",
    "normalize",
    "snapshot_json",
    "stack_changes",
    "synth",
    "validate",
]


def __getattr__(name: str) -> Any:
    if name == "StackSnapshotExtension":  # syrupy is a test dependency: imported only when asked for
        from fastscale.stacks.testing.snapshot import StackSnapshotExtension  # lazy: syrupy, a test dependency

        return StackSnapshotExtension
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
