"""Synth-and-snapshot tests for fastscale stacks: the public testing API (docs/testing.md).

    from fastscale.stacks.testing import Match, synth

    template = synth("fastscale.yaml")
    template.has_resource_properties("aws_sagemaker_endpoint_configuration", {
        "production_variants": Match.array_with([{"instance_type": "ml.g6.2xlarge"}]),
    })
    assert template.normalized() == snapshot  # syrupy

Neither importing this package nor `synth` starts the CDK engine: `synth` writes the engine's bytes from Python.
"""

from __future__ import annotations

from fastscale.infra.project.stack_snapshot import ENGINE_VERSION, normalize, snapshot_json
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
    "ValidateReport",
    "assert_matches",
    "assert_valid_terraform",
    "find_aws_mirror",
    "mismatches",
    "normalize",
    "snapshot_json",
    "synth",
    "validate",
]
