"""An adopted config's stack: live names kept, import blocks at the addresses the stack synthesizes, and
AWS's defaults (no routing, no data cache config) left unset."""

from __future__ import annotations

import json

from fastscale.infra.config import parse_config
from fastscale.stacks.app import import_blocks, synthesize

NAME = "huggingface-pytorch-tgi-inference-2024-01-01-12-00-00-000"
ROLE = "arn:aws:iam::123456789012:role/sm"
IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/lmi:0.33.0"
IC_ARN = "arn:aws:sagemaker:us-east-1:123456789012:inference-component/live-ic"


def config(adopted: bool = True):
    component = {"name": "chat", "image": IMAGE, "model_data": "s3://m/llama/", "data_cache": None,
                 "resources": {"accelerators": 1, "memory_mb": 1024}}
    if adopted:
        component["adopted"] = {"name": "live-ic", "arn": IC_ARN, "model": "live-model", "scalable_target": True,
                                "scaling_policy": "live-policy"}
    endpoint = {"name": "main", "instance_type": "ml.g6.12xlarge", "routing": None, "execution_role_arn": ROLE,
                "instances": {"initial": 1, "min": 1, "max": 2}, "inference_components": [component]}
    if adopted:
        endpoint["adopted"] = {"endpoint": NAME, "endpoint_config": "live-config"}
    return parse_config({"project": "demo", "region": "us-east-1", "endpoints": [endpoint]})


def stack(tmp_path, cfg):
    result = synthesize(cfg, tmp_path / "out", project_root=tmp_path)
    return json.loads(result.stack_file.read_text())


def test_import_blocks_target_the_synthesized_resources_under_their_live_names(tmp_path):
    doc = stack(tmp_path, config())
    resources = doc["resource"]
    blocks = {b["to"]: b["id"] for b in doc["import"]}
    for address in blocks:
        rtype, logical = address.split(".")
        assert logical in resources[rtype], address
    by_type = {a.split(".")[0]: i for a, i in blocks.items()}
    assert by_type == {
        "aws_sagemaker_endpoint": NAME,
        "aws_sagemaker_endpoint_configuration": "live-config",
        "aws_sagemaker_model": "live-model",
        "awscc_sagemaker_inference_component": IC_ARN,
        "aws_appautoscaling_target": "sagemaker/inference-component/live-ic/sagemaker:inference-component:DesiredCopyCount",
        "aws_appautoscaling_policy":
            "sagemaker/inference-component/live-ic/sagemaker:inference-component:DesiredCopyCount/live-policy",
    }
    [endpoint] = resources["aws_sagemaker_endpoint"].values()
    [cfg] = resources["aws_sagemaker_endpoint_configuration"].values()
    [model] = resources["aws_sagemaker_model"].values()
    [ic] = resources["awscc_sagemaker_inference_component"].values()
    assert endpoint["name"] == NAME and cfg["name"] == "live-config" and "name_prefix" not in cfg
    assert model["name"] == "live-model" and ic["inference_component_name"] == "live-ic"
    assert "routing_config" not in cfg["production_variants"][0]  # AWS's default kept, not LOR
    assert "data_cache_config" not in ic["specification"]  # not silently turned on
    assert model["primary_container"]["model_data_source"]["s3_data_source"][0]["s3_uri"] == "s3://m/llama/"
    [policy] = resources["aws_appautoscaling_policy"].values()
    assert policy["name"] == "live-policy"


def test_a_config_that_adopts_nothing_has_no_import_blocks(tmp_path):
    assert import_blocks(config(adopted=False)) == []
    doc = stack(tmp_path, config(adopted=False))
    [cfg] = doc["resource"]["aws_sagemaker_endpoint_configuration"].values()
    assert cfg["name_prefix"] == "demo-main-" and "name" not in cfg


def test_the_live_tags_an_adoption_keeps_stay_on_each_resource_under_the_stacks_own(tmp_path):
    data = config().model_dump(mode="json", exclude_unset=True)
    ep = data["endpoints"][0]
    ep["adopted"]["tags"] = {"endpoint": {"cost-center": "ml-42", "fastscale:stack": "someone-else"},
                             "endpoint_config": {"team": "search"}}
    ep["inference_components"][0]["adopted"]["tags"] = {
        "component": {"owner": "ana"}, "model": {"sagemaker.amazonaws.com/model-source": "sdk"}}
    resources = stack(tmp_path, parse_config(data))["resource"]
    [endpoint] = resources["aws_sagemaker_endpoint"].values()
    [cfg] = resources["aws_sagemaker_endpoint_configuration"].values()
    [model] = resources["aws_sagemaker_model"].values()
    [ic] = resources["awscc_sagemaker_inference_component"].values()
    assert endpoint["tags"]["cost-center"] == "ml-42"
    assert endpoint["tags"]["fastscale:stack"] == "demo"  # the stack's own keys win
    assert cfg["tags"]["team"] == "search" and "cost-center" not in cfg["tags"]
    assert model["tags"]["sagemaker.amazonaws.com/model-source"] == "sdk" and "owner" not in model["tags"]
    assert {"key": "owner", "value": "ana"} in ic["tags"]
    assert {t["key"] for t in ic["tags"]} >= {"fastscale:stack", "managed-by"}
