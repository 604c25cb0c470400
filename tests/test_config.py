"""The config model: what it accepts, and that every rejection names the field (and line) to fix."""

from __future__ import annotations

import json

import pytest

from fastscale.infra.config import ConfigError, S3State, dump_json_schema, json_schema, load_config, parse_config
from tests.conftest import EXAMPLES, ROOT


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_load(path):
    config = load_config(path)
    assert config.endpoints, "every example defines endpoints"


def test_defaults_turn_on_fast_scaling(base_config):
    base_config["endpoints"][0].pop("model")
    base_config["endpoints"][0]["inference_components"] = [
        {"name": "a", "image": "x", "resources": {"memory_mb": 1024}}
    ]
    ep = parse_config(base_config).endpoints[0]
    comp = ep.inference_components[0]
    assert comp.data_cache is True
    assert comp.autoscaling.metric == "high_resolution"
    assert comp.autoscaling.scale_from_zero.period == 60
    assert ep.alarms.enabled is True
    assert ep.uses_inference_components and not ep.scales_to_zero


def test_unknown_key_names_path_and_line(write_yaml):
    path = write_yaml(
        "project: p\nregion: us-east-1\nendpoints:\n  - name: e\n    instance_type: ml.g6.2xlarge\n"
        "    instancez: {min: 1}\n    model: {image: x}\n"
    )
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    (problem,) = exc.value.problems
    assert problem.path == "endpoints[0].instancez"
    assert problem.line == 6
    assert "unknown key" in problem.message and "did you mean instances" in problem.message


@pytest.mark.parametrize(
    ("where", "typo", "meant"),
    [
        ((), "regoin", "region"),
        (("endpoints", 0, "inference_components", 0), "copys", "copies"),
        (("endpoints", 0, "inference_components", 0, "autoscaling"), "target_concurency", "target_concurrency"),
        (("endpoints", 0, "inference_components", 0, "autoscaling"), "scale_form_zero", "scale_from_zero"),
        (("endpoints", 0), "instance", "instances"),
    ],
)
def test_a_misspelled_key_gets_the_keys_of_its_own_section_suggested(where, typo, meant):
    import yaml

    data = yaml.safe_load((ROOT / "examples" / "multi-model.yaml").read_text())
    section = data
    for part in where:
        section = section[part]
    section[typo] = section.pop(meant, 1)
    with pytest.raises(ConfigError) as exc:
        parse_config(data)
    [unknown] = [p for p in exc.value.problems if p.path.endswith(typo)]
    assert f"did you mean {meant}" in unknown.message


def test_a_key_like_nothing_known_gets_no_guess(base_config):
    base_config["endpoints"][0]["colour"] = "blue"
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    (problem,) = exc.value.problems
    assert "did you mean" not in problem.message and "fastscale schema" in problem.message


def test_every_schema_problem_is_reported_at_once(base_config):
    base_config.pop("region")
    base_config["endpoints"][0]["instances"]["min"] = "one"
    base_config["endpoints"][0]["model"]["autoscaling"] = {"metric": "per_minute"}
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    paths = {p.path for p in exc.value.problems}
    assert paths == {
        "region",
        "endpoints[0].instances.min",
        "endpoints[0].model.autoscaling.metric",
    }


def test_model_and_components_are_exclusive(base_config):
    base_config["endpoints"][0]["inference_components"] = [
        {"name": "a", "image": "x", "resources": {"memory_mb": 1024}}
    ]
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    assert exc.value.problems[0].path == "endpoints[0]"
    assert "not both" in exc.value.problems[0].message


def test_endpoint_needs_a_workload(base_config):
    base_config["endpoints"][0].pop("model")
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    assert "inference_components" in exc.value.problems[0].message


def test_invalid_yaml_reports_line(write_yaml):
    path = write_yaml("project: p\nregion: [us-east-1\nendpoints: []\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert "not valid YAML" in exc.value.problems[0].message
    assert exc.value.problems[0].line is not None


def test_non_mapping_and_missing_file(write_yaml, tmp_path):
    with pytest.raises(ConfigError, match="YAML mapping"):
        load_config(write_yaml("- just\n- a list\n"))
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "nope.yaml")


