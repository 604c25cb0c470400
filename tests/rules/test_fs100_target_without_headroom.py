"""FS100: a scaling target at or above the copy's capacity leaves no headroom."""

from __future__ import annotations


def test_target_below_capacity_passes(run_rule, single_model):
    model = single_model["endpoints"][0]["model"]
    model["autoscaling"] = {"target_concurrency": 6}
    model["serving"] = {"max_concurrency": 8}
    assert run_rule("FS100", single_model) == []


def test_capacity_not_set_is_not_checked(run_rule, single_model):
    single_model["endpoints"][0]["model"]["autoscaling"] = {"target_concurrency": 100}
    assert run_rule("FS100", single_model) == []


def test_target_at_capacity_warns(run_rule, hits, components):
    c = components["endpoints"][0]["inference_components"][0]
    c["autoscaling"] = {"target_concurrency": 8}
    c["serving"] = {"max_concurrency": 8}
    findings = run_rule("FS100", components)
    assert hits(findings) == [("FS100", "warning", "endpoints[0].inference_components[0].autoscaling.target_concurrency")]
    assert "below the capacity, e.g. 6.4" in findings[0].hint


def test_disabled_autoscaling_is_not_checked(run_rule, single_model):
    model = single_model["endpoints"][0]["model"]
    model["autoscaling"] = {"enabled": False, "target_concurrency": 10}
    model["serving"] = {"max_concurrency": 8}
    assert run_rule("FS100", single_model) == []
