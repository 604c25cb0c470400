"""Model download and startup health-check timeouts must be between 60 and 3600 seconds.

`model_download_timeout` and `startup_health_check_timeout` become ModelDataDownloadTimeoutInSeconds and
ContainerStartupHealthCheckTimeoutInSeconds (on the production variant, or in an inference component's
StartupParameters). The API accepts 60..3600 for both, at the endpoint level and for each model or component.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_InferenceComponentStartupParameters.html.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fastscale.infra.config import FastscaleConfig
from fastscale.infra.rules import Severity
from fastscale.infra.rules._bounds import Bound, Cases, bounded_rule
from fastscale.infra.rules._common import endpoints

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model_download_timeout: 7200
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
"""

#: The EXAMPLE at and past each limit, for both timeouts (tests/rules/test_bounded_rules.py).
CASES = (
    Cases("model_download_timeout: 7200", "model_download_timeout: {}", passing=(60, 61, 3599, 3600),
          failing={59: "set model_download_timeout: 60", 3601: "set model_download_timeout: 3600",
                   0: "set model_download_timeout: 60"}),
    Cases("model_download_timeout: 7200", "startup_health_check_timeout: {}", passing=(60, 3600),
          failing={59: "set startup_health_check_timeout: 60", 3601: "set startup_health_check_timeout: 3600"}),
)

TIMEOUT_MIN, TIMEOUT_MAX = 60, 3600


def _holders(config: FastscaleConfig) -> Iterator[tuple[str, Any]]:
    """Each endpoint (its defaults for the models), then each of its models or components."""
    for path, ep in endpoints(config):
        yield path, ep
        for sub, workload in ep.workloads():
            yield f"{path}.{sub}", workload


check = bounded_rule(
    "FS020", "timeout-out-of-range", Severity.ERROR, "A model download or startup health-check timeout is outside 60-3600 s.",
    module=__name__,
    holders=_holders,
    bounds=[
        Bound("model_download_timeout", "ModelDataDownloadTimeoutInSeconds", TIMEOUT_MIN, TIMEOUT_MAX,
              "the deploy would fail", unit="s"),
        Bound("startup_health_check_timeout", "ContainerStartupHealthCheckTimeoutInSeconds", TIMEOUT_MIN, TIMEOUT_MAX,
              "the deploy would fail", unit="s"),
    ],
)