def test_state_backend_is_discriminated(base_config):
    base_config["state"] = {"backend": "s3", "bucket": "tf-state", "key": "demo.tfstate"}
    state = parse_config(base_config).state
    assert isinstance(state, S3State) and state.use_lockfile and state.encrypt
    base_config["state"] = {"backend": "s3", "key": "demo.tfstate"}
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    assert [p.path for p in exc.value.problems] == ["state.bucket"]


def test_json_schema_describes_contract_keys():
    schema = json_schema()
    assert {"project", "region", "tags", "endpoints", "state"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False
    component = schema["$defs"]["InferenceComponentSpec"]["properties"]
    assert {"resources", "copies", "data_cache", "autoscaling", "model_size_gb"} <= set(component)


def test_committed_schema_is_current():
    committed = (ROOT / "docs" / "fastscale.schema.json").read_text()
    assert json.loads(committed) == json.loads(dump_json_schema()), "run: fastscale schema --out docs/fastscale.schema.json"


def test_committed_config_reference_is_current():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "scripts/gen_config_reference.py", "--check"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", ".NaN"])
def test_nan_and_infinity_are_refused_with_the_field_and_line(write_yaml, value):
    path = write_yaml(
        "project: p\nregion: us-east-1\nendpoints:\n  - name: e\n    instance_type: ml.g6.2xlarge\n"
        f"    alarms: {{gpu_memory_percent: {value}}}\n    model: {{image: x}}\n"
    )
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    (problem,) = exc.value.problems
    assert (problem.path, problem.line) == ("endpoints[0].alarms.gpu_memory_percent", 6)
    assert "finite number" in problem.message


@pytest.mark.parametrize("value", [99999999999999999999, 2**31, -(2**31) - 1, 10**99])
def test_integers_beyond_32_bits_are_refused(base_config, value):
    base_config["endpoints"][0]["instances"]["max"] = value
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    (problem,) = exc.value.problems
    assert problem.path == "endpoints[0].instances.max"
    assert f"a {len(str(abs(value)))}-digit number is more than AWS APIs accept" in problem.message
    assert "2147483647" in problem.message


def test_largest_32_bit_integer_is_kept_exactly(base_config):
    base_config["endpoints"][0]["instances"]["max"] = 2**31 - 1
    assert parse_config(base_config).endpoints[0].instances.max == 2147483647


@pytest.mark.parametrize(("key", "value"), [("max", True), ("max", "3"), ("max", 2.5)])
def test_counts_must_be_real_integers(base_config, key, value):
    base_config["endpoints"][0]["instances"][key] = value
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    assert exc.value.problems[0].path == f"endpoints[0].instances.{key}"


def test_booleans_are_not_numbers(base_config):
    base_config["endpoints"][0]["model"]["model_size_gb"] = True
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    assert "boolean" in exc.value.problems[0].message


@pytest.mark.parametrize(
    ("where", "value"),
    [(("model", "environment"), {f"V{i}": "x" for i in range(101)}), (("model", "environment"), {"BAD-NAME": "x"}),
     (("model", "environment"), {"V": "x" * 1025}), (("volume_size_gb",), 513), (("volume_size_gb",), 0)],
)
def test_api_limits_on_environment_and_volume(base_config, where, value):
    target = base_config["endpoints"][0]
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    assert exc.value.problems[0].path.startswith("endpoints[0]." + ".".join(where))


def test_secret_shorthand_and_full_form(base_config):
    arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:hf-AbCdEf"
    key = "arn:aws:kms:us-east-1:123456789012:key/abc"
    base_config["endpoints"][0]["model"]["secrets"] = {"HF_TOKEN": arn, "DB_PASS": {"arn": arn, "kms_key_arn": key}}
    secrets = parse_config(base_config).endpoints[0].model.secrets
    assert (secrets["HF_TOKEN"].arn, secrets["HF_TOKEN"].kms_key_arn) == (arn, None)
    assert secrets["DB_PASS"].kms_key_arn == key


def test_problem_list_is_capped(base_config):
    from fastscale.infra.config import MAX_PROBLEMS_REPORTED

    base_config.update({f"unknown_{i}": i for i in range(MAX_PROBLEMS_REPORTED + 30)})
    with pytest.raises(ConfigError) as exc:
        parse_config(base_config)
    assert len(exc.value.problems) == MAX_PROBLEMS_REPORTED + 1
    assert exc.value.problems[-1].message.startswith("30 more problems not shown")
