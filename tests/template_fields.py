"""Every string field of the config schema, and configs with a Terraform template payload planted in one.

The fields come from the config's JSON Schema (`infra.config.json_schema`), so a new string field is
planted in as soon as it exists: `string_fields()` lists each as a path of segments (a property name, `[]`
for the first item of a list, `*` for the value and `<key>` for the key of a user-chosen mapping). The
payload is planted into one of the `BASE_CONFIGS`, which together hold every optional section: a field
whose section none of them has is reported by `uncovered()`, and the tests fail until a base config gets it.

Used by tests/stacks/test_literal_strings.py, tests/hostile/ and bench/hostile.py.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from fastscale.infra.config import json_schema

#: What Terraform would evaluate if it reached it unescaped: a function call, a template directive, and the
#: engine's own token syntax.
PAYLOADS = {
    "file": '${file("x")}',
    "directive": "%{ if true }y%{ endif }",
    "engine-token": "${TfToken[TOKEN.1]}",
}

Path = tuple[str, ...]

_IMAGE = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0-lmi15.0.0-cu128"
_SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:demo/hf-token-AbCdEf"
_KEY = "arn:aws:kms:us-east-1:123456789012:key/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
_VPC = {"subnets": ["subnet-0abc"], "security_groups": ["sg-0123"]}

#: Valid configs (no validation error) that together hold every string field of the schema, each set.
BASE_CONFIGS: dict[str, dict[str, Any]] = {
    "single-model": {
        "project": "demo",
        "region": "us-east-1",
        "tags": {"team": "ml"},
        "providers": {"aws": "~> 6.25", "awscc": ">= 1.106.0, < 2.0"},
        "state": {"backend": "local", "path": "state/demo.tfstate"},
        "endpoints": [{
            "name": "chat",
            "instance_type": "ml.g6.2xlarge",
            "instances": {"initial": 2, "min": 2, "max": 4},
            "vpc": _VPC,
            "routing": "random",
            "inference_ami_version": "al2-ami-sagemaker-inference-gpu-2",
            "overrides": {"aws_sagemaker_model": {"primary_container.environment.OVERRIDDEN": "on"}},
            "alarms": {"sns_topic_arn": "arn:aws:sns:us-east-1:123456789012:alerts"},
            "deployment": {"rollback_alarms": ["5xx-errors"],
                           "blue_green": {"traffic": "CANARY", "step": {"type": "INSTANCE_COUNT", "value": 1}}},
            "model": {
                "image": _IMAGE,
                "model_data": "s3://demo-models/qwen3-8b/",
                "model_data_kms_key_arn": _KEY,
                "model_size_gb": 16,
                "environment": {"OPTION_MAX_MODEL_LEN": "8192"},
                "secrets": {"HF_TOKEN": {"arn": _SECRET, "kms_key_arn": _KEY}},
                "autoscaling": {"metric": "high_resolution"},
                "serving": {"model_shape": {"layers": 36, "kv_heads": 8, "head_dim": 128, "kv_cache_dtype": "auto"}},
            },
            "capacity": {"fallback": [{
                "instance_type": "ml.g5.2xlarge",
                "model": {"image": _IMAGE, "model_data": "s3://demo-models/qwen3-8b-awq/", "model_size_gb": 6,
                          "environment": {"OPTION_QUANTIZE": "awq"}},
            }]},
        }],
    },
    "components": {
        "project": "demo",
        "region": "us-east-1",
        "state": {"backend": "s3", "bucket": "demo-tf-state", "key": "demo.tfstate", "region": "us-east-1",
                  "dynamodb_table": "demo-locks", "kms_key_id": _KEY},
        "endpoints": [{
            "name": "chat",
            "instance_type": "ml.g6.12xlarge",
            "instances": {"initial": 1, "min": 1, "max": 3},
            "execution_role_arn": "arn:aws:iam::123456789012:role/demo-sagemaker",
            "capacity": {
                "fallback": [{"instance_type": "ml.g5.12xlarge",
                              "components": {"qwen": {"image": _IMAGE, "model_data": "s3://demo-models/qwen-b/",
                                                      "environment": {"OPTION_TP": "1"}}}}],
                "placement": {"strategy": "SPREAD"},
            },
            "scale_in": {"strategy": "IDLE_RELEASE"},
            "deployment": {"rollback_alarms": ["5xx-errors"],
                           "components": {"batch": {"type": "COPY_COUNT", "value": 1},
                                          "rollback_batch": {"type": "COPY_COUNT", "value": 1}}},
            "inference_components": [{
                "name": "qwen",
                "image": _IMAGE,
                "model_data": "s3://demo-models/qwen3-8b/",
                "environment": {"OPTION_MAX_MODEL_LEN": "8192"},
                "model_data_kms_key_arn": _KEY,
                "secrets": {"HF_TOKEN": {"arn": _SECRET, "kms_key_arn": _KEY}},
                "resources": {"accelerators": 1, "memory_mb": 32768},
                "copies": {"initial": 1, "min": 1, "max": 2},
                "autoscaling": {"metric": "high_resolution"},
                "serving": {"model_shape": {"layers": 36, "kv_heads": 8, "head_dim": 128, "kv_cache_dtype": "auto"}},
                "overrides": {"aws_sagemaker_model": {"primary_container.environment.OVERRIDDEN": "on"}},
                "deployment": {"rollback_alarms": ["5xx-errors"],
                               "rolling": {"batch": {"type": "COPY_COUNT", "value": 1},
                                           "rollback_batch": {"type": "COPY_COUNT", "value": 1}}},
            }],
        }],
    },
    "reserved": {
        "project": "demo",
        "region": "us-east-1",
        "endpoints": [{
            "name": "chat",
            "instance_type": "ml.inf2.8xlarge",
            "instances": {"initial": 2, "min": 2, "max": 4},
            "kms_key_arn": _KEY,
            "capacity": {"reservation_arn": "arn:aws:sagemaker:us-east-1:123456789012:training-plan/inf2-serving"},
            "deployment": {"rolling": {"batch": {"type": "INSTANCE_COUNT", "value": 1},
                                       "rollback_batch": {"type": "INSTANCE_COUNT", "value": 1}}},
            "model": {"image": _IMAGE.replace("djl-inference:0.33.0-lmi15.0.0-cu128", "djl-inference:0.31.0-neuronx-sdk2.21.0"),
                      "model_data": "s3://demo-models/qwen3-8b/", "model_size_gb": 16},
        }],
    },
    "adopted": {
        "project": "demo",
        "region": "us-east-1",
        "endpoints": [{
            "name": "chat",
            "instance_type": "ml.g5.2xlarge",
            "instances": {"initial": 1, "min": 1, "max": 2},
            "execution_role_arn": "arn:aws:iam::123456789012:role/sagemaker-sdk",
            "routing": None,
            "deployment": {"auto_rollback": False},
            "model": {"image": _IMAGE, "model_data": "s3://demo-models/qwen3-8b/model.tar.gz", "model_size_gb": 16},
            "adopted": {"endpoint": "sdk-endpoint-1", "endpoint_config": "sdk-endpoint-1", "variant": "AllTraffic",
                        "model": "sdk-model-1", "model_data_url": True, "scalable_target": True,
                        "scaling_policy": "SageMakerEndpointInvocationScalingPolicy",
                        "tags": {"endpoint": {"cost-center": "ml-1"}, "endpoint_config": {"owner": "sdk"},
                                 "model": {"sagemaker.amazonaws.com/model-source": "sdk"}}},
        }],
    },
    "adopted-components": {
        "project": "demo",
        "region": "us-east-1",
        "endpoints": [{
            "name": "ic",
            "instance_type": "ml.g6.12xlarge",
            "instances": {"initial": 1, "min": 1, "max": 2},
            "execution_role_arn": "arn:aws:iam::123456789012:role/sagemaker-sdk",
            "deployment": {"auto_rollback": False},
            "adopted": {"endpoint": "sdk-ic-endpoint"},
            "inference_components": [{
                "name": "qwen",
                "image": _IMAGE,
                "model_data": "s3://demo-models/qwen3-8b/",
                "resources": {"accelerators": 1, "memory_mb": 32768},
                "data_cache": None,
                "adopted": {"name": "sdk-qwen", "model": "sdk-qwen-model", "scaling_policy": "sdk-qwen-policy",
                            "arn": "arn:aws:sagemaker:us-east-1:123456789012:inference-component/sdk-qwen",
                            "tags": {"component": {"cost-center": "ml-1"}, "model": {"owner": "sdk"}}},
            }],
        }],
    },
    "emulator": {
        "project": "demo",
        "region": "us-east-1",
        "endpoint_url": "http://localhost:4566",
        "state": {"backend": "s3", "bucket": "demo-tf-state", "key": "demo.tfstate",
                  "endpoint_url": "http://localhost:4566"},
        "endpoints": [{
            "name": "chat",
            "instance_type": "ml.g6.2xlarge",
            "model": {"image": _IMAGE, "model_data": "s3://demo-models/qwen3-8b/", "model_size_gb": 16},
        }],
    },
}


# ------------------------------------------------------------------------------------------------ schema walk


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    return defs[ref.rsplit("/", 1)[-1]] if ref else node


def _walk(node: dict[str, Any], defs: dict[str, Any], path: Path, seen: frozenset[str]) -> Iterator[Path]:
    ref = node.get("$ref")
    if ref is not None:
        if ref in seen:
            return
        seen = seen | {ref}
    node = _resolve(node, defs)
    for choice in node.get("anyOf", []) + node.get("oneOf", []):
        yield from _walk(choice, defs, path, seen)
    kind = node.get("type")
    if kind == "string":
        yield path
    elif kind == "array":
        yield from _walk(node.get("items", {}), defs, (*path, "[]"), seen)
    elif kind == "object":
        for name, prop in node.get("properties", {}).items():
            yield from _walk(prop, defs, (*path, name), seen)
        values = node.get("additionalProperties")
        if isinstance(values, dict):  # a mapping with keys the user chooses
            yield (*path, "<key>")
            yield from _walk(values, defs, (*path, "*"), seen)


def string_fields() -> list[Path]:
    """Every place the schema takes a string, as a path of segments (each listed once)."""
    schema = json_schema()
    return sorted(set(_walk(schema, schema.get("$defs", {}), (), frozenset())))


def shown(path: Path) -> str:
    """A readable form of a field path: `endpoints[].model.environment.*`."""
    out = ""
    for segment in path:
        out += segment if segment == "[]" else f".{segment}"
    return out.lstrip(".")


# ------------------------------------------------------------------------------------------------ planting


def plant(data: dict[str, Any], path: Path, value: str) -> str | None:
    """Put `value` at `path` in `data` (in place) and return the config path of the planted string (as
    findings name it); None when `data` has no such place (the field's section is not in this config)."""
    parent: Any = data
    where = ""
    for i, segment in enumerate(path):
        last = i == len(path) - 1
        if segment == "[]":
            if not isinstance(parent, list) or not parent:
                return None
            where += "[0]"
            if last:
                parent[0] = value
                return where.lstrip(".")
            parent = parent[0]
        elif segment in ("*", "<key>"):
            if not isinstance(parent, dict) or not parent:
                return None
            key = next(iter(parent))
            if segment == "<key>":
                parent[value] = parent.pop(key)
                return f'{where.lstrip(".")}["{value}"]'
            where += f".{key}"
            if last:
                parent[key] = value
                return where.lstrip(".")
            parent = parent[key]
        else:
            if not isinstance(parent, dict) or segment not in parent:
                return None
            where += f".{segment}"
            if last:
                parent[segment] = value
                return where.lstrip(".")
            parent = parent[segment]
    return None


def planted_configs(payload: str) -> Iterator[tuple[Path, str, str, dict[str, Any]]]:
    """(field, base config name, config path, config) for every string field and every base config that
    has the field, with `payload` planted there."""
    for field in string_fields():
        for name, base in BASE_CONFIGS.items():
            data = copy.deepcopy(base)
            where = plant(data, field, payload)
            if where is not None:
                yield field, name, where, data


def uncovered() -> list[str]:
    """String fields no base config has (so nothing would be planted in them)."""
    covered = {field for field, *_ in planted_configs("x")}
    return [shown(f) for f in string_fields() if f not in covered]
