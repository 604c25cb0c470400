"""Synthesis fixtures: each example is synthesized once per session (jsii start-up and synthesis are the
slow part), variants of the small base config once per test that needs them."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fastscale.infra.config import FastscaleConfig, load_config, parse_config
from fastscale.stacks.testing import Template
from tests.conftest import BASE_CONFIG, EXAMPLES

IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


@dataclass
class Synthesized:
    """A synthesized stack read back from disk, with lookups by resource type."""

    config: FastscaleConfig
    result: Any  # stacks.app.SynthResult
    doc: dict[str, Any]

    @property
    def template(self) -> Template:
        """The same document behind the public testing API (fastscale.stacks.testing), which these tests use."""
        return Template(self.doc)

    def of_type(self, rtype: str) -> dict[str, dict[str, Any]]:
        return self.template.resources(rtype)

    def one(self, rtype: str) -> dict[str, Any]:
        return self.template.one(rtype)

    def all_resources(self):
        for rtype, items in self.doc.get("resource", {}).items():
            for rid, body in items.items():
                yield rtype, rid, body

    def policy(self) -> dict[str, Any]:
        return json.loads(self.one("aws_iam_role_policy")["policy"])


def synth(config: FastscaleConfig, outdir: Path) -> Synthesized:
    from fastscale.stacks.app import synthesize

    # The directory holding the output directory stands for the project root, as with `fastscale synth`
    # run next to the default cdktf.out: the JSON then does not depend on where the tests run.
    result = synthesize(config, outdir, project_root=Path(outdir).parent)
    return Synthesized(config, result, json.loads(result.stack_file.read_text()))


@pytest.fixture(scope="session")
def examples(tmp_path_factory) -> dict[str, Synthesized]:
    """Every file in examples/, by file stem, synthesized once."""
    root = tmp_path_factory.mktemp("examples")
    return {path.stem: synth(load_config(path), root / path.stem) for path in EXAMPLES}


def component_config(**component_overrides: Any) -> dict[str, Any]:
    """The base config turned into one inference-component endpoint (mutable dict)."""
    data = copy.deepcopy(BASE_CONFIG)
    ep = data["endpoints"][0]
    ep.pop("model")
    ep["instance_type"] = "ml.g6.12xlarge"
    ep["instances"] = {"initial": 1, "min": 1, "max": 2}
    ep["inference_components"] = [
        {
            "name": "qwen",
            "image": IMAGE,
            "model_data": "s3://demo-models/qwen3-8b/",
            "resources": {"accelerators": 1, "memory_mb": 32768},
            "copies": {"initial": 1, "min": 1, "max": 4},
            **component_overrides,
        }
    ]
    return data


@pytest.fixture
def synth_dict(tmp_path):
    """Synthesize a config given as a dict into a fresh directory."""
    counter = iter(range(1000))

    def run(data: dict[str, Any]) -> Synthesized:
        return synth(parse_config(data), tmp_path / f"out{next(counter)}")

    return run


def variant_configs() -> dict[str, dict[str, Any]]:
    """Configs that switch on what the examples leave off, for the contract tests (name -> config dict)."""
    key = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
    vpc = {"subnets": ["subnet-0abc", "subnet-0def"], "security_groups": ["sg-0123"]}

    full_component = component_config(
        model_data="s3://demo-models/qwen3-8b/model.tar.gz",
        resources={"accelerators": 2, "memory_mb": 4096, "max_memory_mb": 8192, "cpus": 4},
        copies={"initial": 1, "min": 0, "max": 4},
        data_cache=False,
        model_download_timeout=600,
        startup_health_check_timeout=600,
        environment={"OPTION_MAX_MODEL_LEN": "8192"},
    )
    full_component["endpoints"][0].update(routing="random", vpc=vpc)

    awscc_component = component_config()
    awscc_component["endpoints"][0].update(metrics_publish_frequency=30, vpc=vpc)

    awscc_single = copy.deepcopy(BASE_CONFIG)
    awscc_single["endpoints"][0].update(metrics_publish_frequency=10, volume_size_gb=100, model_download_timeout=900,
                                        instance_type="ml.inf2.8xlarge", kms_key_arn=key)

    own_role = copy.deepcopy(BASE_CONFIG)
    own_role["endpoints"][0]["execution_role_arn"] = "arn:aws:iam::123456789012:role/my-sagemaker-role"
    own_role["state"] = {"backend": "s3", "bucket": "tf-state", "key": "demo.tfstate"}

    pools_single = copy.deepcopy(BASE_CONFIG)
    pools_single["endpoints"][0]["model"]["accept_eula"] = True  # reaches the pools' models too
    pools_single["endpoints"][0]["capacity"] = {
        "fallback": [
            {"instance_type": "ml.g5.2xlarge",
             "model": {"model_data": "s3://demo-models/qwen3-8b-awq/", "model_size_gb": 6, "environment": {"OPTION_QUANTIZE": "awq"}}},
            {"instance_type": "ml.g6e.2xlarge"},
        ],
        "provision_timeout": 600,
    }

    reserved = copy.deepcopy(BASE_CONFIG)
    reserved["endpoints"][0]["capacity"] = {
        "reservation_arn": "arn:aws:sagemaker:us-east-1:123456789012:training-plan/g6-for-inference", "provision_timeout": 3600
    }

    pools_component = component_config(copies={"initial": 1, "min": 0, "max": 4})
    pools_component["endpoints"][0].update(
        instances={"initial": 1, "min": 0, "max": 2},
        scale_in={"strategy": "IDLE_RELEASE"},
        capacity={
            "fallback": [{"instance_type": "ml.g5.12xlarge", "priority": 3,
                          "components": {"qwen": {"image": IMAGE.replace("0.33.0", "0.32.0"),
                                                  "resources": {"accelerators": 2, "memory_mb": 16384}}}}],
            "placement": {"strategy": "BINPACK"},
        },
    )

    # Overrides (a nested block, a map key, a list element) and the AMI on the aws configuration; prefix-aware
    # routing on awscc's, with an override of an awscc type.
    overrides_single = copy.deepcopy(BASE_CONFIG)
    overrides_single["endpoints"][0].update(inference_ami_version="al2-ami-sagemaker-inference-gpu-3-1", overrides={
        "aws_sagemaker_endpoint_configuration": {"production_variants.0.enable_ssm_access": True,
                                                 "production_variants.0.core_dump_config.destination_s3_uri": "s3://dumps/"},
        "aws_sagemaker_model": {"primary_container.environment.GREETING": "hello"},
        "aws_sagemaker_endpoint": {"deployment_config.blue_green_update_policy.termination_wait_in_seconds": 30},
    })
    prefix_component = component_config(overrides={
        "awscc_sagemaker_inference_component": {"specification.data_cache_config.enable_caching": False}})
    prefix_component["endpoints"][0].update(
        routing="prefix_aware", prefix_routing={"prefix_length": 4096, "concurrency_threshold": 8},
        inference_ami_version="al2023-ami-sagemaker-inference-gpu-4-1",
        overrides={"awscc_sagemaker_endpoint_config": {"production_variants.0.enable_ssm_access": True}})

    return {
        "single-overrides-ami": overrides_single,
        "component-prefix-routing": prefix_component,
        "single-instance-pools": pools_single,
        "single-capacity-reservation": reserved,
        "component-pools-scale-in": pools_component,
        "component-basic": component_config(),
        "component-full": full_component,
        "component-awscc-config": awscc_component,
        "single-awscc-config": awscc_single,
        "single-own-role-s3-state": own_role,
    }
