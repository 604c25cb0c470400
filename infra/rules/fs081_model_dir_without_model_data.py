"""An environment value that points the container at `/opt/ml/model` needs `model_data`.

SageMaker copies a model's `model_data` from S3 into `/opt/ml/model` before the container starts; without
`model_data` the directory is empty. A container told to load its weights from there (`HF_MODEL_ID:
/opt/ml/model`, `OPTION_MODEL_ID: /opt/ml/model/...`) then starts with no weights and fails its health
check, many minutes into a deploy. Checked for every workload and for each fallback pool's override, with
the override's unset keys inherited (the pool runs the workload's `model_data` unless it sets its own).

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/dg/large-model-inference-uncompressed.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_S3ModelDataSource.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.aws_facts import MODEL_DIR
from fastscale.infra.config import FastscaleConfig, InferenceComponentSpec, ModelOverride
from fastscale.infra.model import capacity
from fastscale.infra.rules import Hit, Severity, rule
from fastscale.infra.rules._common import Workload, endpoints, key_path

EXAMPLE = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      environment:
        HF_MODEL_ID: /opt/ml/model
"""


def points_at_model_dir(value: str) -> bool:
    v = value.strip().rstrip("/")
    return v == MODEL_DIR or v.startswith(f"{MODEL_DIR}/")


def _environment_path(ep_path: str, sub: str, pool: capacity.Pool, workload: Workload) -> str | None:
    """Where the environment a pool runs is written: the workload's own on the endpoint's instance type, an
    override's on a fallback type; None when a fallback inherits it (it is reported on the workload)."""
    if pool.fallback is None:
        return f"{ep_path}.{sub}.environment"
    if isinstance(workload, InferenceComponentSpec):
        override: ModelOverride | None = capacity.component_override(pool, workload)
        where = key_path(f"{ep_path}.{pool.path}.components", workload.name)
    else:
        override, where = pool.fallback.model, f"{ep_path}.{pool.path}.model"
    return f"{where}.environment" if override is not None and override.environment is not None else None


@rule("FS081", "model-dir-without-model-data", Severity.ERROR,
      "An environment value points at /opt/ml/model, but no model_data is copied there.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for ep_path, ep in endpoints(config):
        for pool in capacity.pools(ep):
            for sub, workload in ep.workloads():
                effective = capacity.workload_on(pool, workload)
                if effective.model_data is not None:
                    continue
                env_path = _environment_path(ep_path, sub, pool, workload)
                if env_path is None:
                    continue
                for key, value in effective.environment.items():
                    if points_at_model_dir(value):
                        yield Hit(
                            key_path(env_path, key),
                            f"{key} points at {MODEL_DIR}, where SageMaker copies model_data, but no model_data is "
                            "set: the directory is empty and the container would start with no weights.",
                            "set model_data to the S3 URI of the weights (s3://<bucket>/<prefix>/), or point "
                            f"{key} at a model the container downloads itself (e.g. a Hugging Face model id)",
                        )
