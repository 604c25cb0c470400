"""Tests of the provider-schema checker, the recorded schemas and their extractor."""

from __future__ import annotations

import copy
import importlib.util
import io
import json
import re
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from fastscale.infra.base.resource_types import PROVIDER_RESOURCE_TYPES

from .schema_check import SCHEMAS_PATH, check_resource, check_stack, load_schemas, resource_schema

REPO_ROOT = Path(__file__).resolve().parents[2]

# A body shaped like what the stacks write for a variant that hosts inference
# components: no model_name, an execution role, managed instance scaling.
ENDPOINT_CONFIGURATION = {
    "//": {"metadata": {"path": "stack/endpoint-config", "uniqueId": "endpoint-config"}},
    "name_prefix": "fs-demo-",
    "execution_role_arn": "${aws_iam_role.execution.arn}",
    "production_variants": [
        {
            "variant_name": "AllTraffic",
            "instance_type": "ml.g6.2xlarge",
            "initial_instance_count": 1,
            "inference_ami_version": "al2-ami-sagemaker-inference-gpu-3-1",
            "container_startup_health_check_timeout_in_seconds": 900,
            "managed_instance_scaling": {"status": "ENABLED", "min_instance_count": 1, "max_instance_count": 4},
            "routing_config": [{"routing_strategy": "LEAST_OUTSTANDING_REQUESTS"}],
        }
    ],
    "tags": {"fastscale:stack": "demo"},
    "lifecycle": {"create_before_destroy": True},
}

INFERENCE_COMPONENT = {
    "endpoint_name": "${aws_sagemaker_endpoint.main.name}",
    "inference_component_name": "fs-demo-llm",
    "variant_name": "AllTraffic",
    "specification": {
        "model_name": "${aws_sagemaker_model.llm.name}",
        "compute_resource_requirements": {
            "number_of_accelerator_devices_required": 1,
            "min_memory_required_in_mb": 16384,
        },
        "data_cache_config": {"enable_caching": True},
        "startup_parameters": {"container_startup_health_check_timeout_in_seconds": 900},
    },
    "runtime_config": {"copy_count": 1},
    "tags": [{"key": "fastscale:stack", "value": "demo"}],
    "depends_on": ["aws_sagemaker_endpoint.main"],
    "lifecycle": {"ignore_changes": ["runtime_config.copy_count"]},
}

SCALING_POLICY = {
    "name": "fs-demo-llm-concurrency",
    "policy_type": "TargetTrackingScaling",
    "resource_id": "inference-component/fs-demo-llm",
    "scalable_dimension": "sagemaker:inference-component:DesiredCopyCount",
    "service_namespace": "sagemaker",
    "target_tracking_scaling_policy_configuration": {
        "target_value": 4,
        "scale_in_cooldown": 300,
        "predefined_metric_specification": {
            "predefined_metric_type": "SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution",
        },
    },
}


def body(template: dict) -> dict:
    return copy.deepcopy(template)


# --------------------------------------------------------------------------- check_resource


@pytest.mark.parametrize(
    ("resource_type", "template"),
    [
        ("aws_sagemaker_endpoint_configuration", ENDPOINT_CONFIGURATION),
        ("awscc_sagemaker_inference_component", INFERENCE_COMPONENT),
        ("aws_appautoscaling_policy", SCALING_POLICY),
    ],
)
def test_valid_bodies_pass(resource_type, template):
    assert check_resource(resource_type, body(template)) == []


def test_misspelled_nested_attribute_is_named_with_its_path_and_a_suggestion():
    config = body(ENDPOINT_CONFIGURATION)
    variant = config["production_variants"][0]
    variant["instance_typ"] = variant.pop("instance_type")
    assert check_resource("aws_sagemaker_endpoint_configuration", config) == [
        "production_variants[0].instance_typ: unknown attribute (did you mean 'instance_type'?)"
    ]


def test_camel_case_attribute_suggests_the_terraform_name():
    config = body(ENDPOINT_CONFIGURATION)
    config["executionRoleArn"] = config.pop("execution_role_arn")
    problems = check_resource("aws_sagemaker_endpoint_configuration", config)
    assert problems == ["executionRoleArn: unknown attribute (did you mean 'execution_role_arn'?)"]


