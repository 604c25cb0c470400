"""A value that looks like a credential must not be written into a container's `environment`, whatever
its name.

Recognised by shape: Hugging Face tokens (`hf_...`), OpenAI and Anthropic keys (`sk-...`), AWS access key
ids (`AKIA...`, `ASIA...`), GitHub, GitLab and Slack tokens, Google API keys, PEM private keys and JSON Web
Tokens; and any run of 24 or more letters and digits that mixes upper case, lower case and digits with
the entropy of random data (about 4.3 bits per character or more), such as an AWS secret access key.
Words, paths, model ids, versions, UUIDs and hex digests do not count. Entries that FS018 reports by
their name are left to it. The message names the kind of secret, never the value.
Every environment the stack writes is checked: each model's and component's, and each override of them
for a fallback instance type (`capacity.fallback[].model` / `.components`).
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import environments, key_path
from fastscale.infra.rules.fs018_secret_in_environment import flags as reported_by_name
from fastscale.infra.secrets import is_reference, secret_kind

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      environment:
        HUB_SETTING: hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789
"""


@rule(
    "FS063",
    "secret-value-in-environment",
    Severity.ERROR,
    "An environment value looks like a token, key or password, whatever the variable's name.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, environment in environments(config):
        for key, value in environment.items():
            if reported_by_name(key, value) or is_reference(value):
                continue
            kind = secret_kind(value)
            if kind is None:
                continue
            yield Hit(
                key_path(path, key),
                f"the value of {key} looks like {kind}: it would be stored in plain text in the Terraform state, "
                "the synthesized stack and the SageMaker resource description.",
                f"revoke it if it was ever committed; store it in AWS Secrets Manager and move {key} to `secrets` "
                "for the container to read at start (docs/secrets.md)",
            )
