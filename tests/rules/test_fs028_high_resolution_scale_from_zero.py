import pytest

from fastscale.infra.config import parse_config
from fastscale.infra.rules import Severity, has_errors, run_rules


def test_sixty_seconds_passes(run_rule, scale_to_zero):
    assert run_rule("FS028", scale_to_zero) == []


@pytest.mark.parametrize("period", [10, 20, 30])
def test_sub_minute_period_is_a_note(run_rule, hits, scale_to_zero, period):
    scale_to_zero["endpoints"][0]["inference_components"][0]["autoscaling"] = {"scale_from_zero": {"period": period}}
    found = run_rule("FS028", scale_to_zero)
    assert hits(found) == [("FS028", "info", "endpoints[0].inference_components[0].autoscaling.scale_from_zero.period")]
    assert "INSUFFICIENT_DATA" in found[0].message and "AWS's scale-to-zero samples" in found[0].message
    assert "scale_from_zero.period: 60" in found[0].hint


def test_aws_samples_thirty_second_period_is_never_a_warning(scale_to_zero):
    # What every aws-samples scale-to-zero stack does: not the user's own risk.
    scale_to_zero["endpoints"][0]["inference_components"][0]["autoscaling"] = {"scale_from_zero": {"period": 30}}
    findings = run_rules(parse_config(scale_to_zero))
    assert [f.severity for f in findings if f.code == "FS028"] == [Severity.INFO]
    assert not has_errors(findings)
    assert [f.code for f in findings if f.severity is Severity.WARNING] == []


def test_components_that_never_reach_zero_are_not_checked(run_rule, components):
    components["endpoints"][0]["inference_components"][0]["autoscaling"] = {"scale_from_zero": {"period": 10}}
    assert run_rule("FS028", components) == []
