"""Fallback and "bigger instance" suggestions: the model must fit each copy's accelerators (not the instance's
total), the container's architecture must match, cheapest first, and the price comparison must be true."""

from __future__ import annotations

import pytest

from fastscale.infra.aws.explain import targets_of
from fastscale.infra.base import catalog
from fastscale.infra.config import FastscaleConfig
from fastscale.infra.model.instance_fit import (
    CUDA,
    NEURON,
    NEURONX,
    WEIGHTS_MAX_SHARE,
    cuda_major,
    fallback_candidates,
    gb_to_gib,
    image_architecture,
)
from fastscale.infra.model.resolved import resolve

CUDA_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
NEURON_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.29.0-neuronx-sdk2.19.1"
PLAIN_IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0"


def component_config(instance_type: str, image: str, *, size_gb: float | None = 16, accelerators: int = 1,
                     memory_mb: int = 8192) -> FastscaleConfig:
    component = {"name": "qwen", "image": image, "resources": {"accelerators": accelerators, "memory_mb": memory_mb},
                 "copies": {"initial": 1, "min": 1, "max": 4}}
    if size_gb is not None:
        component["model_size_gb"] = size_gb
    return FastscaleConfig.model_validate({
        "project": "demo", "region": "us-east-1",
        "endpoints": [{"name": "shared", "instance_type": instance_type,
                       "instances": {"initial": 1, "min": 1, "max": 2}, "inference_components": [component]}],
    })


def all_candidates(config: FastscaleConfig):
    return fallback_candidates(config.endpoints[0], n=1000)


def test_16gb_model_on_one_accelerator_never_gets_a_type_with_small_accelerators():
    config = component_config("ml.g6.2xlarge", CUDA_IMAGE)
    found = all_candidates(config)
    assert found, "a 16 GB model on one 24 GiB L4 has CUDA alternatives"
    weights = gb_to_gib(16)
    for c in found:
        spec = catalog.get(c.instance_type)
        # Per accelerator, not the instance's total: ml.p2.8xlarge has 96 GiB, but 12 GiB per K80.
        assert spec.accelerator_memory_gib * WEIGHTS_MAX_SHARE >= weights, c.instance_type
        assert spec.accelerator_kind == "nvidia-gpu"
    names = [c.instance_type for c in found]
    assert not {"ml.p2.xlarge", "ml.p2.8xlarge", "ml.p2.16xlarge", "ml.g4dn.xlarge", "ml.p3.2xlarge"} & set(names)
    prices = [c.price_per_hour_usd for c in found]
    assert prices == sorted(prices)


def test_price_comparison_is_true():
    found = all_candidates(component_config("ml.g6.2xlarge", CUDA_IMAGE))
    current = catalog.get("ml.g6.2xlarge").price_per_hour_usd
    for c in found:
        expected = "cheaper" if c.price_per_hour_usd < current else (
            "more expensive" if c.price_per_hour_usd > current else "the same price")
        assert c.comparison == expected
        assert f"{expected} " in c.describe()
    # ml.g6.2xlarge is the cheapest 24 GiB GPU type in the catalog: the first fallback costs more, and says so.
    assert found[0].describe() == "ml.g5.xlarge ($1.408/h, more expensive than ml.g6.2xlarge at $1.222/h)"


def test_neuron_image_gets_only_neuronx_types():
    found = all_candidates(component_config("ml.inf2.xlarge", NEURON_IMAGE, size_gb=8))
    assert found
    families = {catalog.get(c.instance_type).family for c in found}
    assert families <= {"inf2", "trn1", "trn1n", "trn2"} and "inf2" not in families  # another family than the own
    assert all(catalog.get(c.instance_type).accelerator_kind != "nvidia-gpu" for c in found)


def test_cuda_image_on_gpu_never_gets_neuron_types():
    found = all_candidates(component_config("ml.g6.2xlarge", CUDA_IMAGE, size_gb=4))
    assert all(catalog.get(c.instance_type).accelerator_kind == "nvidia-gpu" for c in found)
    # A CUDA 12 image does not run on the K80 (Kepler support was removed in CUDA 12).
    assert not any(c.instance_type.startswith("ml.p2.") for c in found)


def test_without_an_image_hint_the_instance_type_decides():
    found = all_candidates(component_config("ml.g6.2xlarge", PLAIN_IMAGE, size_gb=4))
    assert found and all(catalog.get(c.instance_type).accelerator_kind == "nvidia-gpu" for c in found)


def test_unknown_model_size_keeps_at_least_the_memory_per_accelerator():
    found = all_candidates(component_config("ml.g6.2xlarge", CUDA_IMAGE, size_gb=None))
    assert found and all(catalog.get(c.instance_type).accelerator_memory_gib >= 24 for c in found)


def test_two_accelerators_per_copy_need_two_devices():
    found = all_candidates(component_config("ml.g6.12xlarge", CUDA_IMAGE, size_gb=40, accelerators=2))
    for c in found:
        spec = catalog.get(c.instance_type)
        assert spec.accelerator_count >= 2 and 2 * spec.accelerator_memory_gib * WEIGHTS_MAX_SHARE >= gb_to_gib(40)


def test_host_memory_per_copy_must_fit():
    found = all_candidates(component_config("ml.g6.12xlarge", CUDA_IMAGE, memory_mb=65536))
    assert found and all(catalog.get(c.instance_type).memory_gib * 1024 >= 65536 for c in found)


def test_explain_target_carries_the_same_candidates():
    config = component_config("ml.g6.2xlarge", CUDA_IMAGE)
    [target] = targets_of(resolve(config))
    assert [c.instance_type for c in target.fallback] == [c.instance_type for c in all_candidates(config)[:3]]


@pytest.mark.parametrize("image, arch, major", [
    (CUDA_IMAGE, CUDA, 12),
    (NEURON_IMAGE, NEURONX, None),
    ("x/pytorch-inference-neuron:1.13.1-neuron-py310-sdk2.18.0", NEURON, None),
    ("x/huggingface-pytorch-tgi-inference:2.4.0-tgi2.4.0-gpu-py311-cu124-ubuntu22.04", CUDA, 12),
    ("x/vllm:cuda11.8", CUDA, 11),
    (PLAIN_IMAGE, None, None),
])
def test_image_architecture(image, arch, major):
    assert image_architecture(image) == arch
    assert cuda_major(image) == major
