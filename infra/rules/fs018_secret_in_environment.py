"""Secrets must not be written into a container's `environment`.

Environment values end up in plain text in the Terraform state, the synthesized JSON, the SageMaker
model / inference-component description (readable by anyone with `Describe*` access) and usually in git.

A key is treated as a secret when its name ends with one of TOKEN, SECRET, PASSWORD, PASSWD, API_KEY,
APIKEY, ACCESS_KEY, ACCESS_KEY_ID, SECRET_KEY, PRIVATE_KEY or CREDENTIALS (case-insensitive, `_` or `-`
separated; so `HF_TOKEN`, `HUGGING_FACE_HUB_TOKEN`, `OPENAI_API_KEY`, `AWS_SECRET_ACCESS_KEY`). Names
that only contain such a word elsewhere (`OPTION_MAX_ROLLING_BATCH_PREFILL_TOKENS`, `TOKENIZER`,
`HF_TOKEN_PATH`) are not. Its value is accepted when it is empty or clearly a reference rather than the
secret itself: an AWS Secrets Manager or SSM Parameter Store ARN (`arn:aws:secretsmanager:...`,
`arn:aws:ssm:...`) or a dynamic reference (`{{resolve:...}}`). fastscale passes such a value to the
container unchanged: the container (or its entrypoint) must resolve it with the execution role.
The message never repeats the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import key_path, workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      environment:
        HF_TOKEN: hf_example_not_a_real_token
"""

_SECRET_SUFFIXES = (
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "API_KEY",
    "APIKEY",
    "ACCESS_KEY",
    "ACCESS_KEY_ID",
    "SECRET_KEY",
    "PRIVATE_KEY",
    "CREDENTIALS",
)
_SECRET_KEY_RE = re.compile(r"(?:^|_)(?:" + "|".join(_SECRET_SUFFIXES) + r")$")
_REFERENCE_RE = re.compile(r"^(?:arn:aws[a-z-]*:(?:secretsmanager|ssm):|\{\{resolve:)")


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY_RE.search(key.upper().replace("-", "_")))


def is_reference(value: str) -> bool:
    return not value.strip() or bool(_REFERENCE_RE.match(value.strip()))


@rule("FS018", "secret-in-environment", Severity.ERROR, "A secret-looking environment variable holds a literal value.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _ep, workload in workloads(config):
        for key, value in workload.environment.items():
            if not is_secret_key(key) or is_reference(value):
                continue
            yield Hit(
                key_path(f"{path}.environment", key),
                f"{key} looks like a secret and holds a literal value: it would be stored in plain text in the "
                "Terraform state, the synthesized stack and the SageMaker resource description.",
                f"store it in AWS Secrets Manager and set {key} to the secret's ARN "
                f"(arn:aws:secretsmanager:{config.region}:<account>:secret:<name>) for the container to resolve, "
                "or let the execution role grant access instead of a credential",
            )
