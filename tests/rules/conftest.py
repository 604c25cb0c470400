"""Shared fixtures for the rule tests: small valid base configs (as dicts) and a way to run one rule.

Each test copies a base, breaks one thing, and asserts the exact finding; the bases themselves must stay
clean (tests/rules/test_rules_all.py checks that no rule fires on them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fastscale.infra.config import parse_config
from fastscale.infra.rules import Finding, all_rules

IMAGE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0"


def single_model_config() -> dict[str, Any]:
    """One single-model endpoint: Qwen3-8B-sized weights on one NVIDIA L4 (ml.g6.2xlarge, 24 GiB)."""
    return {
        "project": "demo",
        "region": "us-east-1",
        "endpoints": [
            {
                "name": "chat",
                "instance_type": "ml.g6.2xlarge",
                "instances": {"initial": 1, "min": 1, "max": 2},
                "model": {"image": IMAGE, "model_size_gb": 16},
            }
        ],
    }


def components_config() -> dict[str, Any]:
    """One inference-component endpoint on ml.g6.12xlarge (4 x L4, 48 vCPUs, 192 GiB) with two components."""
    return {
        "project": "demo",
        "region": "us-east-1",
        "endpoints": [
            {
                "name": "shared",
                "instance_type": "ml.g6.12xlarge",
                "instances": {"initial": 1, "min": 1, "max": 2},
                "inference_components": [
                    {
                        "name": "qwen",
                        "image": IMAGE,
                        "model_size_gb": 16,
                        "resources": {"accelerators": 1, "memory_mb": 32768, "cpus": 8},
                        "copies": {"initial": 1, "min": 1, "max": 4},
                    },
                    {
                        "name": "llama",
                        "image": IMAGE,
                        "model_size_gb": 16,
                        "resources": {"accelerators": 1, "memory_mb": 32768, "cpus": 8},
                        "copies": {"initial": 1, "min": 1, "max": 4},
                    },
                ],
            }
        ],
    }


def scale_to_zero_config() -> dict[str, Any]:
    """The components endpoint set up to scale to zero on both levels."""
    data = components_config()
    ep = data["endpoints"][0]
    ep["instances"]["min"] = 0
    for comp in ep["inference_components"]:
        comp["copies"]["min"] = 0
    return data


@pytest.fixture
def single_model() -> dict[str, Any]:
    return single_model_config()


@pytest.fixture
def components() -> dict[str, Any]:
    return components_config()


@pytest.fixture
def scale_to_zero() -> dict[str, Any]:
    return scale_to_zero_config()


@pytest.fixture
def run_rule() -> Callable[[str, dict[str, Any]], list[Finding]]:
    """run_rule(code, data) -> the findings of that one rule on the parsed config."""
    rules = {r.code: r for r in all_rules()}

    def run(code: str, data: dict[str, Any]) -> list[Finding]:
        return rules[code].run(parse_config(data))

    return run


def where(findings: list[Finding]) -> list[tuple[str, str, str]]:
    """(code, severity, path) of each finding: what the tests compare exactly."""
    return [(f.code, f.severity.value, f.path) for f in findings]


@pytest.fixture
def hits() -> Callable[[list[Finding]], list[tuple[str, str, str]]]:
    return where
