"""The only module that imports the CDK for Terraform engine.

CDKTF was archived upstream; its community continuation (CDK Terrain, package `cdktn`) keeps the same API.
Keeping every engine import here makes switching a one-file change: replace `cdktf` with `cdktn` below.
"""

from __future__ import annotations

import os

# jsii prints a banner on every start under an end-of-life Node; the variable lists the major versions to
# silence. Set before jsii loads.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
os.environ.setdefault("JSII_DEPRECATED", "quiet")

from cdktf import (
    App,
    LocalBackend,
    S3Backend,
    TerraformOutput,
    TerraformProvider,
    TerraformResource,
    TerraformResourceLifecycle,
    TerraformStack,
)
from cdktf import TerraformProviderGeneratorMetadata as GeneratorMetadata
from constructs import Construct

ENGINE_NAME = "cdktf"

__all__ = [
    "App",
    "Construct",
    "ENGINE_NAME",
    "GeneratorMetadata",
    "LocalBackend",
    "S3Backend",
    "TerraformOutput",
    "TerraformProvider",
    "TerraformResource",
    "TerraformResourceLifecycle",
    "TerraformStack",
]
