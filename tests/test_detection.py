"""Scale-out detection times per workload, from the config alone."""

from __future__ import annotations

import copy

import pytest
from rich.console import Console

from fastscale.cli.commands.synth import detection_table
from fastscale.infra.config import load_config, parse_config
from fastscale.infra.model.detection import (
    HIGH_RESOLUTION_PERIOD_S,
    SCALE_OUT_DATAPOINTS,
    STANDARD_PERIOD_S,
    detection_summary,
)
from tests.conftest import BASE_CONFIG, ROOT


def _config(**model_autoscaling):
    data = copy.deepcopy(BASE_CONFIG)
    data["endpoints"][0]["model"]["autoscaling"] = model_autoscaling
    return parse_config(data)


def test_high_resolution_single_model_detects_in_about_30_seconds():
    (row,) = detection_summary(_config())
    assert row.kind == "model" and row.workload == "demo-chat" and row.endpoint == "demo-chat"
    assert row.metric == "ConcurrentRequestsPerModel"
    assert row.predefined_metric_type == "SageMakerVariantConcurrentRequestsPerModelHighResolution"
    assert row.resolution_s == 10 and row.high_resolution
    assert row.datapoints == 3
    assert row.scale_out_detection_s == 30
    assert row.zero_to_one_s is None


def test_invocations_metric_takes_minutes():
    (row,) = detection_summary(_config(metric="invocations"))
    assert row.metric == "InvocationsPerInstance"
    assert row.predefined_metric_type == "SageMakerVariantInvocationsPerInstance"
    assert not row.high_resolution
    assert row.scale_out_detection_s == 180
    # the whole point of the high-resolution metrics: six times faster detection
    assert row.scale_out_detection_s == 6 * detection_summary(_config())[0].scale_out_detection_s


def test_scale_in_is_not_faster_with_high_resolution():
    fast, slow = detection_summary(_config())[0], detection_summary(_config(metric="invocations"))[0]
    assert fast.scale_in_detection_s == slow.scale_in_detection_s == 15 * 60


def test_disabled_autoscaling_has_no_detection():
    (row,) = detection_summary(_config(enabled=False))
    assert not row.autoscaling
    assert row.metric is None and row.scale_out_detection_s is None and row.scale_in_detection_s is None


def test_components_and_scale_from_zero():
    config = load_config(ROOT / "examples" / "multi-model.yaml")
    rows = detection_summary(config)
    assert [r.workload for r in rows] == ["assist-qwen3-8b", "assist-llama3-8b", "assist-mistral-7b"]
    for row in rows:
        assert row.kind == "component" and row.endpoint == "assist-shared"
        assert row.metric == "ConcurrentRequestsPerCopy"
        assert row.scale_out_detection_s == SCALE_OUT_DATAPOINTS * HIGH_RESOLUTION_PERIOD_S
        # copies.min is 0 everywhere: the zero-to-one alarm is period x evaluation periods (60 s x 1)
        assert row.zero_to_one_s == 60


def test_zero_to_one_follows_the_alarm_settings(base_config):
    ep = base_config["endpoints"][0]
    ep["instances"] = {"initial": 1, "min": 0, "max": 2}
    model = ep.pop("model")
    ep["inference_components"] = [
        {
            **model,
            "name": "a",
            "resources": {"accelerators": 1, "memory_mb": 1024},
            "copies": {"initial": 1, "min": 0, "max": 2},
            "autoscaling": {"metric": "invocations", "scale_from_zero": {"period": 120, "evaluation_periods": 3}},
        },
        {**model, "name": "b", "resources": {"accelerators": 1, "memory_mb": 1024}, "copies": {"min": 1, "max": 2}},
    ]
    a, b = detection_summary(parse_config(base_config))
    assert a.zero_to_one_s == 360
    assert a.metric == "InvocationsPerCopy" and a.scale_out_detection_s == SCALE_OUT_DATAPOINTS * STANDARD_PERIOD_S
    assert b.zero_to_one_s is None, "a component that never reaches zero needs no zero-to-one alarm"


@pytest.mark.parametrize("example", ["multi-model", "qwen3-8b", "inferentia"])
def test_table_lists_every_workload(example):
    config = load_config(ROOT / "examples" / f"{example}.yaml")
    rows = detection_summary(config)
    console = Console(width=200, record=True, color_system=None)
    console.print(detection_table(rows))
    text = console.export_text()
    for row in rows:
        assert row.workload in text
        assert row.metric in text
    assert "~30 s" in text


def test_table_marks_disabled_and_standard_rows():
    console = Console(width=200, record=True, color_system=None)
    console.print(detection_table(detection_summary(_config(enabled=False))))
    assert "autoscaling disabled" in console.export_text()
    console = Console(width=200, record=True, color_system=None)
    console.print(detection_table(detection_summary(_config(metric="invocations"))))
    text = console.export_text()
    assert "(standard)" in text and "~3 min" in text


def test_the_domain_core_draws_no_tables():
    """Rendering belongs to the CLI: nothing under infra/ imports rich."""
    offenders = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "infra").rglob("*.py")
        if any(line.lstrip().startswith(("import rich", "from rich")) for line in path.read_text().splitlines())
    ]
    assert offenders == []
