"""An image should be pinned to a version tag or a digest.

With `latest` (or no tag, which means `latest`) the image that a new instance runs depends on when it
starts: instances of one endpoint can run different code, a scale-out can pull a broken push, and a
redeploy cannot reproduce what ran before. A digest (`@sha256:...`) pins exactly; any tag other than
`latest` is taken as a deliberate version.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.artifacts import parse_image
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import workloads

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:latest
"""


@rule("FS005", "unpinned-image", Severity.WARNING, "The image has no version tag or digest (or uses `latest`).")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, _ep, workload in workloads(config):
        ref = parse_image(workload.image)
        if ref.pinned:
            continue
        what = "uses the tag 'latest'" if ref.tag else "has no tag, so it means 'latest'"
        base = workload.image.strip()
        if ref.tag:
            base = base[: -(len(ref.tag) + 1)]
        yield Hit(
            f"{path}.image",
            f"the image {what}: each new instance runs whatever was pushed last, so instances of one endpoint can "
            "differ and a scale-out can pick up an untested image.",
            f"pin a version tag or a digest, e.g. {base}:1.4.2 or {base}@sha256:<digest>",
        )
