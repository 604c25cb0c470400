"""The only module that imports the CDK engine: CDK for Terraform (`cdktf`) or CDK Terrain (`cdktn`).

Both expose the same classes; `stacks.engine_choice.select_engine` decides which one is loaded (the
FASTSCALE_ENGINE variable, else what is installed). Everything else in `stacks/` imports from here.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

from fastscale.stacks.engine_choice import node_options, require_node, select_engine

# jsii prints a banner on every start under an end-of-life Node; the variable lists the major versions to
# silence. Set before jsii loads.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
os.environ.setdefault("JSII_DEPRECATED", "quiet")
os.environ["NODE_OPTIONS"] = node_options(os.environ.get("NODE_OPTIONS", ""))

ENGINE = select_engine()
require_node()  # before jsii starts node: a missing or broken node is one clear error, not jsii's traceback

if TYPE_CHECKING:  # both engines have the same API; type-check against one of them
    from cdktf import (
        App,
        ITerraformDependable,
        LocalBackend,
        S3Backend,
        TerraformDataSource,
        TerraformOutput,
        TerraformProvider,
        TerraformResource,
        TerraformResourceLifecycle,
        TerraformStack,
    )
    from cdktf import TerraformProviderGeneratorMetadata as GeneratorMetadata
else:
    _lib = importlib.import_module(ENGINE.module)
    App = _lib.App
    ITerraformDependable = _lib.ITerraformDependable
    LocalBackend = _lib.LocalBackend
    S3Backend = _lib.S3Backend
    TerraformDataSource = _lib.TerraformDataSource
    TerraformOutput = _lib.TerraformOutput
    TerraformProvider = _lib.TerraformProvider
    TerraformResource = _lib.TerraformResource
    TerraformResourceLifecycle = _lib.TerraformResourceLifecycle
    TerraformStack = _lib.TerraformStack
    GeneratorMetadata = _lib.TerraformProviderGeneratorMetadata

from constructs import Construct  # noqa: E402  (after the environment above is set)

__all__ = [
    "ENGINE",
    "App",
    "Construct",
    "GeneratorMetadata",
    "ITerraformDependable",
    "LocalBackend",
    "S3Backend",
    "TerraformDataSource",
    "TerraformOutput",
    "TerraformProvider",
    "TerraformResource",
    "TerraformResourceLifecycle",
    "TerraformStack",
]
