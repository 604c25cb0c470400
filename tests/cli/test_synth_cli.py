"""`fastscale synth`: validates first, writes the cdktf layout, reports what it wrote."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from fastscale.cli.main import cli
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "multi-model.yaml"


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_synth_writes_the_stack(tmp_path):
    out = tmp_path / "out"
    result = run("synth", str(EXAMPLE), "--out", str(out))
    assert result.exit_code == 0, result.output
    stack_file = out / "stacks" / "assist" / "cdk.tf.json"
    assert (out / "manifest.json").is_file() and stack_file.is_file()
    doc = json.loads(stack_file.read_text())
    assert len(doc["resource"]["awscc_sagemaker_inference_component"]) == 3
    assert "awscc_sagemaker_inference_component" in result.output
    assert str(stack_file) in result.output.replace("\n", "")


def test_synth_json(tmp_path):
    out = tmp_path / "out"
    result = run("synth", str(EXAMPLE), "--out", str(out), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["stack_name"] == "assist"
    assert data["stack_dir"] == str(out / "stacks" / "assist")
    doc = json.loads((out / "stacks" / "assist" / "cdk.tf.json").read_text())
    assert data["resource_counts"] == {t: len(items) for t, items in doc["resource"].items()}
    # the detection time each component's metric implies: 10-second metric, 3 datapoints, ~30 s
    assert [(d["workload"], d["scale_out_detection_s"], d["zero_to_one_s"]) for d in data["detection"]] == [
        ("assist-qwen3-8b", 30, 60), ("assist-llama3-8b", 30, 60), ("assist-mistral-7b", 30, 60)]
    assert all(d["high_resolution"] for d in data["detection"])


def test_synth_prints_detection_time(tmp_path, write_yaml, base_config):
    base_config["endpoints"][0]["model"]["autoscaling"] = {"metric": "invocations"}
    result = run("synth", str(write_yaml(base_config)), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "Scale-out detection" in result.output
    assert "InvocationsPerInstance" in result.output and "~3 min" in result.output


def test_default_output_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("synth", str(EXAMPLE))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cdktf.out" / "stacks" / "assist" / "cdk.tf.json").is_file()


def test_schema_error_exits_2_and_writes_nothing(tmp_path, write_yaml, base_config):
    base_config["endpoints"][0]["instance_typo"] = "ml.g6.2xlarge"
    out = tmp_path / "out"
    result = run("synth", str(write_yaml(base_config)), "--out", str(out))
    assert result.exit_code == 2
    assert "instance_typo" in result.output
    assert not out.exists()


def test_rule_error_exits_2_and_writes_nothing(tmp_path, write_yaml, base_config):
    base_config["endpoints"][0]["metrics_publish_frequency"] = 15  # not a value the API accepts
    out = tmp_path / "out"
    result = run("synth", str(write_yaml(base_config)), "--out", str(out), "--json")
    assert result.exit_code == 2
    assert json.loads(result.output)["valid"] is False
    assert not out.exists()


def test_missing_file_exits_2(tmp_path):
    result = run("synth", str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert not (tmp_path / "out").exists()


def test_main_py_validates_before_synthesis(tmp_path, write_yaml, base_config, monkeypatch):
    """`cdktf synth` runs main.py: a bad config must stop it the same way."""
    import subprocess
    import sys

    base_config["endpoints"][0]["metrics_publish_frequency"] = 15
    bad = write_yaml(base_config)
    env = {"FASTSCALE_CONFIG": str(bad), "CDKTF_OUTDIR": str(tmp_path / "out"), "PATH": "/usr/bin:/bin",
           "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "18,20"}
    proc = subprocess.run([sys.executable, str(ROOT / "main.py")], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    # On stderr: when the cdktf CLI runs the app and it fails, stderr is the only output it shows.
    assert "FS021" in proc.stderr and "FS021" not in proc.stdout
    assert not (tmp_path / "out").exists()

    good = write_yaml(yaml.safe_load(EXAMPLE.read_text()), "good.yaml")
    env["FASTSCALE_CONFIG"] = str(good)
    proc = subprocess.run([sys.executable, str(ROOT / "main.py")], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out" / "stacks" / "assist" / "cdk.tf.json").is_file()


def test_synth_refuses_to_orphan_old_state(tmp_path, write_yaml, base_config, monkeypatch):
    monkeypatch.chdir(tmp_path)
    old = tmp_path / "cdktf.out" / "terraform.demo.tfstate"  # where `make demo` used to leave it
    old.parent.mkdir()
    old.write_text('{"version": 4}')
    config = write_yaml(base_config)
    result = run("synth", str(config), "--out", "cdktf.out/demo")
    assert result.exit_code == 2
    assert f"mv {old} {tmp_path / 'terraform.demo.us-east-1.tfstate'}" in result.output.replace("\n", "")
    assert "Traceback" not in result.output and not (tmp_path / "cdktf.out" / "demo").exists()
    as_json = run("synth", str(config), "--out", "cdktf.out/demo", "--json")
    assert as_json.exit_code == 2
    assert "mv " in json.loads(as_json.stdout)["error"]


def test_synth_refuses_state_inside_the_output_directory(tmp_path, write_yaml, base_config, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("synth", str(write_yaml(base_config)), "--out", ".")
    assert result.exit_code == 2 and "inside the output directory" in result.output
    assert not (tmp_path / "stacks").exists()


SECOND = ROOT / "examples" / "qwen3-8b.yaml"


def test_several_files_are_synthesized_each_into_its_stack_directory_as_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("synth", str(EXAMPLE), str(SECOND), "--out", "all", "--json")
    assert result.exit_code == 0, result.output
    stacks = json.loads(result.output)["stacks"]
    assert [s["stack_name"] for s in stacks] == ["assist", "chat-prod"]  # the order of the files
    for name, config in (("assist", EXAMPLE), ("chat-prod", SECOND)):
        alone = run("synth", str(config), "--out", f"alone/{name}")  # same depth: same relative state path
        assert alone.exit_code == 0, alone.output
        for part in ("manifest.json", f"stacks/{name}/cdk.tf.json"):
            assert (tmp_path / "all" / name / part).read_bytes() == (tmp_path / "alone" / name / part).read_bytes()
    assert stacks[1]["stack_file"] == "all/chat-prod/stacks/chat-prod/cdk.tf.json"


def test_several_files_in_text_report_every_stack(tmp_path):
    result = run("synth", str(EXAMPLE), str(SECOND), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    assert "stack assist" in result.output and "stack chat-prod" in result.output
    assert result.output.count("✓ wrote") == 2


def test_one_bad_file_among_several_writes_nothing(tmp_path, write_yaml, base_config):
    base_config["endpoints"][0]["metrics_publish_frequency"] = 15
    out = tmp_path / "out"
    result = run("synth", str(EXAMPLE), str(write_yaml(base_config)), "--out", str(out))
    assert result.exit_code == 2
    assert "FS021" in result.output
    assert not out.exists()


def test_two_files_with_the_same_stack_name_are_refused(tmp_path, write_yaml):
    copy = write_yaml(EXAMPLE.read_text(), "copy.yaml")
    out = tmp_path / "out"
    result = run("synth", str(EXAMPLE), str(copy), "--out", str(out), "--json")
    assert result.exit_code == 2
    error = json.loads(result.output)["error"]
    assert "both define stack 'assist'" in error and str(copy) in error
    assert not out.exists()


def test_several_files_check_every_output_path_before_writing_any(tmp_path):
    out = tmp_path / "out"
    victim = tmp_path / "elsewhere"
    (out / "chat-prod").mkdir(parents=True)
    (out / "chat-prod" / "manifest.json").symlink_to(victim)
    result = run("synth", str(EXAMPLE), str(SECOND), "--out", str(out))
    assert result.exit_code == 2
    assert "symbolic link" in result.output
    assert not (out / "assist").exists() and not victim.exists()
