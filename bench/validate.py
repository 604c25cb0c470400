#!/usr/bin/env python3
"""Benchmark the fast path: loading + validating a large config, and `fastscale --help`.

`fastscale validate` runs in editors, pre-commit hooks and CI on every change, so it must stay instant
even for big files, and it must never pull in the CDK for Terraform engine (cdktf / jsii start a Node
process and take seconds). This script:

1. builds a 50-endpoint config in memory (single-model and inference-component endpoints mixed) and
   times YAML text -> typed config -> all rules, best of 5, against a 0.5 s budget;
2. times `fastscale --help` in a fresh interpreter, best of 5, against a 0.3 s budget;
3. checks that neither `cdktf` nor `jsii` was imported by validation.

Usage: python bench/validate.py      (exit 1 when a budget or check fails)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

ENDPOINTS = 50
REPEAT = 5
VALIDATE_BUDGET_S = 0.5
HELP_BUDGET_S = 0.3
IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"


def build_config(n: int = ENDPOINTS) -> dict[str, Any]:
    """A valid config with n endpoints: even ones single-model, odd ones three inference components each."""
    endpoints = []
    for i in range(n):
        if i % 2 == 0:
            endpoints.append(
                {
                    "name": f"chat-{i}",
                    "instance_type": "ml.g6.2xlarge",
                    "instances": {"initial": 1, "min": 1, "max": 4},
                    "model_download_timeout": 900,
                    "metrics_publish_frequency": 10,
                    "model": {
                        "image": IMAGE,
                        "model_data": f"s3://bench-models/chat-{i}/",
                        "model_size_gb": 16,
                        "environment": {"OPTION_MAX_MODEL_LEN": "8192", "OPTION_ROLLING_BATCH": "vllm"},
                        "autoscaling": {"target_concurrency": 4},
                    },
                }
            )
        else:
            endpoints.append(
                {
                    "name": f"shared-{i}",
                    "instance_type": "ml.g6.12xlarge",
                    "instances": {"initial": 1, "min": 0, "max": 3},
                    "inference_components": [
                        {
                            "name": f"model-{i}-{j}",
                            "image": IMAGE,
                            "model_data": f"s3://bench-models/model-{i}-{j}/",
                            "model_size_gb": 14.5,
                            "resources": {"accelerators": 1, "memory_mb": 32768, "cpus": 8},
                            "copies": {"initial": 1, "min": 0, "max": 4},
                            "autoscaling": {"target_concurrency": 4, "scale_from_zero": {"period": 60}},
                        }
                        for j in range(3)
                    ],
                }
            )
    return {"project": "bench", "region": "us-east-1", "tags": {"team": "bench"}, "endpoints": endpoints}


def best_of(fn: Callable[[], Any], repeat: int = REPEAT) -> tuple[float, float, Any]:
    """(best seconds, first-run seconds, last result): the first run includes one-time imports and data loads."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), times[0], result


def load_and_validate(text: str):
    # The same steps as infra.config.load_config after reading the file, then every rule.
    from fastscale.infra.config import parse_config, safe_yaml
    from fastscale.infra.rules import run_rules

    loaded = safe_yaml.load(text)
    config = parse_config(loaded.data, "<bench>", text, loaded.lines)
    return config, run_rules(config)


def fastscale_help_command() -> list[str]:
    script = Path(sys.executable).with_name("fastscale")
    if script.exists():
        return [str(script), "--help"]
    found = shutil.which("fastscale")
    if found:
        return [found, "--help"]
    return [sys.executable, "-c", "from cli.main import cli; cli()", "--help"]


def run_help(cmd: list[str]) -> None:
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"`{' '.join(cmd)}` failed with {result.returncode}:\n{result.stderr}")


def slowest_imports(top: int = 8) -> list[tuple[int, str]]:
    """Top-level modules with the largest cumulative import time (microseconds) for `fastscale --help`."""
    code = "import sys; sys.argv = ['fastscale', '--help']; from cli.main import cli; cli()"
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, cwd=ROOT)
    rows = []
    for line in result.stderr.splitlines():
        # "import time:  self [us] | cumulative | imported package"; nesting is shown by extra indentation.
        if not line.startswith("import time:"):
            continue
        _self, cumulative, name = line[len("import time:") :].split("|")
        if not cumulative.strip().isdigit() or name.startswith("  "):
            continue
        rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    text = yaml.safe_dump(build_config(), sort_keys=False)
    components = sum(len(ep.get("inference_components", [])) for ep in build_config()["endpoints"])

    best_validate, first_validate, (config, findings) = best_of(lambda: load_and_validate(text))
    # Where the time goes: YAML parsing, the typed model, the rules.
    from fastscale.infra.config import parse_config, safe_yaml
    from fastscale.infra.rules import run_rules

    best_yaml, _, data = best_of(lambda: safe_yaml.load(text).data)
    best_model, _, _ = best_of(lambda: parse_config(data))
    best_rules, _, _ = best_of(lambda: run_rules(config))
    errors = [f for f in findings if f.severity.value == "error"]
    heavy = sorted(m for m in ("cdktf", "jsii", "constructs") if m in sys.modules)

    cmd = fastscale_help_command()
    best_help, first_help, _ = best_of(lambda: run_help(cmd))

    rows = [
        ("config", f"{len(config.endpoints)} endpoints, {components} components, {len(text.splitlines())} YAML lines", ""),
        ("load + validate (best of 5)", f"{best_validate * 1000:.1f} ms", f"< {VALIDATE_BUDGET_S * 1000:.0f} ms"),
        ("  of which bounded YAML loading", f"{best_yaml * 1000:.1f} ms", "info"),
        ("  of which typed config", f"{best_model * 1000:.1f} ms", "info"),
        ("  of which all rules", f"{best_rules * 1000:.1f} ms", "info"),
        ("load + validate (first run)", f"{first_validate * 1000:.1f} ms", "info"),
        ("findings", f"{len(findings)} ({len(errors)} errors)", "0 errors"),
        ("fastscale --help (best of 5)", f"{best_help * 1000:.1f} ms", f"< {HELP_BUDGET_S * 1000:.0f} ms"),
        ("fastscale --help (first run)", f"{first_help * 1000:.1f} ms", "info"),
        ("cdktf / jsii / constructs imported", ", ".join(heavy) or "none", "none"),
        ("boto3 imported by validation", "yes" if "boto3" in sys.modules else "no", "info"),
    ]
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    print(f"{'measure':<{width[0]}}  {'result':<{width[1]}}  budget")
    print(f"{'-' * width[0]}  {'-' * width[1]}  {'-' * width[2]}")
    for name, value, budget in rows:
        print(f"{name:<{width[0]}}  {value:<{width[1]}}  {budget}")

    failures = []
    if errors:
        failures.append(f"the benchmark config should be valid, got: {[f.to_dict() for f in errors[:3]]}")
    if best_validate >= VALIDATE_BUDGET_S:
        failures.append(f"load + validate took {best_validate:.3f} s (budget {VALIDATE_BUDGET_S} s)")
    if heavy:
        failures.append(f"validation imported {', '.join(heavy)}: infra must stay free of the CDKTF engine")
    if best_help >= HELP_BUDGET_S:
        slow = ", ".join(f"{name} {us / 1000:.0f} ms" for us, name in slowest_imports())
        failures.append(f"fastscale --help took {best_help:.3f} s (budget {HELP_BUDGET_S} s); slowest imports: {slow}")
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