def test_missing_required_name_is_reported():
    policy = body(SCALING_POLICY)
    del policy["name"]
    assert check_resource("aws_appautoscaling_policy", policy) == ["name: missing required attribute"]


def test_null_counts_as_unset():
    policy = body(SCALING_POLICY)
    policy["name"] = None
    policy["policy_type"] = None  # optional: null is fine
    assert check_resource("aws_appautoscaling_policy", policy) == ["name: missing required attribute"]


def test_missing_required_attribute_inside_a_nested_block():
    policy = body(SCALING_POLICY)
    del policy["target_tracking_scaling_policy_configuration"]["predefined_metric_specification"][
        "predefined_metric_type"
    ]
    assert check_resource("aws_appautoscaling_policy", policy) == [
        "target_tracking_scaling_policy_configuration.predefined_metric_specification."
        "predefined_metric_type: missing required attribute"
    ]


def test_object_where_a_list_of_blocks_is_required():
    config = body(ENDPOINT_CONFIGURATION)
    config["production_variants"] = config["production_variants"][0]
    problems = check_resource("aws_sagemaker_endpoint_configuration", config)
    assert len(problems) == 1
    assert problems[0].startswith("production_variants: expected a list of blocks, got an object")


def test_list_where_a_single_block_is_required_reports_the_count():
    config = body(ENDPOINT_CONFIGURATION)
    scaling = config["production_variants"][0]["managed_instance_scaling"]
    config["production_variants"][0]["managed_instance_scaling"] = [scaling, scaling]
    problems = check_resource("aws_sagemaker_endpoint_configuration", config)
    assert len(problems) == 1
    assert problems[0].startswith("production_variants[0].managed_instance_scaling: takes a single block")
    assert "array of 2" in problems[0]


def test_nested_attribute_shapes_are_checked_for_awscc():
    component = body(INFERENCE_COMPONENT)
    component["specification"] = [component["specification"]]
    component["tags"] = {"key": "k", "value": "v"}
    problems = check_resource("awscc_sagemaker_inference_component", component)
    assert len(problems) == 2
    assert problems[0].startswith("specification: takes a single object")
    assert problems[1].startswith("tags: expected a list, got an object")


def test_errors_deep_in_awscc_nested_attributes_carry_the_full_path():
    component = body(INFERENCE_COMPONENT)
    component["specification"]["data_cache_config"] = {"enable_cache": True}
    assert check_resource("awscc_sagemaker_inference_component", component) == [
        "specification.data_cache_config.enable_cache: unknown attribute (did you mean 'enable_caching'?)"
    ]


def test_tokens_satisfy_any_attribute_type():
    component = body(INFERENCE_COMPONENT)
    component["runtime_config"] = {"copy_count": "${var.copies}"}
    component["specification"]["data_cache_config"] = "${local.cache}"  # a nested attribute
    component["tags"] = "${local.tags}"
    assert check_resource("awscc_sagemaker_inference_component", component) == []


def test_a_token_cannot_replace_a_block():
    config = body(ENDPOINT_CONFIGURATION)
    config["production_variants"][0]["managed_instance_scaling"] = "${local.scaling}"
    assert check_resource("aws_sagemaker_endpoint_configuration", config) == [
        "production_variants[0].managed_instance_scaling: is a block and must be written as a JSON "
        "object, not an expression"
    ]


@pytest.mark.parametrize(
    ("path", "value", "accepted"),
    [
        (("initial_instance_count",), 2, True),
        (("initial_instance_count",), "2", True),  # Terraform converts numeric strings
        (("initial_instance_count",), "two", False),
        (("initial_instance_count",), True, False),
        (("enable_ssm_access",), False, True),
        (("enable_ssm_access",), "true", True),
        (("enable_ssm_access",), "yes", False),
        (("variant_name",), 7, True),
        (("variant_name",), {"a": 1}, False),
    ],
)
def test_primitive_values_follow_terraform_conversions(path, value, accepted):
    config = body(ENDPOINT_CONFIGURATION)
    config["production_variants"][0][path[0]] = value
    problems = check_resource("aws_sagemaker_endpoint_configuration", config)
    if accepted:
        assert problems == []
    else:
        assert len(problems) == 1 and problems[0].startswith(f"production_variants[0].{path[0]}: expected a")


