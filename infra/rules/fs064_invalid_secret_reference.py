"""Every entry of a workload's `secrets` must name a Secrets Manager secret the endpoint can read.

- `arn` must be a Secrets Manager secret ARN, `arn:<partition>:secretsmanager:<region>:<account>:secret:<name>`,
  in the project's region and its partition (`aws`; `aws-cn` for cn-* regions; `aws-us-gov` for us-gov-*):
  the execution role's policy names exactly this ARN, and the container reads it in its own region.
- `kms_key_arn`, when given, must be a KMS key ARN (`arn:<partition>:kms:<region>:<account>:key/<id>`; an
  alias does not work in an IAM policy) in the same region and partition.
- The variable must not also be set in `environment`, and `<NAME>_SECRET_ARN` (what the container is
  given) must not clash with an `environment` entry.

With your own `execution_role_arn`, fastscale grants nothing: that role must allow
`secretsmanager:GetSecretValue` on the secret (docs/secrets.md).

AWS sources: https://docs.aws.amazon.com/secretsmanager/latest/userguide/reference_iam-permissions.html, https://docs.aws.amazon.com/kms/latest/developerguide/cmks-in-iam-policies.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.regions import partition_of, shown
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.config.secrets import SECRET_ARN_SUFFIX, Arn, parse_kms_key_arn, parse_secret_arn
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
      secrets:
        HF_TOKEN: arn:aws:secretsmanager:eu-west-1:123456789012:secret:hf-token-AbCdEf
"""


def _placement_problem(arn: Arn, region: str) -> str | None:
    expected = partition_of(region)
    if arn.partition != expected:
        return f"is in partition {arn.partition}, but region {region} is in {expected}"
    if arn.region != region:
        return f"is in region {arn.region}, but the endpoint runs in {region}"
    return None


@rule(
    "FS064",
    "invalid-secret-reference",
    Severity.ERROR,
    "A `secrets` entry is not a Secrets Manager secret ARN in the project's region, or clashes with `environment`.",
)
def check(config: FastscaleConfig) -> Iterator[Hit]:
    region = config.region
    example = f"arn:{partition_of(region)}:secretsmanager:{shown(region)}:<account>:secret:<name>"
    for path, _ep, workload in workloads(config):
        for name, ref in workload.secrets.items():
            where = key_path(f"{path}.secrets", name)
            arn = parse_secret_arn(ref.arn)
            if arn is None:
                yield Hit(f"{where}.arn", f"the secret of {name} is not a Secrets Manager secret ARN.",
                          f"use the secret's ARN, {example} (aws secretsmanager describe-secret --query ARN)")
            elif (problem := _placement_problem(arn, region)) is not None:
                yield Hit(f"{where}.arn", f"the secret of {name} {problem}: the container could not read it.",
                          f"replicate the secret to {region} and use that replica's ARN, {example}")
            if ref.kms_key_arn is not None:
                key = parse_kms_key_arn(ref.kms_key_arn)
                if key is None:
                    yield Hit(f"{where}.kms_key_arn", f"the KMS key of {name}'s secret is not a KMS key ARN.",
                              f"use the key's ARN, arn:{partition_of(region)}:kms:{shown(region)}:<account>:key/<key id> "
                              "(not an alias)")
                elif (problem := _placement_problem(key, region)) is not None:
                    yield Hit(f"{where}.kms_key_arn", f"the KMS key of {name}'s secret {problem}.",
                              "use the key that encrypts the secret in the endpoint's region")
            if name in workload.environment:
                yield Hit(where, f"{name} is set both in `environment` and in `secrets`.",
                          f"remove {name} from `environment`")
            if f"{name}{SECRET_ARN_SUFFIX}" in workload.environment:
                yield Hit(where, f"{name}{SECRET_ARN_SUFFIX}, which fastscale sets for this secret, is also set in "
                          "`environment`.", f"remove {name}{SECRET_ARN_SUFFIX} from `environment`")
