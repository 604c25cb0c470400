"""`fastscale validate` / `schema` / the group: output, exit codes, and no heavy imports."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from fastscale.cli.main import COMMANDS, cli
from tests.conftest import EXAMPLES, ROOT


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_examples_are_valid():
    result = run("validate", *map(str, EXAMPLES))
    assert result.exit_code == 0, result.output
    assert result.output.count(": valid") == len(EXAMPLES)


def test_schema_error_exits_2_with_every_problem(write_yaml):
    path = write_yaml(
        "project: p\nendpoints:\n  - name: e\n    instance_type: ml.g6.2xlarge\n    colour: blue\n    model: {image: x}\n"
    )
    result = run("validate", str(path))
    assert result.exit_code == 2
    assert "region" in result.output and "required key is missing" in result.output
    assert "endpoints[0].colour" in result.output and "line 5" in result.output
    assert "Traceback" not in result.output


def test_json_output_shape(write_yaml, base_config):
    result = run("validate", "--json", str(write_yaml(base_config)))
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["valid"] is True and isinstance(payload["files"][0]["findings"], list)

    base_config["endpoints"][0]["instance_type"] = "ml.g6.2xlarg"
    result = run("validate", "--json", str(write_yaml(base_config)))
    assert result.exit_code == 2
    payload = json.loads(result.output)
    assert payload["valid"] is False
    [entry] = payload["files"]
    assert any(f["path"] == "endpoints[0].instance_type" and f["severity"] == "error" for f in entry["findings"])


def test_missing_file_is_bad_input(tmp_path):
    result = run("validate", str(tmp_path / "missing.yaml"))
    assert result.exit_code == 2
    assert "file not found" in result.output


def test_group_help_lists_commands_and_version():
    result = run("--help")
    assert result.exit_code == 0
    assert "validate" in result.output and "schema" in result.output
    assert "Exit codes" in result.output
    version = run("--version")
    assert version.exit_code == 0 and "fastscale" in version.output


def test_every_registered_command_has_help():
    for name in COMMANDS:
        result = run(name, "--help")
        if result.exit_code == 2 and "No such command" in result.output:
            continue  # command module not installed in this build
        assert result.exit_code == 0, (name, result.output)
        assert "Usage:" in result.output


def test_schema_command_prints_json_schema():
    result = run("schema")
    assert result.exit_code == 0
    assert json.loads(result.output)["title"] == "fastscale configuration"


def test_validate_does_not_import_the_engine_or_boto3():
    code = (
        "import sys; from click.testing import CliRunner; from cli.main import cli; "
        f"r = CliRunner().invoke(cli, ['validate', {str(EXAMPLES[0])!r}]); assert r.exit_code == 0, r.output; "
        "heavy = [m for m in ('cdktf', 'jsii', 'constructs', 'boto3', 'botocore') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_one_json_shape_for_one_file_or_several(write_yaml, base_config):
    good = str(write_yaml(base_config, "good.yaml"))
    bad = str(write_yaml("project: p\n", "bad.yaml"))
    one = json.loads(run("validate", "--json", good).output)
    several = run("validate", "--json", good, bad)
    assert several.exit_code == 2
    both = json.loads(several.output)
    assert set(one) == set(both) == {"valid", "exit_code", "files"}
    assert one["valid"] is True and one["exit_code"] == 0 and [f["file"] for f in one["files"]] == [good]
    assert both["valid"] is False and both["exit_code"] == 2
    assert [(f["file"], f["valid"]) for f in both["files"]] == [(good, True), (bad, False)]
    assert {"file", "valid", "findings"} <= set(both["files"][1])


def test_check_aws_without_aws_is_exit_1_and_never_says_valid(write_yaml, base_config, no_credentials):
    path = str(write_yaml(base_config))
    result = run("validate", "--check-aws", path)
    assert result.exit_code == 1, result.output
    assert "valid" not in result.stdout.replace("not checked", "")  # no "✓ ...: valid"
    assert "✓" not in result.stdout and "not checked with AWS" in result.stdout
    assert "no usable AWS credentials" in result.stdout

    doc = json.loads(run("validate", "--check-aws", "--json", path).output)
    assert doc["valid"] is False and doc["exit_code"] == 1
    [entry] = doc["files"]
    assert entry["aws_checked"] is False and "credentials" in entry["aws_error"] and entry["valid"] is False


def test_check_aws_without_aws_still_exits_2_for_a_file_with_errors(write_yaml, base_config, no_credentials):
    base_config["endpoints"][0]["instance_type"] = "ml.g6.2xlarg"
    result = run("validate", "--check-aws", str(write_yaml(base_config)))
    assert result.exit_code == 2 and "invalid" in result.stdout


def test_rule_findings_carry_the_line_of_their_path(write_yaml):
    text = (ROOT / "examples" / "multi-model.yaml").read_text()
    lines = text.splitlines()
    # The second component's copies, and the endpoint's instance type, made wrong in place.
    copies = [i for i, line in enumerate(lines) if line.strip().startswith("copies:")][1]
    lines[copies] = lines[copies].replace("min: 0", "min: 9")
    itype = next(i for i, line in enumerate(lines) if line.strip().startswith("instance_type:"))
    lines[itype] = lines[itype].replace("ml.g6.12xlarge", "ml.g6.13xlarge")
    path = str(write_yaml("\n".join(lines) + "\n"))

    doc = json.loads(run("validate", "--json", path).output)
    where = {(f["code"], f["path"]): f["line"] for f in doc["files"][0]["findings"]}
    assert where[("FS001", "endpoints[0].instance_type")] == itype + 1
    assert where[("FS009", "endpoints[0].inference_components[1].copies.min")] == copies + 1

    human = run("validate", path).output
    assert f"line {itype + 1}, endpoints[0].instance_type" in human


def _thirty_second_scale_from_zero():
    from tests.rules.conftest import scale_to_zero_config

    data = scale_to_zero_config()
    data["endpoints"][0]["inference_components"][0]["autoscaling"] = {"scale_from_zero": {"period": 30}}
    return data


def test_a_note_is_shown_but_neither_fails_nor_counts_as_a_warning(write_yaml):
    path = write_yaml(_thirty_second_scale_from_zero())
    result = run("validate", str(path))
    assert result.exit_code == 0, result.output
    assert "1 note" in result.output and "FS028" in result.output
    assert "valid (1 note(s))" in result.output and "warning" not in result.output

    result = run("validate", "--json", str(path))
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["valid"] is True and payload["exit_code"] == 0
    [entry] = payload["files"]
    assert [(f["code"], f["severity"]) for f in entry["findings"]] == [("FS028", "info")]


def test_commands_that_act_do_not_print_notes(write_yaml, capsys):
    from fastscale.cli.common import load_checked

    checked = load_checked(str(write_yaml(_thirty_second_scale_from_zero())))
    assert [f.code for f in checked.findings] == ["FS028"]  # kept for whoever wants them
    assert "FS028" not in capsys.readouterr().out


def test_values_the_providers_refuse_exit_2_before_anything_runs(write_yaml, base_config):
    """An adopted configuration kept by name while awscc's is needed, an override hashicorp/aws refuses, and a
    scaling policy name its import parser would split: each a clear finding (or field error), exit 2."""
    ep = base_config["endpoints"][0]
    ep.update(metrics_publish_frequency=10, adopted={"endpoint": "chat-live", "endpoint_config": "chat-live-config"})
    result = run("validate", "--json", str(write_yaml(base_config)))
    assert result.exit_code == 2, result.output
    findings = json.loads(result.output)["files"][0]["findings"]
    assert [(f["code"], f["path"]) for f in findings if f["severity"] == "error"] == [
        ("FS112", "endpoints[0].adopted.endpoint_config")]

    ep.pop("metrics_publish_frequency")
    ep["adopted"].pop("endpoint_config")
    ep["overrides"] = {"aws_sagemaker_endpoint_configuration": {"production_variants.0.volume_size_in_gb": 99999}}
    result = run("validate", str(write_yaml(base_config)))
    assert result.exit_code == 2 and "FS106" in result.output and "1 to 512" in result.output

    ep.pop("overrides")
    ep["adopted"]["scaling_policy"] = "team/chat"
    result = run("validate", str(write_yaml(base_config)))
    assert result.exit_code == 2 and "adopted.scaling_policy" in result.output and "splits on '/'" in result.output
    assert "Traceback" not in result.output


def _multi_model_with(**faults):
    """examples/multi-model.yaml on a 4-GPU instance, its three components changed as ``faults`` says."""
    import yaml

    config = yaml.safe_load((ROOT / "examples" / "multi-model.yaml").read_text())
    config["endpoints"][0]["instance_type"] = "ml.g6.12xlarge"
    components = config["endpoints"][0]["inference_components"]
    components[2]["resources"]["accelerators"] = 99  # a rule error (FS006): no copy fits on the instance
    if faults.get("bad_min"):
        components[0]["copies"]["min"] = "many"  # a schema error in a key with a default
    if faults.get("no_image"):
        del components[0]["image"]  # a schema error that leaves the whole component out
    return config


def test_schema_and_rule_errors_are_reported_together(write_yaml):
    result = run("validate", str(write_yaml(_multi_model_with(bad_min=True, no_image=True))))
    assert result.exit_code == 2
    assert "inference_components[0].image: required key is missing" in result.output
    assert "inference_components[0].copies.min" in result.output
    # the rule error of the third component, at its own index although the first one was left out
    assert "FS006" in result.output and "endpoints[0].inference_components[2].resources.accelerators" in result.output
    assert "could not check endpoints[0].inference_components[0]" in result.output
    assert "invalid (3 error(s)" in result.output and ": valid" not in result.output


def test_json_reports_schema_and_rule_errors_and_what_the_rules_did_not_check(write_yaml):
    result = run("validate", "--json", str(write_yaml(_multi_model_with(bad_min=True))))
    assert result.exit_code == 2
    [entry] = json.loads(result.output)["files"]
    assert entry["valid"] is False
    codes = {(f["code"], f["path"]) for f in entry["findings"]}
    assert ("FS000", "endpoints[0].inference_components[0].copies.min") in codes
    assert ("FS006", "endpoints[0].inference_components[2].resources.accelerators") in codes
    assert entry["not_checked_by_rules"] == ["endpoints[0].inference_components[0].copies.min"]
    # no rule speaks of the value the rules did not see (its default stood in for it)
    assert not [c for c, p in codes if c != "FS000" and p.startswith("endpoints[0].inference_components[0].copies")]


def test_a_file_without_its_required_top_level_keys_gets_no_rule_findings(write_yaml):
    result = run("validate", "--json", str(write_yaml("project: p\n")))
    assert result.exit_code == 2
    [entry] = json.loads(result.output)["files"]
    assert {f["code"] for f in entry["findings"]} == {"FS000"} and "not_checked_by_rules" not in entry
