"""The model reproduces AWS's published scale-out runs from their inputs alone.

The published figures live only here and in scripts/gen_estimate_table.py: the model is fed sizes,
instance types and scaling settings, never the results.

- Container caching post (Qwen3-8B, 16 GB, ml.g6.2xlarge, 17.7 GB LMI image): a new instance took 525 s
  without container caching (image pull 333 s, model download 168 s in parallel) and 258 s with it
  (pull 0 s, download 77 s). The image extraction rate is fitted on this run and the post's three customer
  runs together, so the uncached figures are met within 10%. These runs are timed from the instance launch, so the comparison is the
  scenario's time from `instance_provisioning` on (detection and the scaling decision come before).
- Scale-to-zero post (Llama 3 8B, 16 GB, 4 accelerators on ml.g5.12xlarge): ~5.03 min from the first
  request to serving = ~1 min alarm + ~1.75 min instance + ~2.28 min adding the copy.
"""

from __future__ import annotations

import pytest

from fastscale.infra.analysis.estimate import estimate_config
from fastscale.infra.config import parse_config
from fastscale.infra.model.resolved import resolve

LMI = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def within(actual: float, expected: float, tolerance: float) -> bool:
    return abs(actual - expected) <= tolerance * expected


@pytest.fixture(scope="module")
def qwen():
    config = parse_config(
        {
            "project": "bench",
            "region": "us-east-1",
            "endpoints": [
                {
                    "name": "qwen3",
                    "instance_type": "ml.g6.2xlarge",
                    "model": {"image": LMI, "image_size_gb": 17.7, "model_size_gb": 16},
                }
            ],
        }
    )
    [est] = estimate_config(resolve(config))
    return est


@pytest.fixture(scope="module")
def llama_from_zero():
    config = parse_config(
        {
            "project": "bench",
            "region": "us-east-1",
            "endpoints": [
                {
                    "name": "llama",
                    "instance_type": "ml.g5.12xlarge",
                    "instances": {"initial": 1, "min": 0, "max": 3},
                    "inference_components": [
                        {
                            "name": "llama3-8b",
                            "image": LMI,
                            "model_size_gb": 16,
                            "resources": {"accelerators": 4, "memory_mb": 104096},
                            "copies": {"initial": 1, "min": 0, "max": 1},
                            "autoscaling": {"scale_from_zero": {"period": 60, "evaluation_periods": 1}},
                        }
                    ],
                }
            ],
        }
    )
    [est] = estimate_config(resolve(config))
    return est


def test_new_instance_without_container_caching_matches_525_s(qwen):
    # The extraction rate is pooled over four runs (estimate_params.json, derivation), this one of them: it
    # lands within 10%, not on the run.
    scenario = qwen.scenario("instance_no_image_cache")
    assert within(scenario.seconds_from("instance_provisioning"), 525, 0.10)


def test_new_instance_with_container_caching_matches_258_s(qwen):
    scenario = qwen.scenario("instance_image_cache")
    assert within(scenario.seconds_from("instance_provisioning"), 258, 0.05)


def test_published_phases_are_reproduced(qwen):
    uncached = qwen.scenario("instance_no_image_cache")
    cached = qwen.scenario("instance_image_cache")
    assert within(uncached.phase("image_pull").seconds, 333, 0.10)  # pooled extraction rate, as above
    # The shared download is the loosest fit: fair sharing gives 154 s for AWS's 168 s.
    assert within(uncached.phase("model_download").seconds, 168, 0.10)
    assert cached.phase("image_pull").seconds == 0
    assert within(cached.phase("model_download").seconds, 77, 0.05)


def test_caching_saves_what_aws_measured(qwen):
    saved = qwen.scenario("instance_no_image_cache").total_seconds - qwen.scenario("instance_image_cache").total_seconds
    # 235 s for AWS's 267 s: the pooled extraction rate is faster than this one image's (9.4 s per GB against 7.6).
    assert within(saved, 525 - 258, 0.15)


def test_scale_from_zero_matches_5_03_minutes(llama_from_zero):
    scenario = llama_from_zero.scenario("from_zero")
    assert within(scenario.total_seconds, 5.03 * 60, 0.10)


def test_scale_from_zero_breakdown_is_close_to_aws(llama_from_zero):
    scenario = llama_from_zero.scenario("from_zero")
    alarm = scenario.phase("instance_provisioning").start  # detection + scaling decision
    provisioning = scenario.phase("instance_provisioning").seconds
    copy = scenario.total_seconds - scenario.phase("instance_provisioning").end
    assert within(alarm, 60, 0.25)
    assert within(provisioning, 1.75 * 60, 0.10)
    assert within(copy, 2.28 * 60, 0.10)
