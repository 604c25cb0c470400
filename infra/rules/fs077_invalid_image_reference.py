"""`image` must be a container image reference: `registry/repository[:tag][@digest]`.

SageMaker pulls the image it is given (`ContainerImage`: up to 255 characters, no whitespace) and accepts
`registry/repository[:tag]` and `registry/repository[@digest]` (API reference, ContainerDefinition.Image).
The grammar is the OCI distribution specification's: lower-case path components separated by `.`, `_`,
`__` or `-`, an optional registry host with port, a tag of up to 128 word characters, `.` and `-`, and a
digest `algorithm:hex` (64 hex digits for sha256). A path (`../../etc/passwd`), shell syntax (`;$(id)`) or
an upper-case repository is refused here instead of failing the model's creation during the deploy.
Fallback pools' override images are checked too.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ContainerDefinition.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base import regions
from fastscale.infra.base.artifacts import image_problem
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import artifact_holders

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: ../../etc/passwd;$(id)
"""


@rule("FS077", "invalid-image-reference", Severity.ERROR, "The image is not a container image reference.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, holder in artifact_holders(config):
        if holder.image is None or (problem := image_problem(holder.image)) is None:
            continue
        yield Hit(
            f"{path}.image",
            f"the image is not a container image reference SageMaker can pull: {problem}.",
            "use registry/repository:tag or registry/repository@sha256:<digest>, e.g. "
            f"{regions.ecr_host('123456789012', regions.shown(config.region))}/llm:1.0",
        )
