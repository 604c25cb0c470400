"""Plans whose changes move a SageMaker stack's bill, made by the real Terraform (tests/rollout_support.py says
what is real about a ``terraform_data`` stack planned and then given its SageMaker types), and the recorded
ones the unit tests read (tests/fixtures/plans/cost_*.json).

Each scenario is a live version (None: nothing deployed) and the version planned against it:

- ``create``: a first deploy of endpoint demo-chat (1-4 x ml.g6.2xlarge, scaled by its variant's target);
- ``instance_type``: demo-chat moves to ml.g6e.2xlarge: a new hashicorp/aws endpoint configuration (planned from
  ``name_prefix``: its name, and so the endpoint's ``endpoint_config_name``, are known only after apply), the
  scalable target re-registered;
- ``counts``: demo-chat's scalable target goes from 1-4 to 2-8 instances (updated in place);
- ``destroy``: endpoint demo-embed (a fixed 2 x ml.g5.xlarge, no auto scaling) leaves the config;
- ``unknown_price``: demo-cpu (ml.m5.xlarge, a type the catalog has no price for) goes from 1-2 to 1-3;
- ``components``: endpoint demo-shared (ml.g6.12xlarge, 4 GPUs, managed instance scaling 0-1) hosts two
  components of one GPU a copy, scaled 0-4 copies each, then llama's up to 8: their copies need 2, then 3,
  instances.

Record the fixtures again (the real terraform on PATH): ``.venv/bin/python -m tests.cost_support``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fastscale.infra.base.aws_facts import COMPONENT_COPIES, SERVICE_NAMESPACE, VARIANT_INSTANCES
from tests.rollout_support import as_sagemaker, twin

PLANS = Path(__file__).resolve().parent / "fixtures" / "plans"

#: The SageMaker type each fixture resource stands for, by the end of its name.
SUFFIX_TYPES = {
    "_configuration": "aws_sagemaker_endpoint_configuration",
    "_config": "awscc_sagemaker_endpoint_config",
    "_endpoint": "aws_sagemaker_endpoint",
    "_target": "aws_appautoscaling_target",
    "_component": "awscc_sagemaker_inference_component",
}


def types_of(stack: dict[str, Any] | None) -> dict[str, str]:
    """terraform_data resource name -> the SageMaker type it stands for (for :func:`as_sagemaker`)."""
    names = ((stack or {}).get("resource") or {}).get("terraform_data") or {}
    return {name: kind for name in names for suffix, kind in SUFFIX_TYPES.items() if name.endswith(suffix)}


def _variant(instance_type: str, initial: int = 1, **extra: Any) -> dict[str, Any]:
    return {"variant_name": "AllTraffic", "instance_type": instance_type, "initial_instance_count": initial, **extra}


def _variant_target(name: str, low: int, high: int, instance_type: str) -> dict[str, Any]:
    body = twin({"resource_id": f"endpoint/demo-{name}/variant/AllTraffic", "scalable_dimension": VARIANT_INSTANCES,
                 "service_namespace": SERVICE_NAMESPACE, "min_capacity": low, "max_capacity": high})
    body["triggers_replace"] = {"instance_types": instance_type}  # stacks.scaling re-registers it on a type change
    return body


def awscc_endpoint(name: str, instance_type: str, low: int, high: int, *, digest: str) -> dict[str, Any]:
    """A single-model endpoint as fastscale writes it with awscc's configuration (named with a digest, so its
    name is known at plan time), scaled by its variant's scalable target."""
    config = f"demo-{name}-{digest}"
    return {
        f"{name}_config": twin({"endpoint_config_name": config,
                                "production_variants": [_variant(instance_type, model_name=f"demo-{name}-model")]},
                               ("endpoint_config_name",), cbd=True),
        f"{name}_endpoint": twin({"name": f"demo-{name}", "endpoint_config_name": config}, ("name",)),
        f"{name}_target": _variant_target(name, low, high, instance_type),
    }


