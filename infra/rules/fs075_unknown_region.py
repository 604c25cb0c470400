"""The region must be a real AWS region where SageMaker AI runs, in a partition fastscale builds for.

A misspelt region (`us-eats-1`) is only refused by AWS when Terraform first calls it, minutes into a
deploy; `synth` and `estimate` would happily work with it, and other rules would quote hosts and ARNs in a
region that does not exist. The regions come from the endpoint data botocore ships (`endpoints.json`:
every region of the commercial `aws` partition, opt-in regions included, of China `aws-cn` and of
GovCloud `aws-us-gov` where the SageMaker API has an endpoint), so a botocore upgrade brings new regions.
The hint lists the closest real regions. A region of another partition botocore knows (the isolated
`aws-iso*` partitions, `aws-eusc`) is refused with that reason: fastscale's ARNs, ECR hosts and IAM
policies are written for the three partitions above only.

An AWS emulator (`endpoint_url`) is held to the same list: moto and LocalStack serve the regions botocore
knows (LocalStack refuses others unless told to allow them).

`state.region`, the S3 state bucket's region, must be a region of a known partition (S3 runs in all).
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import regions
from fastscale.infra.config import FastscaleConfig, S3State
from fastscale.infra.rules import Hit, Severity, rule

EXAMPLE = """\
project: demo
region: us-eats-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


def _did_you_mean(region: str, candidates: list[str] | None = None) -> str:
    close = regions.suggest(region, candidates)
    if close:
        return f"did you mean {' or '.join(close)}?"
    return "use an AWS region name such as us-east-1 (`aws account list-regions` lists yours)"


def _problem(region: str) -> tuple[str, str] | None:
    """(message, hint) when ``region`` is not a SageMaker region of a supported partition, else None."""
    if regions.is_sagemaker_region(region):
        return None
    part = next((p for p in regions.partitions() if region in p.regions), None)
    if part is not None and not part.supported:
        return (f"'{region}' is a region of the {part.id} partition ({part.name}): fastscale writes ARNs, ECR hosts "
                f"and IAM policies for the {', '.join(regions.SUPPORTED_PARTITIONS)} partitions only.",
                "deploy to a region of a supported partition")
    if part is not None:
        return (f"SageMaker AI is not offered in '{region}' (botocore's endpoint data lists no SageMaker API there).",
                _did_you_mean(region))
    return (f"'{region}' is not an AWS region: every AWS call of the deploy would fail.", _did_you_mean(region))


@rule("FS075", "unknown-region", Severity.ERROR, "The region is not an AWS region where SageMaker AI runs.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    problem = _problem(config.region)
    if problem is not None:
        yield Hit("region", *problem)
    state = config.state
    if isinstance(state, S3State) and state.region is not None and not regions.is_region(state.region):
        every = sorted({r for p in regions.partitions() if p.supported for r in p.regions})
        yield Hit("state.region",
                  f"'{state.region}' is not an AWS region: Terraform could not reach the state bucket.",
                  _did_you_mean(state.region, every))
