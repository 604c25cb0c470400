"""An emulator target keeps the Terraform state in the emulator too.

With `endpoint_url` set, every resource goes to an emulator. An S3 state backend that still points at real
Amazon S3 would write the emulator's state into a real bucket (or fail to reach it), mixing the two worlds:
a later run against the real account would read a state full of resources that never existed there. The
S3 backend must then name the emulator's S3 endpoint too (`state.endpoint_url`); local state is fine.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import FastscaleConfig, S3State
from fastscale.infra.rules import Hit, Severity, rule

EXAMPLE = """\
project: demo
region: us-east-1
endpoint_url: http://localhost:4566
state: {backend: s3, bucket: team-terraform-state, key: demo/terraform.tfstate}
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""


@rule("FS070", "emulator-state-outside-emulator", Severity.ERROR,
      "An emulator target with an S3 state backend that still points at real Amazon S3.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    state = config.state
    if config.endpoint_url is None or not isinstance(state, S3State) or state.endpoint_url is not None:
        return
    yield Hit(
        "state.endpoint_url",
        f"resources go to the emulator at {config.endpoint_url}, but the S3 state backend would use real "
        f"Amazon S3 (bucket '{state.bucket}'): the emulator's state would land in a real bucket",
        f"point the backend at the emulator too (state.endpoint_url: {config.endpoint_url}), or use "
        "local state (state: {backend: local}) while testing against the emulator",
    )