def aws_endpoint(name: str, instance_type: str, low: int, high: int) -> dict[str, Any]:
    """The same with hashicorp/aws's configuration, planned from ``name_prefix``: the endpoint names it by
    reference, known only after apply when the configuration is replaced."""
    return {
        f"{name}_configuration": twin({"name_prefix": f"demo-{name}-",
                                       "production_variants": [_variant(instance_type, managed_instance_scaling=[])]},
                                      ("production_variants",), cbd=True),
        f"{name}_endpoint": twin({"name": f"demo-{name}",
                                  "endpoint_config_name": f"${{terraform_data.{name}_configuration.id}}"}, ("name",)),
        f"{name}_target": _variant_target(name, low, high, instance_type),
    }


def fixed_endpoint(name: str, instance_type: str, count: int) -> dict[str, Any]:
    """An endpoint without auto scaling: its configuration's initial count is its fleet."""
    config = f"demo-{name}-0f0f0f0f0f0f"
    return {
        f"{name}_config": twin({"endpoint_config_name": config, "production_variants": [_variant(instance_type, count)]},
                               ("endpoint_config_name",), cbd=True),
        f"{name}_endpoint": twin({"name": f"demo-{name}", "endpoint_config_name": config}, ("name",)),
    }


def component_endpoint(max_instances: int, copies: dict[str, int], *, digest: str) -> dict[str, Any]:
    """Endpoint demo-shared on ml.g6.12xlarge with managed instance scaling 0-``max_instances``, and one
    component per ``copies`` entry (one GPU a copy, 0 to that many copies)."""
    config = f"demo-shared-{digest}"
    scaling = {"status": "ENABLED", "min_instance_count": 0, "max_instance_count": max_instances}
    out = {
        "shared_config": twin({"endpoint_config_name": config,
                               "production_variants": [_variant("ml.g6.12xlarge", managed_instance_scaling=scaling)]},
                              ("endpoint_config_name",), cbd=True),
        "shared_endpoint": twin({"name": "demo-shared", "endpoint_config_name": config}, ("name",)),
    }
    for name, most in copies.items():
        out[f"{name}_component"] = twin({
            "inference_component_name": f"demo-{name}", "endpoint_name": "demo-shared", "variant_name": "AllTraffic",
            "specification": {"compute_resource_requirements": {"number_of_accelerator_devices_required": 1,
                                                                "min_memory_required_in_mb": 32768}},
            "runtime_config": {"copy_count": 1}}, ("inference_component_name",))
        out[f"{name}_target"] = twin({"resource_id": f"inference-component/demo-{name}", "scalable_dimension": COMPONENT_COPIES,
                                      "service_namespace": SERVICE_NAMESPACE, "min_capacity": 0, "max_capacity": most})
    return out


def _stack(*parts: dict[str, Any]) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    for part in parts:
        resources.update(part)
    return {"resource": {"terraform_data": resources}}


#: name -> (the live version, or None for nothing deployed; the version planned against it)
SCENARIOS: dict[str, tuple[dict[str, Any] | None, dict[str, Any]]] = {
    "create": (None, _stack(awscc_endpoint("chat", "ml.g6.2xlarge", 1, 4, digest="aaaa1111aaaa"))),
    "instance_type": (_stack(aws_endpoint("chat", "ml.g6.2xlarge", 1, 4)), _stack(aws_endpoint("chat", "ml.g6e.2xlarge", 1, 4))),
    "counts": (_stack(awscc_endpoint("chat", "ml.g6.2xlarge", 1, 4, digest="aaaa1111aaaa")),
               _stack(awscc_endpoint("chat", "ml.g6.2xlarge", 2, 8, digest="aaaa1111aaaa"))),
    "destroy": (_stack(awscc_endpoint("chat", "ml.g6.2xlarge", 1, 4, digest="aaaa1111aaaa"), fixed_endpoint("embed", "ml.g5.xlarge", 2)),
                _stack(awscc_endpoint("chat", "ml.g6.2xlarge", 1, 4, digest="aaaa1111aaaa"))),
    "unknown_price": (_stack(awscc_endpoint("cpu", "ml.m5.xlarge", 1, 2, digest="cccc3333cccc")),
                      _stack(awscc_endpoint("cpu", "ml.m5.xlarge", 1, 3, digest="cccc3333cccc"))),
    "components": (_stack(component_endpoint(1, {"qwen": 4, "llama": 4}, digest="bbbb2222bbbb")),
                   _stack(component_endpoint(1, {"qwen": 4, "llama": 8}, digest="bbbb2222bbbb"))),
}


