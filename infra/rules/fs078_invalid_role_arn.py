"""`execution_role_arn` must name one IAM role: `arn:<partition>:iam::<account>:role/[<path>/]<name>`.

SageMaker assumes exactly the role it is given (`RoleArn`: `arn:aws[a-z-]*:iam::<12 digits>:role/...`,
20-2048 characters, botocore 1.44.8). A wildcard (`arn:aws:iam::*:role/*`) names no role: AWS refuses it,
and a reviewer reading it would take it for a grant. IAM role names are 1-64 letters, digits and
`+=,.@_-`; a path is `/`-separated segments of the same characters. The partition must be the one of the
project's region (`aws`, `aws-cn` for China, `aws-us-gov` for GovCloud): IAM roles do not cross partitions.

AWS sources: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from fastscale.infra.base.regions import partition_of
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import endpoints

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    execution_role_arn: arn:aws:iam::*:role/*
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

ROLE_ARN_RE = re.compile(
    r"arn:(?P<partition>aws[a-z-]*):iam::(?P<account>[0-9]{12}):role/(?P<path>(?:[\w+=,.@-]+/)*)(?P<name>[\w+=,.@-]{1,64})",
    re.ASCII,
)
#: `RoleArn` length bounds and the longest IAM role path.
ARN_MIN_LEN, ARN_MAX_LEN, PATH_MAX_LEN = 20, 2048, 512


def _problem(arn: str, region: str) -> str | None:
    if "*" in arn or "?" in arn:
        return "it has a wildcard (* or ?): SageMaker needs the ARN of one concrete role, not a pattern"
    m = ROLE_ARN_RE.fullmatch(arn)
    if m is None or not ARN_MIN_LEN <= len(arn) <= ARN_MAX_LEN or len(m["path"]) + 1 > PATH_MAX_LEN:
        return "it is not an IAM role ARN (arn:<partition>:iam::<12-digit account>:role/<name>)"
    expected = partition_of(region)
    if m["partition"] != expected:
        return f"the role is in partition {m['partition']}, but region {region} is in {expected}"
    return None


@rule("FS078", "invalid-role-arn", Severity.ERROR, "execution_role_arn is not the ARN of one IAM role in the project's partition.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        if ep.execution_role_arn is None or (problem := _problem(ep.execution_role_arn, config.region)) is None:
            continue
        yield Hit(
            f"{path}.execution_role_arn",
            f"execution_role_arn is not usable: {problem}.",
            f"give the role's ARN, arn:{partition_of(config.region)}:iam::<account>:role/<name> (aws iam get-role "
            "--role-name <name> --query Role.Arn), or remove execution_role_arn and let fastscale create a "
            "least-privilege role",
        )