def test_map_values_are_checked_with_their_key_in_the_path():
    config = body(ENDPOINT_CONFIGURATION)
    config["tags"] = {"team": {"name": "ml"}}
    assert check_resource("aws_sagemaker_endpoint_configuration", config) == [
        'tags["team"]: expected a string, got an object {"name": "ml"}'
    ]


def test_meta_arguments_are_not_provider_attributes():
    policy = body(SCALING_POLICY)
    policy.update(
        {
            "count": 2,
            "for_each": "${var.components}",
            "provider": "aws.secondary",
            "depends_on": ["aws_appautoscaling_target.ic"],
            "provisioner": [{"local-exec": {"command": "true"}}],
            "connection": {"type": "ssh"},
        }
    )
    assert check_resource("aws_appautoscaling_policy", policy) == []


def test_lifecycle_ignore_changes_must_name_real_attributes():
    component = body(INFERENCE_COMPONENT)
    component["lifecycle"] = {
        "ignore_changes": ["runtime_config.copy_count", "runtime_config.copy_cont", "specifications[0].model_name"],
        "create_before_destroy": True,
        "prevent_destroys": True,
    }
    assert check_resource("awscc_sagemaker_inference_component", component) == [
        "lifecycle.prevent_destroys: unknown lifecycle argument (did you mean 'prevent_destroy'?)",
        "lifecycle.ignore_changes[1]: 'runtime_config.copy_cont' is not an attribute (did you mean 'copy_count'?)",
    ]


def test_lifecycle_ignore_changes_all_is_accepted():
    component = body(INFERENCE_COMPONENT)
    component["lifecycle"] = {"ignore_changes": "all"}
    assert check_resource("awscc_sagemaker_inference_component", component) == []


def test_unknown_resource_type_suggests_the_closest_recorded_one():
    # hashicorp/aws has no inference component resource; awscc has.
    problems = check_resource("aws_sagemaker_inference_component", {})
    assert len(problems) == 1
    assert problems[0].startswith("unknown resource type 'aws_sagemaker_inference_component'")
    assert "did you mean 'awscc_sagemaker_inference_component'?" in problems[0]


def test_body_that_is_not_an_object_is_a_problem_not_a_crash():
    assert check_resource("aws_iam_role", ["assume_role_policy"]) == [
        "resource body must be a JSON object, got an array"
    ]


# --------------------------------------------------------------------------- check_stack


def test_check_stack_is_empty_for_a_clean_stack():
    stack = {
        "terraform": {"required_providers": {"aws": {"source": "hashicorp/aws", "version": "~> 6.25"}}},
        "resource": {
            "aws_sagemaker_endpoint_configuration": {"config": body(ENDPOINT_CONFIGURATION)},
            "awscc_sagemaker_inference_component": {"llm": body(INFERENCE_COMPONENT)},
            "aws_appautoscaling_policy": {"llm_concurrency": body(SCALING_POLICY)},
            "aws_cloudwatch_dashboard": {"main": {"dashboard_name": "fs-demo", "dashboard_body": "{}"}},
        },
    }
    assert check_stack(stack) == {}


def test_check_stack_reports_each_bad_resource_under_its_address():
    broken_policy = body(SCALING_POLICY)
    del broken_policy["service_namespace"]
    stack = {
        "resource": {
            "aws_appautoscaling_policy": {"good": body(SCALING_POLICY), "bad": broken_policy},
            "aws_sagemaker_inference_component": {"llm": body(INFERENCE_COMPONENT)},
        }
    }
    report = check_stack(stack)
    assert sorted(report) == ["aws_appautoscaling_policy.bad", "aws_sagemaker_inference_component.llm"]
    assert report["aws_appautoscaling_policy.bad"] == ["service_namespace: missing required attribute"]
    assert "did you mean 'awscc_sagemaker_inference_component'?" in report["aws_sagemaker_inference_component.llm"][0]


