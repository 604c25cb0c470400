from __future__ import annotations

import pytest


@pytest.mark.parametrize("value", ["/opt/ml/model", "/opt/ml/model/", "/opt/ml/model/qwen3"])
def test_model_dir_without_model_data_is_an_error(run_rule, hits, single_model, value):
    single_model["endpoints"][0]["model"]["environment"] = {"HF_MODEL_ID": value}
    found = run_rule("FS081", single_model)
    assert hits(found) == [("FS081", "error", "endpoints[0].model.environment.HF_MODEL_ID")]
    assert "set model_data" in found[0].hint


def test_model_data_fills_the_directory(run_rule, single_model):
    model = single_model["endpoints"][0]["model"]
    model["environment"] = {"HF_MODEL_ID": "/opt/ml/model"}
    model["model_data"] = "s3://my-models/qwen3-8b/"
    assert run_rule("FS081", single_model) == []


@pytest.mark.parametrize("value", ["Qwen/Qwen3-8B", "/opt/ml/models", "/opt/ml/model-cache"])
def test_other_values_pass(run_rule, single_model, value):
    single_model["endpoints"][0]["model"]["environment"] = {"HF_MODEL_ID": value}
    assert run_rule("FS081", single_model) == []


def test_components_and_overrides_are_checked(run_rule, hits, components):
    ep = components["endpoints"][0]
    ep["inference_components"][0]["environment"] = {"OPTION_MODEL_ID": "/opt/ml/model"}
    ep["inference_components"][1]["model_data"] = "s3://my-models/llama/"
    ep["capacity"] = {"fallback": [{"instance_type": "ml.g5.12xlarge", "components": {
        "qwen": {"model_data": "s3://my-models/qwen-awq/"},  # the pool brings its own weights: fine there
        "llama": {"model_data": None, "environment": {"HF_MODEL_ID": "/opt/ml/model"}},  # inherits llama's
    }}]}
    assert hits(run_rule("FS081", components)) == [
        ("FS081", "error", "endpoints[0].inference_components[0].environment.OPTION_MODEL_ID")]
    ep["capacity"]["fallback"][0]["components"]["qwen"] = {"environment": {"HF_MODEL_ID": "/opt/ml/model"}}
    assert sorted(hits(run_rule("FS081", components))) == [
        ("FS081", "error", "endpoints[0].capacity.fallback[0].components.qwen.environment.HF_MODEL_ID"),
        ("FS081", "error", "endpoints[0].inference_components[0].environment.OPTION_MODEL_ID"),
    ]
