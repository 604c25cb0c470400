"""A config string holding Terraform template syntax is sent to AWS literally, not evaluated.

Terraform evaluates `${...}` (interpolation) and `%{...}` (directives) inside every string of the
synthesized JSON, so a config value such as `${file("...")}` would run as an expression at plan time:
read files, call functions, leak the runner's environment into the plan output. fastscale escapes every
config string for Terraform's template syntax where the stack hands it to the engine (`$${`, `%%{`;
stacks/resources/tokens.py), so AWS receives exactly the text written (the state backend block needs no
escaping: Terraform reads it without evaluating anything). This warning says so, for the
case where the user meant Terraform to evaluate it (it will not) or did not mean to write it at all.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import config_strings

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      environment:
        GREETING: "${file(\\"/etc/hostname\\")}"
"""

#: Terraform's interpolation and directive openers.
TEMPLATE_SYNTAX = ("${", "%{")


def template_syntax(text: str) -> list[str]:
    """The Terraform template openers `text` contains (`${`, `%{`), in that order."""
    return [opener for opener in TEMPLATE_SYNTAX if opener in text]


@rule(
    "FS073",
    "template-syntax-sent-literally",
    Severity.WARNING,
    "A config string contains Terraform template syntax (${ or %{); it is sent literally, never evaluated.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _key, text in config_strings(config, lambda text: "{" in text and bool(template_syntax(text))):
        found = template_syntax(text)
        # The value itself is not repeated: it may be an environment value or tag that holds a secret.
        yield Hit(
            path,
            f"the value contains Terraform template syntax ({' and '.join(found)}): AWS receives exactly this "
            "text, since fastscale never lets Terraform evaluate a config value (no functions, references or "
            "variables run).",
            "if the text is meant literally, nothing to do; fastscale never evaluates config values, so set "
            "the value you want AWS to see directly",
        )
