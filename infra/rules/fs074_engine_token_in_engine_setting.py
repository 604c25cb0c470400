"""The CDK engine's token syntax cannot be passed in the settings the engine renders itself.

Most config strings reach the synthesized JSON through fastscale's resource layer, after the engine
resolved its own tokens, and arrive escaped and literal whatever they hold (FS073). The Terraform
backend (`state`) and the provider settings (`region`, `endpoint_url`) are rendered by
the CDK engine itself (CDK for Terraform or CDK Terrain), which replaces every `${TfToken[...]}` in a string
by the value of that token, escaped or not. Such a value would be forged or make synthesis fail, so it is
refused here, before anything is synthesized (`engine_literal` in stacks/resources/tokens.py refuses it again).
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import config_strings

EXAMPLE = """\
project: demo
region: us-east-1
state:
  backend: s3
  bucket: demo-tf-state
  key: "state/${TfToken[TOKEN.1]}.tfstate"
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

#: The engine's token syntax, as it starts inside a string (`${TfToken[TOKEN.12]}`).
ENGINE_TOKEN = "TfToken["

#: Config settings the CDK engine renders itself (backend and provider blocks): the path and what is below it.
ENGINE_RENDERED = ("state", "region", "endpoint_url")


def _engine_rendered(path: str) -> bool:
    return any(path == top or path.startswith((f"{top}.", f"{top}[")) for top in ENGINE_RENDERED)


@rule(
    "FS074",
    "engine-token-in-engine-setting",
    Severity.ERROR,
    "A state backend or provider setting contains the CDK engine's token syntax (TfToken[), which the engine would resolve.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _key, _text in config_strings(config, lambda text: ENGINE_TOKEN in text):
        if _engine_rendered(path):
            yield Hit(
                path,
                f"the value contains '{ENGINE_TOKEN}', the CDK engine's token syntax: this setting is rendered by "
                "the engine itself, which would replace the token with another value instead of passing the "
                "text on.",
                f"remove '{ENGINE_TOKEN}' from the value (no backend or provider setting needs it)",
            )
