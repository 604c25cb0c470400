"""`fastscale estimate`: output, --json shape, what-if mode, bad input (exit 2), --plot."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from tests.conftest import ROOT

QWEN = str(ROOT / "examples" / "qwen3-8b.yaml")
MULTI = str(ROOT / "examples" / "multi-model.yaml")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(*args):
    return CliRunner().invoke(cli, ["estimate", *args])


def test_human_output_for_a_file():
    result = run(MULTI)
    assert result.exit_code == 0, result.output
    for component in ("qwen3-8b", "llama3-8b", "mistral-7b"):
        assert f"shared / {component}" in result.output
    for heading in ("data cache", "image cache", "image pull", "from", "detection", "health check", "total"):
        assert heading in result.output
    assert "On-demand cost" in result.output and "scale to zero saves" in result.output


def test_json_shape():
    result = run(MULTI, "--json")
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert set(payload) == {"estimates", "cost"}
    assert [(e["endpoint"], e["component"]) for e in payload["estimates"]] == [
        ("shared", "qwen3-8b"), ("shared", "llama3-8b"), ("shared", "mistral-7b")
    ]
    for est in payload["estimates"]:
        names = [s["name"] for s in est["scenarios"]]
        assert names == ["copy_data_cache", "copy_no_data_cache", "instance_image_cache",
                         "instance_no_image_cache", "from_zero"]
        for s in est["scenarios"]:
            assert set(s) == {"name", "total_seconds", "first_capacity_seconds", "full_capacity_seconds", "phases"}
            assert all(set(p) == {"name", "seconds"} for p in s["phases"])
            assert s["total_seconds"] > 0
    assert payload["cost"]["endpoints"][0]["scales_to_zero"] is True


def test_single_model_file_has_instance_scenarios_only():
    payload = json.loads(run(QWEN, "--json").output)
    [est] = payload["estimates"]
    assert est["component"] is None
    assert [s["name"] for s in est["scenarios"]] == ["instance_image_cache", "instance_no_image_cache"]


def test_hours_at_max_changes_the_monthly_cost():
    low = json.loads(run(QWEN, "--json", "--hours-at-max", "1").output)["cost"]["total"]["monthly_usd"]
    high = json.loads(run(QWEN, "--json", "--hours-at-max", "10").output)["cost"]["total"]["monthly_usd"]
    assert high > low


def test_what_if():
    result = run("--instance-type", "ml.g6.2xlarge", "--model-size-gb", "16", "--image-size-gb", "17.7", "--json")
    assert result.exit_code == 0, result.output
    [est] = json.loads(result.output)["estimates"]
    assert est["instance_type"] == "ml.g6.2xlarge" and est["inputs"]["model_size_gb"] == 16
    assert "copy_data_cache" in [s["name"] for s in est["scenarios"]]


def test_what_if_options_take_effect():
    def totals(*extra):
        out = run("--instance-type", "ml.g6.2xlarge", "--model-size-gb", "16", "--json", *extra).output
        return {s["name"]: s["total_seconds"] for s in json.loads(out)["estimates"][0]["scenarios"]}

    assert "copy_data_cache" not in totals("--no-data-cache")
    assert totals("--metric", "invocations")["instance_image_cache"] > totals()["instance_image_cache"]
    assert totals("--image-size-gb", "30")["instance_no_image_cache"] > totals("--image-size-gb", "5")["instance_no_image_cache"]


@pytest.mark.parametrize(
    "args, message",
    [
        ((), "give a config FILE"),
        ((QWEN, "--instance-type", "ml.g6.2xlarge"), "not both"),
        ((QWEN, "--model-size-gb", "3"), "--model-size-gb"),
        ((QWEN, "--no-data-cache"), "--data-cache"),
        (("--instance-type", "ml.g6.2xlarge"), "--model-size-gb is required"),
        (("--instance-type", "ml.g6.2xlarg", "--model-size-gb", "3"), "did you mean ml.g6.2xlarge"),
        (("--instance-type", "ml.g6.2xlarge", "--model-size-gb", "3", "--accelerators", "2"), "1 accelerator"),
        (("--instance-type", "ml.g6.2xlarge", "--model-size-gb", "-1"), "-1"),
        ((QWEN, "--hours-at-max", "30"), "30"),
    ],
)
def test_bad_input_exits_2(args, message):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_invalid_config_exits_2(write_yaml):
    result = run(str(write_yaml("project: p\nregion: us-east-1\nendpoints: []\n")))
    assert result.exit_code == 2


def test_nothing_estimable_exits_2(write_yaml, base_config):
    base_config["endpoints"][0]["instance_type"] = "ml.c7i.2xlarge"
    result = run(str(write_yaml(base_config)))
    assert result.exit_code == 2
    assert "no accelerator" in result.output and "nothing could be estimated" in result.output


def test_a_model_without_a_size_is_estimated_and_says_what_is_missing(write_yaml, base_config):
    del base_config["endpoints"][0]["model"]["model_size_gb"]
    result = run(str(write_yaml(base_config)), "--json")
    assert result.exit_code == 0, result.output
    [est] = json.loads(result.output)["estimates"]
    assert est["missing"] == ["model_size_gb"] and est["scenarios"]
    human = run(str(write_yaml(base_config)))
    assert human.exit_code == 0 and "model_size_gb not set" in human.output and "lower" in human.output


def test_what_if_refuses_a_model_that_does_not_fit(tmp_path):
    result = CliRunner().invoke(cli, ["estimate", "--instance-type", "ml.g5.xlarge", "--model-size-gb", "140"])
    assert result.exit_code == 2
    assert "do not fit" in result.output and "such as" in result.output
    result = CliRunner().invoke(cli, ["estimate", "--instance-type", "ml.g5.12xlarge", "--model-size-gb", "40",
                                       "--accelerators", "1"])
    assert result.exit_code == 2 and "--accelerators 2" in result.output


def test_json_carries_p50_and_p90_and_both_capacity_times():
    payload = json.loads(run(MULTI, "--json").output)
    for est in payload["estimates"]:
        p50 = {s["name"]: s for s in est["scenarios"]}
        p90 = {s["name"]: s for s in est["scenarios_p90"]}
        assert p50.keys() == p90.keys()
        for name in p50:
            assert p90[name]["total_seconds"] >= p50[name]["total_seconds"]
        zero = p50["from_zero"]
        assert zero["full_capacity_seconds"] > zero["first_capacity_seconds"]


def test_plot_writes_a_png(tmp_path):
    out = tmp_path / "timeline.png"
    result = run(MULTI, "--plot", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert "timeline plot written" in result.output


def test_plot_without_matplotlib_exits_1(tmp_path, monkeypatch):
    # A None entry in sys.modules makes `import matplotlib` raise ImportError, as if it were not installed.
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "timeline.png"
    result = run(QWEN, "--plot", str(out))
    assert result.exit_code == 1
    assert "pip install 'fastscale[plot]'" in result.output
    assert not out.exists()


def test_plot_to_an_unwritable_place_exits_1(tmp_path):
    result = run(QWEN, "--plot", str(tmp_path / "missing-dir" / "t.png"))
    assert result.exit_code == 1 and "cannot write" in result.output
