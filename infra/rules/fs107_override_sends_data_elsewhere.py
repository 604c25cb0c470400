"""An override that sends the endpoint's data to a bucket the config does not otherwise use, or encrypts it with
a KMS key of another account, says so.

Overrides reach provider attributes fastscale has no setting for; a few of them make SageMaker write the
endpoint's data somewhere, and a pull request that adds one changes where the traffic goes without touching
anything fastscale builds:

- `data_capture_config.destination_s3_uri`: SageMaker copies the requests and responses (the sampled share)
  to that S3 location as JSON Lines (SageMaker developer guide, "Capture data from real-time endpoint");
- `core_dump_config.destination_s3_uri` of a variant or shadow variant: a crashed container's memory dump
  (its model and the requests it held) is written there;
- `async_inference_config.output_config.s3_output_path` / `s3_failure_path`: every asynchronous response or
  error is written there;
- a `kms_key_id` / `kms_key_arn` anywhere in them: what it encrypts (the ML storage volume, the captured data,
  the dumps, the asynchronous output) can be read by whoever that key's policy allows, and the key's owner can
  stop SageMaker from using it.

A destination is flagged when its bucket is not one the config uses elsewhere (its model data, its state
bucket), or when the bucket's name carries an account id (as SageMaker's default buckets do,
`sagemaker-<region>-<account>`) other than the accounts of the config's own ARNs. A KMS key is flagged when
its ARN names an account other than every account of the config's own ARNs (its roles, keys, topics,
secrets); a config without such ARNs, or a key given by id or alias, cannot be judged and is not flagged.
A warning: sending data to another bucket or account may be what the user wants, and this rule only makes it
visible in `validate` and in review.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/model-monitor-data-capture-endpoint.html.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from fastscale.infra.base.artifacts import parse_s3_uri
from fastscale.infra.config import FastscaleConfig, S3State
from fastscale.infra.model import overrides
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import config_strings, key_path

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    execution_role_arn: arn:aws:iam::123456789012:role/sagemaker
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      model_data: s3://demo-models/llm/
    overrides:
      aws_sagemaker_endpoint_configuration:
        data_capture_config:
          enable_capture: true
          initial_sampling_percentage: 100
          destination_s3_uri: s3://collector-bucket/capture
          kms_key_id: arn:aws:kms:us-east-1:210987654321:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d
          capture_options:
            - capture_mode: Input
"""

_ARN_ACCOUNT = re.compile(r"^arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:(\d{12}):")
_KMS_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:(\d{12}):(key|alias)/")
_ACCOUNT_IN_NAME = re.compile(r"(?<!\d)(\d{12})(?!\d)")

#: (the attribute a path ends with, a part it passes through) -> what SageMaker writes to that destination.
_DESTINATIONS: tuple[tuple[str, str, str], ...] = (
    ("destination_s3_uri", "data_capture_config", "copies the requests and responses sent to the endpoint (the sampled share)"),
    ("destination_s3_uri", "core_dump_config", "writes a crashed container's memory dump (its model and the requests it held)"),
    ("s3_output_path", "async_inference_config", "writes every asynchronous inference response"),
    ("s3_failure_path", "async_inference_config", "writes every failed asynchronous request's error"),
)
#: Where a KMS key sits -> what it encrypts.
_KEYS: tuple[tuple[str, str], ...] = (
    ("data_capture_config", "the captured requests and responses"),
    ("core_dump_config", "the memory dumps of crashed containers"),
    ("async_inference_config", "the asynchronous responses and errors"),
    ("", "the endpoint's ML storage volume (the model and whatever the container writes to disk)"),
)


def _leaves(path: str, value: Any) -> Iterator[tuple[str, str]]:
    """(dotted path, text) of every string inside an override's value."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _leaves(f"{path}.{key}", item)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(f"{path}.{i}", item)


def _own(config: FastscaleConfig) -> tuple[set[str], set[str]]:
    """(the accounts of the config's own ARNs, the buckets it uses) outside its overrides."""
    accounts: set[str] = set()
    buckets: set[str] = set()
    for path, _key, text in config_strings(config, lambda t: t.startswith(("arn:", "s3://"))):
        if ".overrides" in path:
            continue
        if m := _ARN_ACCOUNT.match(text):
            accounts.add(m.group(1))
        elif (loc := parse_s3_uri(text)) is not None:
            buckets.add(loc.bucket)
    if isinstance(config.state, S3State):
        buckets.add(config.state.bucket)
    return accounts, buckets


def _bucket_note(bucket: str, accounts: set[str], buckets: set[str]) -> str | None:
    named = [a for a in _ACCOUNT_IN_NAME.findall(bucket) if a not in accounts]
    if named and accounts:
        return (f"whose name carries account {named[0]}, not the account of this config's other ARNs "
                f"({', '.join(sorted(accounts))})")
    if bucket not in buckets:
        return "that this config uses nowhere else (not for its model data, not as its state bucket)"
    return None


@rule("FS107", "override-sends-data-elsewhere", Severity.WARNING,
      "An override sends the endpoint's data to a bucket the config does not otherwise use, or encrypts it with a "
      "KMS key of another account.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    found = [(where, type_, path, leaf, text)
             for where, targets, entry, _ep in overrides.entries(config)
             for type_, paths in entry.items() if type_ in targets  # other types are FS101's
             for path, value in paths.items()
             for leaf, text in _leaves(path, value) if text.startswith(("s3://", "arn:"))]
    if not found:
        return  # the config's own ARNs and buckets are read only when an override may send data elsewhere
    accounts, buckets = _own(config)
    for where, type_, path, leaf, text in found:
        parts = [p for p in leaf.split(".") if not p.isdigit()]
        hit = _destination(parts, text, accounts, buckets) or _key(parts, text, accounts)
        if hit is not None:
            yield Hit(key_path(key_path(f"{where}.overrides", type_), path) + leaf[len(path):], *hit)


def _destination(parts: list[str], text: str, accounts: set[str], buckets: set[str]) -> tuple[str, str] | None:
    loc = parse_s3_uri(text)
    if loc is None:
        return None
    for last, block, what in _DESTINATIONS:
        if parts[-1] == last and block in parts:
            note = _bucket_note(loc.bucket, accounts, buckets)
            if note is None:
                return None
            return (f"SageMaker {what} to {text}, a bucket {note}: whoever can read that bucket reads them.",
                    f"check that s3://{loc.bucket} is yours and meant to hold this data; remove the override otherwise")
    return None


def _key(parts: list[str], text: str, accounts: set[str]) -> tuple[str, str] | None:
    m = _KMS_ARN.match(text)
    if m is None or parts[-1] not in ("kms_key_id", "kms_key_arn") or not accounts or m.group(1) in accounts:
        return None
    what = next(w for block, w in _KEYS if not block or block in parts)
    return (f"KMS key {text} of account {m.group(1)} encrypts {what}, while this config's other ARNs are in account "
            f"{', '.join(sorted(accounts))}: that account's key policy decides who can decrypt them, and it can stop "
            "SageMaker from using the key (then writing them, or the endpoint itself, fails).",
            "use a key of your own account, or check that the other account is meant to hold this key")
