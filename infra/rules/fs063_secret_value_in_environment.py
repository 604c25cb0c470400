"""A value that looks like a credential must not be written anywhere in the config, whatever its name.

Every string of the config is scanned: environment values, tags (keys and values), names, image and model
data URIs, ARNs, state settings, every free-text field. They all end up in plain text in the synthesized
stack and the Terraform state, and most on the AWS resources themselves (tags are visible to anyone who
may list the resources, environment values to anyone who may describe them).

Recognised by shape: Hugging Face tokens (`hf_...`), OpenAI and Anthropic keys (`sk-...`), AWS access key
ids (`AKIA...`, `ASIA...`), GitHub, GitLab and Slack tokens, Google API keys, PEM private keys and JSON Web
Tokens; credentials inside connection strings and URLs (a URL's password, `postgres://admin:<password>@db/app`,
and `Password=`, `Pwd=`, `AccountKey=`, `SharedAccessKey=`, `SharedAccessSignature=` pairs, unless the value
is a placeholder such as `${DB_PASSWORD}` or `<password>`); and any run of 24 or more letters and digits
that mixes upper case, lower case and digits with the entropy of random data (about 4.3 bits per character
or more) and letters that mostly form no word, such as an AWS secret access key. Words, paths, model ids,
versions, UUIDs and hex digests do not count, nor does base64 that decodes to readable text or JSON: what it
decodes to is scanned instead. Identifiers AWS and the SageMaker SDK generate are not secrets and are never
reported by their entropy: the resource part of an ARN (a role CloudFormation named with a random suffix, a
KMS key, a scaling policy), and names built of words and a timestamp (`SageMakerExecutionRole-sdk-tags2-
2026-11-30-09-41-07-512`, `huggingface-pytorch-tgi-inference-2026-11-30-09-41-07-512`); a token format
(`hf_...`, `ghp_...`, `AKIA...`) is found in them all the same.
Environment entries that FS018 reports by their name are left to it, and Secrets Manager / SSM ARNs and
dynamic references are references, not secrets. The message names the kind of secret, never the value.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.config.secrets import is_literal_secret as reported_by_name
from fastscale.infra.config.secrets import is_reference, secret_kind
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import config_strings, environments, key_path

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

_STORED = ("it would be stored in plain text in the Terraform state, the synthesized stack and the SageMaker resource "
           "description.")


def _report(path: str, key: str | None, environment: dict[str, str], tags: dict[str, str], kind: str) -> Hit:
    if key is not None:
        return Hit(path, f"the key '{key}' looks like {kind}: {_STORED}",
                   "rename the key; never put a credential in the config (docs/secrets.md)")
    if path in environment:
        name = environment[path]
        return Hit(path, f"the value of {name} looks like {kind}: {_STORED}",
                   f"revoke it if it was ever committed; store it in AWS Secrets Manager and move {name} to `secrets` "
                   "for the container to read at start (docs/secrets.md)")
    if path in tags:
        return Hit(path, f"the value of the tag '{tags[path]}' looks like {kind}: tags are stored in plain text on "
                   "every resource, visible to anyone who may list them, and in the Terraform state.",
                   "revoke it if it was ever committed and remove it from the tags: a tag never holds a credential")
    return Hit(path, f"{path} looks like {kind}: {_STORED}",
               "revoke it if it was ever committed and remove it from the config; credentials belong in AWS Secrets "
               "Manager, passed to the container through a workload's `secrets` (docs/secrets.md)")


@rule(
    "FS063",
    "secret-value-in-config",
    Severity.ERROR,
    "A config value (environment, tag or any other field) looks like a token, key or password.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    # environment entry path -> variable name; the entries FS018 reports by their name are its own
    environment: dict[str, str] = {}
    by_name: set[str] = set()
    for path, env in environments(config):
        for key, value in env.items():
            environment[key_path(path, key)] = key
            if reported_by_name(key, value):
                by_name.add(key_path(path, key))
    tags = {key_path("tags", name): name for name in config.tags}
    kinds: dict[str, str | None] = {}  # a config repeats its strings: each is judged once

    def kind_of(text: str) -> str | None:
        if text not in kinds:
            kinds[text] = None if is_reference(text) else secret_kind(text)
        return kinds[text]

    for path, mapping_key, text in config_strings(config, lambda text: kind_of(text) is not None):
        if mapping_key is None and path in by_name:
            continue
        yield _report(path, mapping_key, environment, tags, kind_of(text) or "")
