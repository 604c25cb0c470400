import json

import pytest

CONFIG = "aws_sagemaker_endpoint_configuration"


def _set(data, path, value, type_=CONFIG):
    data["endpoints"][0]["overrides"] = {type_: {path: value}}
    return data


@pytest.mark.parametrize(("path", "value"), [
    ("production_variants.0.enable_ssm_access", True),
    ("production_variants.0.core_dump_config.destination_s3_uri", "s3://dumps/"),
    ("production_variants.0.routing_config.0.routing_strategy", "RANDOM"),
    ("data_capture_config", {"destination_s3_uri": "s3://c/", "initial_sampling_percentage": 5,
                             "capture_options": [{"capture_mode": "Input"}]}),
    ("production_variants.0.serverless_config", None),
])
def test_schema_paths_and_values_pass(run_rule, single_model, path, value):
    assert run_rule("FS102", _set(single_model, path, value)) == []


def test_a_misspelt_attribute_is_named_with_a_suggestion(run_rule, hits, single_model):
    found = run_rule("FS102", _set(single_model, "production_variants.0.enable_ssm_acess", True))
    assert hits(found) == [("FS102", "error",
                            'endpoints[0].overrides.aws_sagemaker_endpoint_configuration["production_variants.0.enable_ssm_acess"]')]
    assert "'enable_ssm_acess'" in found[0].message and "hashicorp/aws 6.25.0" in found[0].message
    assert found[0].hint.startswith("did you mean enable_ssm_access?")


@pytest.mark.parametrize(("path", "value", "said"), [
    ("production_variants.enable_ssm_access", True, "must be an index"),
    ("production_variants.0.core_dump_config.0.destination_s3_uri", "s3://d/", "single block"),
    ("production_variants.0.instance_type.x", "y", "single value"),
    ("production_variants.0.enable_ssm_access", "yes", "true or false"),
    ("production_variants.0.initial_variant_weight", True, "a number"),
    ("data_capture_config", {"destination_s3_uri": "s3://c/", "sampling": 5}, "'sampling'"),
    ("production_variants..x", 1, "empty part"),
])
def test_paths_and_values_that_do_not_fit_the_schema(run_rule, hits, single_model, path, value, said):
    found = run_rule("FS102", _set(single_model, path, value))
    assert [h[:2] for h in hits(found)] == [("FS102", "error")]
    assert said in found[0].message


def test_awscc_types_are_checked_against_the_awscc_schema(run_rule, hits, components):
    comp = components["endpoints"][0]["inference_components"][0]
    comp["overrides"] = {"awscc_sagemaker_inference_component": {"specification.data_cache_config.enable_cachin": False}}
    found = run_rule("FS102", components)
    assert hits(found) == [("FS102", "error", 'endpoints[0].inference_components[0].overrides.'
                            'awscc_sagemaker_inference_component["specification.data_cache_config.enable_cachin"]')]
    assert "hashicorp/awscc 1.106.0" in found[0].message and "did you mean enable_caching?" in found[0].hint
    comp["overrides"] = {"awscc_sagemaker_inference_component": {"specification.data_cache_config.enable_caching": False}}
    assert run_rule("FS102", components) == []


def test_the_cli_exits_2_naming_the_path_and_line(tmp_path):
    from click.testing import CliRunner

    from fastscale.cli.main import cli

    path = tmp_path / "fastscale.yaml"
    path.write_text("""\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
    overrides:
      aws_sagemaker_endpoint_configuration:
        production_variants.0.enable_ssm_acess: true
""")
    result = CliRunner().invoke(cli, ["validate", str(path), "--json"])
    assert result.exit_code == 2, result.output
    found = [f for f in json.loads(result.output)["files"][0]["findings"] if f["code"] == "FS102"]
    assert found and found[0]["line"] == 10
    assert "did you mean enable_ssm_access?" in found[0]["hint"]


def test_an_index_past_what_fastscale_writes_is_refused(run_rule, hits, single_model):
    found = run_rule("FS102", _set(single_model, "production_variants.3.enable_ssm_access", True))
    assert hits(found) == [("FS102", "error",
                            'endpoints[0].overrides.aws_sagemaker_endpoint_configuration["production_variants.3.enable_ssm_access"]')]
    assert "writes 1 element(s)" in found[0].message and "index up to 1" in found[0].hint
    # The next element (1) is allowed (it is created); on a list fastscale does not count, only the first.
    assert run_rule("FS102", _set(single_model, "production_variants.1.variant_name", "b")) == []
    found = run_rule("FS102", _set(single_model, "production_variants.0.routing_config.1.routing_strategy", "RANDOM"))
    assert "indexes past the first" in found[0].message
    # With fallback pools the variant has one instance pool per type (awscc's configuration).
    single_model["endpoints"][0]["capacity"] = {"fallback": [{"instance_type": "ml.g5.2xlarge"}]}
    assert run_rule("FS102", _set(single_model, "production_variants.0.instance_pools.2.priority", 3,
                                  "awscc_sagemaker_endpoint_config")) == []
    assert hits(run_rule("FS102", _set(single_model, "production_variants.0.instance_pools.3.priority", 3,
                                       "awscc_sagemaker_endpoint_config")))[0][:2] == ("FS102", "error")
