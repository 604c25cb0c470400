"""The thin typed resource layer: frozen dataclasses of Terraform attributes, rendered to Terraform JSON.

Field names are the provider's own attribute names, so the synthesized JSON can be checked directly
against the provider schemas (tests/contract). Nested blocks are dataclasses too; lists of blocks are lists.
`None` means "not set" and is left out of the JSON. The props dataclasses are generated from those schemas
(`stacks.resources.generated`, written by scripts/gen_resource_props.py); the resource classes beside them
(`stacks.resources.sagemaker`, `awscc`, `autoscaling`, `cloudwatch`, `iam`, `builtin`) say which Terraform
type each is and what it means for an update.

The layer is plain Python: it imports neither jsii nor the engine. A stack's content (`StackContent`: its
resources, data sources, outputs, providers, backend and stack-level settings) is recorded here and rendered
here, into the Terraform JSON the engine would write, in one of two ways:

- `render_document` / `stable_json`: the whole `cdk.tf.json`, byte for byte as the engine writes it
  (json-stable-stringify's layout), without the engine: what `fastscale synth` and `stacks.testing.synth` use;
- `stacks.engine_stack.ResourceStack`: a real `TerraformStack` of the engine (what `cdktf synth`, a user's
  `App` and the engine's `Testing.synth` use) whose providers and backend are real engine constructs, and whose
  public `to_terraform` adds the resources, data sources and outputs rendered here to the engine's document.

tests/stacks/test_engine_parity.py checks that both give the same bytes for every example, on either engine.

This module is the layer's public face: every name below is importable from here. Each part lives in a module
short enough to read whole:

- `stacks.resources.tokens` — literals and references: `Ref`, `Interpolated`, `tf_format`, `json_text`,
  `escape_template`, `render` (every plain `str` is a literal, escaped for Terraform's template syntax), and
  `engine_literal` / `engine_verbatim` for what the engine renders itself;
- `stacks.resources.elements` — the model: `Resource`, `DataSource`, `Output`, `Group`, `Lifecycle`,
  `StackContent`, `ProviderBlock`, logical ids, `to_terraform` (props to JSON values) and `apply_override`;
- `stacks.resources.document` — `render_document`, the stack's whole JSON document, and `deep_merge`;
- `stacks.resources.stable_json` — `stable_json`, the engine's JSON text.
"""

from __future__ import annotations

from fastscale.stacks.resources.document import deep_merge, render_document
from fastscale.stacks.resources.elements import (
    D,
    DataSource,
    Group,
    Lifecycle,
    Output,
    OverrideError,
    P,
    ProviderBlock,
    Resource,
    Scope,
    StackContent,
    apply_override,
    logical_id,
    resource_stack,
    to_terraform,
)
from fastscale.stacks.resources.stable_json import stable_json
from fastscale.stacks.resources.tokens import (
    ENGINE_TOKEN,
    EngineTokenError,
    Interpolated,
    Ref,
    engine_literal,
    engine_verbatim,
    escape_template,
    json_text,
    render,
    tf_format,
)

__all__ = [
    "D",
    "ENGINE_TOKEN",
    "DataSource",
    "EngineTokenError",
    "Group",
    "Interpolated",
    "Lifecycle",
    "Output",
    "OverrideError",
    "P",
    "ProviderBlock",
    "Ref",
    "Resource",
    "Scope",
    "StackContent",
    "apply_override",
    "deep_merge",
    "engine_literal",
    "engine_verbatim",
    "escape_template",
    "json_text",
    "logical_id",
    "render",
    "render_document",
    "resource_stack",
    "stable_json",
    "tf_format",
    "to_terraform",
]
