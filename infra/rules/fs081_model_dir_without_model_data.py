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
from fastscale.infra.model.resolved import ResolvedEndpoint, ResolvedPool, ResolvedStack, ResolvedWorkload
from fastscale.infra.rules import Hit, Severity, stack_rule
from fastscale.infra.rules._common import key_path

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


def _environment_path(ep: ResolvedEndpoint, pool: ResolvedPool, on_pool: ResolvedWorkload) -> str | None:
    """Where the environment a pool runs is written: the workload's own on the endpoint's instance type, an
    override's on a fallback type; None when a fallback inherits it (it is reported on the workload)."""
    if pool.index == 0:
        return f"{ep.path}.{on_pool.path}.environment"
    if "environment" not in on_pool.pool_overrides:
        return None
    if on_pool.is_component:
        return f"{key_path(f'{ep.path}.{pool.path}.components', on_pool.key)}.environment"
    return f"{ep.path}.{pool.path}.model.environment"


@stack_rule("FS081", "model-dir-without-model-data", Severity.ERROR,
            "An environment value points at /opt/ml/model, but no model_data is copied there.")
def check(stack: ResolvedStack) -> Iterator[Hit]:
    for ep in stack.endpoints:
        for pool in ep.pools:
            for workload in ep.workloads:
                effective = ep.on_pool(workload, pool)
                if effective.model_data is not None:
                    continue
                env_path = _environment_path(ep, pool, effective)
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