def test_check_stack_without_resources_is_clean_and_malformed_input_is_reported():
    assert check_stack({"output": {}}) == {}
    assert check_stack({"resource": []}) == {"resource": ["expected a JSON object, got an array"]}
    assert check_stack({"resource": {"aws_iam_role": "x"}}) == {
        "aws_iam_role": ["expected an object of logical ids, got a string"]
    }


# --------------------------------------------------------------------------- the recorded data

ALLOWED_TYPES = {"string", "number", "bool", "any", "list", "map", "object"}
META = {"lifecycle", "depends_on", "count", "for_each", "provider", "provisioner", "connection"}


def walk(attributes: dict, path: str = ""):
    for name, spec in attributes.items():
        yield f"{path}{name}", spec
        nested = spec.get("attributes") or spec.get("element", {}).get("attributes")
        if nested:
            yield from walk(nested, f"{path}{name}.")


def attr(resource_type: str, dotted: str) -> dict:
    """Look up ``a.b.c`` in a recorded schema, stepping through list elements."""
    attributes = resource_schema(resource_type)["attributes"]
    spec: dict = {}
    for name in dotted.split("."):
        assert attributes is not None, f"{dotted}: {name} has no nested attributes"
        assert name in attributes, f"{resource_type}: {dotted} missing at {name}"
        spec = attributes[name]
        attributes = spec.get("attributes") or spec.get("element", {}).get("attributes")
    return spec


def test_every_resource_the_stacks_use_is_recorded_with_its_provider_version():
    schemas = load_schemas()
    assert schemas["providers"]["aws"]["version"] == "6.25.0"
    assert schemas["providers"]["awscc"]["version"] == "1.106.0"
    for provider, types in PROVIDER_RESOURCE_TYPES.items():
        for resource_type in types:
            schema = resource_schema(resource_type)
            assert schema is not None, resource_type
            assert schema["provider"] == provider
            assert schema["provider_version"] == schemas["providers"][provider]["version"]


def test_inference_component_schema_has_the_caching_and_copy_count_attributes():
    assert attr("awscc_sagemaker_inference_component", "endpoint_name") == {"required": True, "type": "string"}
    spec = attr("awscc_sagemaker_inference_component", "specification")
    assert spec["type"] == "object" and spec["block"] is False  # awscc: nested attribute
    assert attr("awscc_sagemaker_inference_component", "specification.data_cache_config.enable_caching")[
        "type"
    ] == "bool"
    assert attr("awscc_sagemaker_inference_component", "runtime_config.copy_count")["type"] == "number"
    assert attr("awscc_sagemaker_inference_component", "specifications")["type"] == "list"


def test_endpoint_configuration_schema_has_the_fast_scaling_variant_settings():
    variants = attr("aws_sagemaker_endpoint_configuration", "production_variants")
    assert variants["required"] is True and variants["type"] == "list" and variants["block"] is True
    scaling = attr("aws_sagemaker_endpoint_configuration", "production_variants.managed_instance_scaling")
    assert scaling["type"] == "object" and scaling["block"] is True
    assert set(scaling["attributes"]) >= {"status", "min_instance_count", "max_instance_count"}
    routing = attr("aws_sagemaker_endpoint_configuration", "production_variants.routing_config")
    assert routing["type"] == "list"
    assert routing["element"]["attributes"]["routing_strategy"]["required"] is True
    assert attr("aws_sagemaker_endpoint_configuration", "production_variants.inference_ami_version")["type"] == "string"
    assert attr("aws_sagemaker_endpoint_configuration", "production_variants.model_name")["required"] is False
    assert attr("aws_sagemaker_endpoint_configuration", "execution_role_arn")["type"] == "string"


def test_scaling_policy_schema_has_the_predefined_metric_type():
    spec = attr(
        "aws_appautoscaling_policy",
        "target_tracking_scaling_policy_configuration.predefined_metric_specification.predefined_metric_type",
    )
    assert spec == {"required": True, "type": "string"}