def load_plan(name: str) -> dict[str, Any]:
    """A recorded plan (tests/fixtures/plans/cost_<name>.json)."""
    document: dict[str, Any] = json.loads((PLANS / f"cost_{name}.json").read_text())
    return document


# --------------------------------------------------------------------------------------------- recording


def _terraform(binary: str, workdir: Path, *args: str) -> str:
    env = {**os.environ, "TF_CLI_CONFIG_FILE": str(workdir / "terraformrc"), "TF_IN_AUTOMATION": "1"}
    env.pop("TF_DATA_DIR", None)
    done = subprocess.run([binary, *args], cwd=workdir, env=env, capture_output=True, text=True, check=True, timeout=300)
    return done.stdout


def real_plan(binary: str, live: dict[str, Any] | None, planned: dict[str, Any]) -> dict[str, Any]:
    """``planned`` as Terraform plans it against ``live`` (applied first), given its SageMaker types."""
    with tempfile.TemporaryDirectory(prefix="fastscale-cost-plan-") as tmp:
        workdir = Path(tmp)
        (workdir / "terraformrc").write_text("")
        stack = workdir / "main.tf.json"
        _terraform(binary, workdir, "init", "-input=false")
        if live is not None:
            stack.write_text(json.dumps(live))
            _terraform(binary, workdir, "apply", "-input=false", "-auto-approve")
        stack.write_text(json.dumps(planned))
        _terraform(binary, workdir, "plan", "-input=false", "-out=plan.tfplan")
        document = json.loads(_terraform(binary, workdir, "show", "-json", "plan.tfplan"))
    return as_sagemaker(document, {**types_of(live), **types_of(planned)})


def record(binary: str, directory: Path = PLANS) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (live, planned) in SCENARIOS.items():
        path = directory / f"cost_{name}.json"
        path.write_text(json.dumps(real_plan(binary, live, planned), indent=1, sort_keys=True) + "\n")
        written.append(path)
    return written


# --------------------------------------------------------------------------------------------- a synthesized stack


_META = {"//", "depends_on", "lifecycle", "provider", "count", "for_each", "provisioner", "connection"}
_VARIABLE = re.compile(r"^\$\{var\.([A-Za-z0-9_-]+)\}$")


def _planned(value: Any, variables: dict[str, Any]) -> tuple[Any, Any]:
    """A synthesized attribute as Terraform plans it at creation: a variable's value, a reference to another
    resource known only after apply (null, and marked in ``after_unknown``), a literal as it is."""
    if isinstance(value, str):
        found = _VARIABLE.match(value)
        if found:
            return variables[found.group(1)]["default"], False
        return (None, True) if "${" in value else (value, False)
    if isinstance(value, dict):
        pairs = {k: _planned(v, variables) for k, v in value.items()}
        return {k: p[0] for k, p in pairs.items()}, {k: p[1] for k, p in pairs.items() if p[1]}
    if isinstance(value, list):
        items = [_planned(v, variables) for v in value]
        return [p[0] for p in items], [p[1] for p in items]
    return value, False


def create_plan(document: dict[str, Any]) -> dict[str, Any]:
    """The plan of a first deploy of a synthesized stack (``cdk.tf.json``): every resource created with its
    synthesized attributes, variables at their defaults."""
    variables = document.get("variable") or {}
    changes = []
    for kind, resources in (document.get("resource") or {}).items():
        for name, attributes in resources.items():
            after, unknown = _planned({k: v for k, v in attributes.items() if k not in _META}, variables)
            changes.append({"address": f"{kind}.{name}", "mode": "managed", "type": kind, "name": name,
                            "change": {"actions": ["create"], "before": None, "after": after, "after_unknown": unknown}})
    return {"format_version": "1.2", "resource_changes": changes}


if __name__ == "__main__":
    terraform = os.environ.get("FASTSCALE_TERRAFORM") or "terraform"
    for path in record(terraform):
        print(f"wrote {path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path}")
    sys.exit(0)
