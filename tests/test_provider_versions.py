"""Provider version constraints (Terraform syntax) and the emulator target: parsing, what a constraint
admits, the providers a synthesized stack declares, and --endpoint-url on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.base.provider_versions import Constraint, ConstraintError, parse_version
from fastscale.infra.config import ConfigError, parse_config


@pytest.mark.parametrize(
    ("text", "admitted", "refused"),
    [
        ("~> 6.25", ["6.25.0", "6.99.9"], ["6.24.9", "7.0.0"]),
        ("~> 6.25.1", ["6.25.1", "6.25.9"], ["6.25.0", "6.26.0"]),
        (">= 1.106.0, < 2.0", ["1.106.0", "1.999.0"], ["1.105.9", "2.0.0"]),
        ("= 5.100.0", ["5.100.0"], ["5.100.1"]),
        ("5.100.0", ["5.100.0"], ["5.99.0"]),
        ("> 6.0, != 6.3.0", ["6.0.1", "6.4.0"], ["6.0.0", "6.3.0"]),
    ],
)
def test_constraints_admit_what_terraform_would(text, admitted, refused):
    c = Constraint.parse(text)
    assert all(c.admits(parse_version(v)) for v in admitted)
    assert not any(c.admits(parse_version(v)) for v in refused)


@pytest.mark.parametrize("text", ["", "latest", ">= 6.x", "=> 6.0", "6.0.0.1"])
def test_malformed_constraints_are_refused(text):
    with pytest.raises(ConstraintError):
        Constraint.parse(text)


def test_the_oldest_admitted_version_below_a_need_is_found_exactly():
    assert Constraint.parse(">= 5.100.0, < 7").oldest_admitted_below((6, 21, 0)) == (5, 100, 0)
    assert Constraint.parse("> 6.20.9").oldest_admitted_below((6, 21, 0)) == (6, 20, 10)
    assert Constraint.parse("~> 6.25").oldest_admitted_below((6, 21, 0)) is None


def test_config_errors_name_the_field_and_show_an_example(base_config):
    base_config["providers"] = {"aws": "> 7.0, < 6.0"}
    base_config["endpoint_url"] = "localhost:4566"
    with pytest.raises(ConfigError) as err:
        parse_config(base_config)
    problems = {p.path: p.message for p in err.value.problems}
    assert problems["providers.aws"] == "'> 7.0, < 6.0' admits no version at all"
    assert "is not an http(s) URL such as http://localhost:4566" in problems["endpoint_url"]


# --------------------------------------------------------------------------------------------- stacks


def _synth(config_dict, tmp_path):
    from fastscale.stacks.app import synthesize

    result = synthesize(parse_config(config_dict), tmp_path)
    return json.loads(result.stack_file.read_text())


def test_a_stack_without_awscc_resources_requires_only_the_aws_provider(base_config, tmp_path):
    base_config["providers"] = {"aws": ">= 5.100.0, < 7.0"}
    doc = _synth(base_config, tmp_path)
    assert doc["terraform"]["required_providers"] == {"aws": {"source": "hashicorp/aws", "version": ">= 5.100.0, < 7.0"}}
    assert list(doc["provider"]) == ["aws"]
    assert doc["provider"]["aws"] == [{"region": "us-east-1"}]  # nothing emulator-specific for a real account


def test_an_emulator_target_points_every_service_of_the_aws_provider_at_it(base_config, tmp_path):
    base_config["endpoint_url"] = "http://127.0.0.1:5000/"
    [aws] = _synth(base_config, tmp_path)["provider"]["aws"]
    assert aws["endpoints"] == [{s: "http://127.0.0.1:5000" for s in
                                 ("applicationautoscaling", "cloudwatch", "iam", "s3", "sagemaker", "sts")}]
    assert (aws["skip_credentials_validation"], aws["skip_requesting_account_id"], aws["skip_metadata_api_check"]) == (
        True, True, "true")


def test_state_in_the_emulator_configures_the_s3_backend_for_it(base_config, tmp_path):
    url = "http://127.0.0.1:5000"
    base_config.update(endpoint_url=url, state={"backend": "s3", "bucket": "tf-state", "key": "demo.tfstate",
                                                "endpoint_url": url})
    backend = _synth(base_config, tmp_path)["terraform"]["backend"]["s3"]
    assert backend["endpoints"] == {"s3": url} and backend["use_path_style"] is True
    assert backend["bucket"] == "tf-state"


@pytest.mark.parametrize("send", [False, True], ids=["dummy", "sent"])
def test_the_provider_and_the_backend_hold_dummy_credentials_unless_the_command_line_sends_real_ones(
        base_config, tmp_path, send):
    # Static credentials come first in the aws provider's and the S3 backend's chains: a stack run by another
    # tool (`cdktf deploy`, plain terraform) in an environment with real credentials still sends these.
    url = "http://127.0.0.1:5000"
    base_config.update(endpoint_url=url, state={"backend": "s3", "bucket": "tf-state", "key": "demo.tfstate",
                                                "endpoint_url": url})
    from fastscale.stacks.app import synthesize

    config = parse_config(base_config).sending_credentials_to_endpoint(send)
    doc = json.loads(synthesize(config, tmp_path).stack_file.read_text())
    [aws] = doc["provider"]["aws"]
    backend = doc["terraform"]["backend"]["s3"]
    expected = (None, None) if send else ("testing", "testing")
    assert (aws.get("access_key"), aws.get("secret_key")) == expected
    assert (backend.get("access_key"), backend.get("secret_key")) == expected


# --------------------------------------------------------------------------------------------- CLI


def test_endpoint_url_option_reaches_the_stack_and_is_announced(write_yaml, base_config, tmp_path):
    path = write_yaml(base_config)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["synth", str(path), "--out", str(out), "--json",
                                      "--endpoint-url", "http://localhost:4566"])
    assert result.exit_code == 0, result.output
    assert "EMULATOR TARGET: every AWS call goes to http://localhost:4566" in result.stderr
    stack = json.loads(result.stdout)["stack_file"]
    assert json.loads(Path(stack).read_text())["provider"]["aws"][0]["endpoints"][0]["sagemaker"] == "http://localhost:4566"


def test_a_bad_endpoint_url_is_a_usage_error(write_yaml, base_config):
    result = CliRunner().invoke(cli, ["synth", str(write_yaml(base_config)), "--endpoint-url", "ftp://x"])
    assert result.exit_code == 2 and "is not an http(s) URL" in result.output


def test_the_option_makes_an_s3_state_config_invalid_before_anything_runs(write_yaml, base_config, tmp_path):
    base_config["state"] = {"backend": "s3", "bucket": "tf-state", "key": "demo.tfstate"}
    path = write_yaml(base_config)
    result = CliRunner().invoke(cli, ["synth", str(path), "--out", str(tmp_path / "out"), "--json"],
                                env={"FASTSCALE_ENDPOINT_URL": "http://localhost:4566"})
    assert result.exit_code == 2
    [report] = json.loads(result.stdout)["files"]
    assert [f["code"] for f in report["findings"]] == ["FS070"]
    assert not (tmp_path / "out").exists()
    assert yaml.safe_load(path.read_text())["state"]["backend"] == "s3"  # the file itself is untouched
