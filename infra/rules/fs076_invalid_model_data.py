"""`model_data` must be an S3 URI SageMaker can load: `s3://<bucket>/<key or prefix/>`.

SageMaker copies a model's data from Amazon S3 into the container (`ModelDataUrl`, `ModelDataSource.S3DataSource`,
an inference component's `ArtifactUrl`); the execution role fastscale creates may read exactly those S3
locations. botocore's `Url` pattern also admits `https://`, but the API reference calls the field "the S3
path where the model artifacts are stored", `S3DataSource` takes an `S3Uri`, and no role fastscale writes
can read a web URL: so only `s3://` is accepted. Anything else (`file:///etc/passwd`, a bare path, an
upper-case bucket) is refused here instead of by AWS during the deploy. Fallback pools' overrides are
checked too.

AWS sources: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ContainerDefinition.html, https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_S3ModelDataSource.html.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastscale.infra.base.artifacts import model_data_problem
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
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      model_data: file:///etc/passwd
"""


@rule("FS076", "invalid-model-data", Severity.ERROR, "model_data is not an s3:// URI SageMaker can load.")
def check(config: FastscaleConfig) -> Iterator[Hit]:
    for path, holder in artifact_holders(config):
        if holder.model_data is None or (problem := model_data_problem(holder.model_data)) is None:
            continue
        yield Hit(
            f"{path}.model_data",
            f"model_data is not an S3 URI SageMaker can load: {problem}.",
            "upload the weights to Amazon S3 in the endpoint's region and set model_data to "
            "s3://<bucket>/<prefix>/ (uncompressed files, ending in '/') or s3://<bucket>/<key>.tar.gz",
        )
