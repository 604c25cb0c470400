"""`fastscale adopt` of an endpoint the SageMaker Python SDK itself made on fastscale's emulator: the SDK's own
request builders (`container_def`, `production_variant`, `Session.create_model`,
`Session.endpoint_from_production_variants`: what `ModelBuilder.deploy()` and 2.x `Model.deploy()` call) create
it, the SDK's resource classes read it back (`Endpoint.get`, `EndpointConfig.get`, `Model.get`), then the same
take-over as the boto3-shaped cases (test_adopt_sdk_shapes_emulator.py), and after the first deploy the SDK's
resource reuse still finds the endpoint by its `sagemaker.amazonaws.com/model-source` tag.

The SDK runs in an interpreter of its own, named by `FASTSCALE_SDK_PYTHON` (`make test-sdk` makes one and runs
this test): the `sagemaker` 3.x distribution needs `rich<15` (sagemaker-core), which fastscale's pinned `rich` excludes, and it
installs about 1 GB (MLflow, pandas, pyarrow, ...) in about 8 minutes; so it is no dependency of fastscale's
development environment or CI, and this test skips, saying why, without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

import pytest

from fastscale.infra.base.credentials import DUMMY_CREDENTIALS
from tests.e2e.emulator_support import MARKS, REGION, aws, fresh_emulator
from tests.e2e.test_adopt_sdk_shapes_emulator import (
    COST,
    DIMENSION,
    IMAGE,
    MODEL_DATA,
    POLICY,
    SOURCE,
    Shape,
    adopt_deploy_scale_destroy,
)

pytestmark = MARKS

SDK_PYTHON = os.environ.get("FASTSCALE_SDK_PYTHON")
ROLE = "arn:aws:iam::123456789012:role/SageMakerExecutionRole-sdk-2026-11-30-09-41-07-512"
SDK_TIMEOUT = 300  # seconds: importing the SDK alone takes 10-20 s here
NAME = "hf-llm-2026-11-30-09-41-07-512"
#: What the SDK sends (CREATE below), and so what `adopt` must find.
MADE = Shape(NAME, {"Image": IMAGE, "Environment": {"HF_MODEL_ID": "/opt/ml/model"}, "ModelDataUrl": MODEL_DATA},
             {"VariantName": "AllTraffic", "ModelName": NAME, "InitialInstanceCount": 1, "InstanceType": "ml.g4dn.xlarge",
              "InitialVariantWeight": 1}, tags_at_create=[COST, SOURCE], target_tags={"cost-center": "cc-4711"})

CREATE = """
import json, sys, boto3
from sagemaker.core.helper.session_helper import Session, container_def, production_variant
from sagemaker.core.resources import Endpoint, EndpointConfig, Model

name, role, image, data = sys.argv[1:5]
boto = boto3.Session()
session = Session(boto_session=boto, sagemaker_client=boto.client("sagemaker"))
tags = [{"Key": "cost-center", "Value": "cc-4711"},
        {"Key": "sagemaker.amazonaws.com/model-source", "Value": data}]
session.create_model(name, role, container_def(image, data, {"HF_MODEL_ID": "/opt/ml/model"}), tags=tags)
session.endpoint_from_production_variants(name=name, production_variants=[production_variant(name, "ml.g4dn.xlarge", 1)],
                                          tags=tags, wait=True)
endpoint = Endpoint.get(endpoint_name=name, session=boto)
[variant] = EndpointConfig.get(endpoint_config_name=name, session=boto).production_variants
model = Model.get(model_name=name, session=boto)
print(json.dumps({"status": endpoint.endpoint_status, "weight": variant.initial_variant_weight,
                  "mode": model.primary_container.mode, "environment": model.primary_container.environment}))
"""

REUSE = """
import json, sys, boto3
from sagemaker.serve.model_reuse import find_existing_sagemaker_endpoint

print(json.dumps({"found": find_existing_sagemaker_endpoint(boto3.client("sagemaker"), sys.argv[1], max_wait=30)}))
"""


def sdk(url: str, script: str, *args: str) -> dict:
    """Run ``script`` in the SDK's interpreter against the emulator at ``url``: the JSON it prints last."""
    assert SDK_PYTHON is not None
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("AWS_")}, **DUMMY_CREDENTIALS,
           "AWS_ENDPOINT_URL": url, "AWS_DEFAULT_REGION": REGION}
    done = subprocess.run([SDK_PYTHON, "-c", textwrap.dedent(script), *args], env=env, capture_output=True, text=True,
                          timeout=SDK_TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    return json.loads(last[last.index("{"):])  # the SDK's waiter prints progress marks without a line break


@pytest.fixture(scope="module")
def sdk_python() -> str:
    if not SDK_PYTHON:
        pytest.skip("the SageMaker Python SDK runs in an interpreter of its own: set FASTSCALE_SDK_PYTHON to a Python "
                    "with `pip install 'sagemaker>=3,<4'` (`make test-sdk` makes one and runs this test)")
    found = subprocess.run([SDK_PYTHON, "-c", "import sagemaker.core.resources, sagemaker.serve.model_reuse"],
                           capture_output=True, text=True, timeout=SDK_TIMEOUT)
    if found.returncode != 0:
        pytest.skip(f"FASTSCALE_SDK_PYTHON={SDK_PYTHON} cannot import the SageMaker Python SDK 3.x: "
                    f"{(found.stderr.strip().splitlines() or ['?'])[-1]}")
    return SDK_PYTHON


@pytest.mark.usefixtures("sdk_python")
def test_an_endpoint_the_sdk_made_is_adopted_and_the_sdk_still_finds_it_by_its_tag(tmp_path):
    with fresh_emulator() as url:
        made = sdk(url, CREATE, NAME, ROLE, IMAGE, MODEL_DATA)
        # The SDK reads back what it made: AWS's defaults are filled (weight, container mode).
        assert made == {"status": "InService", "weight": 1.0, "mode": "SingleModel",
                        "environment": {"HF_MODEL_ID": "/opt/ml/model"}}
        aas = aws(url, "application-autoscaling")
        aas.register_scalable_target(ServiceNamespace="sagemaker", ResourceId=MADE.resource_id,
                                     ScalableDimension=DIMENSION, MinCapacity=1, MaxCapacity=MADE.max_capacity,
                                     Tags=MADE.target_tags)
        aas.put_scaling_policy(
            PolicyName=POLICY, ServiceNamespace="sagemaker", ResourceId=MADE.resource_id, ScalableDimension=DIMENSION,
            PolicyType="TargetTrackingScaling",
            TargetTrackingScalingPolicyConfiguration={"TargetValue": 70.0, "PredefinedMetricSpecification": {
                "PredefinedMetricType": "SageMakerVariantInvocationsPerInstance"}})
        arn = aws(url, "sagemaker").describe_endpoint(EndpointName=NAME)["EndpointArn"]

        def sdk_still_finds_it() -> None:
            assert sdk(url, REUSE, MODEL_DATA) == {"found": arn}

        adopt_deploy_scale_destroy(tmp_path, url, {"sdk": MADE}, after_deploy=sdk_still_finds_it)
