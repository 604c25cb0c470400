"""Model download and startup health-check timeouts must be between 60 and 3600 seconds.

`model_download_timeout` and `startup_health_check_timeout` become ModelDataDownloadTimeoutInSeconds and
ContainerStartupHealthCheckTimeoutInSeconds (on the production variant, or in an inference component's
StartupParameters). The API accepts 60..3600 for both, at the endpoint level and for each model or component.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.config import EndpointSpec, FastscaleConfig, InferenceComponentSpec, ModelSpec
from fastscale.infra.rules import Hit, Severity, rule
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

TIMEOUT_MIN, TIMEOUT_MAX = 60, 3600
_KEYS = {
    "model_download_timeout": "ModelDataDownloadTimeoutInSeconds",
    "startup_health_check_timeout": "ContainerStartupHealthCheckTimeoutInSeconds",
}


def _check(path: str, holder: EndpointSpec | ModelSpec | InferenceComponentSpec) -> Iterator[Hit]:
    for key, api_name in _KEYS.items():
        value = getattr(holder, key)
        if value is None or TIMEOUT_MIN <= value <= TIMEOUT_MAX:
            continue
        closest = min(max(value, TIMEOUT_MIN), TIMEOUT_MAX)
        yield Hit(
            f"{path}.{key}",
            f"{key} is {value} s: SageMaker accepts {TIMEOUT_MIN} to {TIMEOUT_MAX} s for {api_name}, so the deploy "
            "would fail.",
            f"set {key}: {closest}",
        )


@rule("FS020", "timeout-out-of-range", Severity.ERROR, "A model download or startup health-check timeout is outside 60-3600 s.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, ep in endpoints(config):
        yield from _check(path, ep)
        for sub, workload in ep.workloads():
            yield from _check(f"{path}.{sub}", workload)