def test_recorded_schemas_are_well_formed():
    for resource_type, schema in load_schemas()["resources"].items():
        top = schema["attributes"]
        assert not META & set(top), f"{resource_type}: meta-arguments leaked into the schema"
        assert len(top) >= 2, resource_type
        for path, spec in walk(top):
            where = f"{resource_type}.{path}"
            assert re.fullmatch(r"[a-z][a-z0-9_]*", path.rsplit(".", 1)[-1]), where
            assert isinstance(spec["required"], bool), where
            assert spec["type"] in ALLOWED_TYPES, where
            if spec["type"] in ("list", "map"):
                assert spec["element"]["type"] in ALLOWED_TYPES, where
            if spec["type"] == "object" or "attributes" in spec.get("element", {}):
                assert isinstance(spec["block"], bool), where


def test_recorded_file_is_in_canonical_form():
    extractor = load_extractor()
    text = SCHEMAS_PATH.read_text()
    assert extractor.render(json.loads(text)) == text


# --------------------------------------------------------------------------- the extractor


def load_extractor():
    path = REPO_ROOT / "scripts" / "extract_provider_schemas.py"
    spec = importlib.util.spec_from_file_location("extract_provider_schemas", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up by name
    spec.loader.exec_module(module)
    return module


LINK = "https://registry.terraform.io/providers/hashicorp/aws/9.9.9/docs/resources/demo_thing"


def prop(name: str, jtype: dict, anchor: str, *, optional: bool = True, summary: str | None = None) -> dict:
    docs = {"summary": summary or f"Docs at Terraform Registry: {{@link {LINK}#{anchor} DemoThing#{anchor}}}."}
    if summary:
        docs["remarks"] = f"Docs at Terraform Registry: {{@link {LINK}#{anchor} DemoThing#{anchor}}}"
    return {"name": name, "type": jtype, "optional": optional, "docs": docs}


def fake_assembly() -> dict:
    """A tiny assembly shaped like a cdktf binding's, for one resource."""
    ns = "@demo/provider-aws.demoThing"
    resolvable = {"fqn": "cdktf.IResolvable"}
    return {
        "name": "@demo/provider-aws",
        "version": "1.0.0",
        "types": {
            f"{ns}.DemoThing": {
                "kind": "class",
                "fqn": f"{ns}.DemoThing",
                "base": "cdktf.TerraformResource",
                "docs": {"summary": f"Represents a {{@link {LINK} aws_demo_thing}}."},
                "initializer": {"parameters": [
                    {"name": "scope", "type": {"fqn": "constructs.Construct"}},
                    {"name": "id", "type": {"primitive": "string"}},
                    {"name": "config", "type": {"fqn": f"{ns}.DemoThingConfig"}},
                ]},
            },
            f"{ns}.DemoThingConfig": {
                "kind": "interface", "datatype": True, "fqn": f"{ns}.DemoThingConfig",
                "properties": [
                    prop("name", {"primitive": "string"}, "name", optional=False),
                    # jsii renames arguments that clash with meta-arguments;
                    # the registry anchor keeps the real name.
                    prop("countAttribute", {"primitive": "number"}, "count"),
                    prop("enabled", {"union": {"types": [{"primitive": "boolean"}, resolvable]}}, "enabled"),
                    prop("labels", {"collection": {"kind": "map", "elementtype": {"primitive": "string"}}}, "labels"),
                    prop("rule", {"union": {"types": [resolvable, {"collection": {
                        "kind": "array", "elementtype": {"fqn": f"{ns}.DemoThingRule"}}}]}},
                        "rule", optional=False, summary="rule block."),
                    prop("settings", {"fqn": f"{ns}.DemoThingSettings"}, "settings",
                         summary="Settings applied to the thing."),
                ],
            },
            f"{ns}.DemoThingRule": {
                "kind": "interface", "datatype": True, "fqn": f"{ns}.DemoThingRule",
                "properties": [prop("priority", {"primitive": "number"}, "priority", optional=False)],
            },
            f"{ns}.DemoThingSettings": {
                "kind": "interface", "datatype": True, "fqn": f"{ns}.DemoThingSettings",
                "properties": [prop("mode", {"primitive": "string"}, "mode")],
            },
        },
    }


def write_fake_wheel(directory: Path, module: str, dist: str, version: str, assembly: dict, provider_version: str):
    package_json = {"name": assembly["name"], "version": assembly["version"],
                    "cdktf": {"provider": {"name": "registry.terraform.io/hashicorp/aws", "version": provider_version}}}
    tarball = io.BytesIO()
    with tarfile.open(fileobj=tarball, mode="w:gz") as tf:
        for member, payload in (("package/.jsii", assembly), ("package/package.json", package_json)):
            data = json.dumps(payload).encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    wheel = directory / f"{dist.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr(f"{module}/_jsii/demo@{version}.jsii.tgz", tarball.getvalue())
    return wheel


def test_extractor_reads_names_requiredness_and_nesting_from_the_assembly(tmp_path):
    extractor = load_extractor()
    pkg = extractor.ProviderPackage("aws", "demo-provider-aws", "1.0.0", ("aws_demo_thing",))
    wheel = write_fake_wheel(tmp_path, "demo_provider_aws", pkg.pypi_name, pkg.pypi_version,
                             fake_assembly(), "9.9.9")
    provider, resources, notes = extractor.extract(pkg, wheel)

    assert provider == {"source": "hashicorp/aws", "version": "9.9.9",
                        "python_package": "demo-provider-aws==1.0.0", "jsii_assembly": "@demo/provider-aws@1.0.0"}
    schema = resources["aws_demo_thing"]
    assert schema["provider"] == "aws" and schema["provider_version"] == "9.9.9"
    assert schema["attributes"] == {
        "name": {"required": True, "type": "string"},
        "count": {"required": False, "type": "number"},
        "enabled": {"required": False, "type": "bool"},
        "labels": {"required": False, "type": "map", "element": {"type": "string"}},
        "rule": {"required": True, "type": "list", "block": True, "element": {
            "type": "object", "attributes": {"priority": {"required": True, "type": "number"}}}},
        "settings": {"required": False, "type": "object", "block": False, "attributes": {
            "mode": {"required": False, "type": "string"}}},
    }
    assert any("'countAttribute' is Terraform 'count'" in note for note in notes)


def test_extractor_refuses_an_assembly_without_the_wanted_resource(tmp_path):
    extractor = load_extractor()
    pkg = extractor.ProviderPackage("aws", "demo-provider-aws", "1.0.0", ("aws_other_thing",))
    wheel = write_fake_wheel(tmp_path, "demo_provider_aws", pkg.pypi_name, pkg.pypi_version,
                             fake_assembly(), "9.9.9")
    with pytest.raises(extractor.ExtractionError, match="no resource class for aws_other_thing"):
        extractor.extract(pkg, wheel)


def test_extractor_refuses_a_package_json_that_disagrees_with_the_docs(tmp_path):
    extractor = load_extractor()
    pkg = extractor.ProviderPackage("aws", "demo-provider-aws", "1.0.0", ("aws_demo_thing",))
    wheel = write_fake_wheel(tmp_path, "demo_provider_aws", pkg.pypi_name, pkg.pypi_version,
                             fake_assembly(), "9.9.8")
    with pytest.raises(extractor.ExtractionError, match="package.json says provider 9.9.8"):
        extractor.extract(pkg, wheel)


def test_extractor_command_line_writes_and_checks_the_file(tmp_path, monkeypatch, capsys):
    extractor = load_extractor()
    pkg = extractor.ProviderPackage("aws", "demo-provider-aws", "1.0.0", ("aws_demo_thing",))
    monkeypatch.setattr(extractor, "PACKAGES", (pkg,))
    write_fake_wheel(tmp_path, "demo_provider_aws", pkg.pypi_name, pkg.pypi_version, fake_assembly(), "9.9.9")
    output = tmp_path / "schemas.json"

    assert extractor.main(["--wheel-dir", str(tmp_path), "-o", str(output)]) == 0
    written = json.loads(output.read_text())
    assert written["format"] == 1 and set(written["resources"]) == {"aws_demo_thing"}
    assert extractor.main(["--wheel-dir", str(tmp_path), "-o", str(output), "--check"]) == 0

    output.write_text(output.read_text().replace('"number"', '"string"'))
    assert extractor.main(["--wheel-dir", str(tmp_path), "-o", str(output), "--check"]) == 1

    assert extractor.main(["--wheel-dir", str(tmp_path / "nowhere"), "-o", str(output)]) == 2
    assert "error: no wheel for demo-provider-aws==1.0.0" in capsys.readouterr().err
