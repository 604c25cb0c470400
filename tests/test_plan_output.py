"""How a plan reads: imports counted and marked as Terraform counts them, drift shown only where a value really
changed (with what the plan does about it) and the provider's normalisation on one labelled line, never a
"Drift detected" line per resource in the progress stream.

The Terraform lines below are as terraform 1.11 writes them (-json) for hashicorp/aws 5.100 on fastscale's
emulator: an adopted role imported and updated, an alarm the provider reads back in another form."""

from __future__ import annotations

import json

from fastscale.cli.plan_view import print_change_summary
from fastscale.cli.progress import Reporter
from fastscale.infra.base.value_diff import ValueChange
from fastscale.infra.terraform.drift import Drift, DriftedValue
from fastscale.infra.terraform.runner.messages import Collector


def _line(kind: str, message: str, **extra: object) -> str:
    return json.dumps({"@level": "info", "@message": message, "@module": "terraform.ui", "type": kind, **extra})


def _resource(address: str) -> dict:
    kind, name = address.split(".")
    return {"addr": address, "module": "", "resource": address, "implied_provider": "aws", "resource_type": kind,
            "resource_name": name, "resource_key": None}


ADOPT_PLAN = [
    _line("resource_drift", "aws_cloudwatch_metric_alarm.al: Drift detected (update)",
          change={"resource": _resource("aws_cloudwatch_metric_alarm.al"), "action": "update"}),
    _line("planned_change", "aws_iam_role.r: Plan to import",
          change={"resource": _resource("aws_iam_role.r"), "action": "import", "importing": {"id": "adopted"}}),
    _line("planned_change", "aws_sagemaker_model.m: Plan to update",
          change={"resource": _resource("aws_sagemaker_model.m"), "action": "update", "importing": {"id": "sdk-model"}}),
    _line("planned_change", "aws_cloudwatch_metric_alarm.new: Plan to create",
          change={"resource": _resource("aws_cloudwatch_metric_alarm.new"), "action": "create"}),
    _line("change_summary", "Plan: 2 to import, 1 to add, 1 to change, 0 to destroy.",
          changes={"add": 1, "change": 1, "import": 2, "remove": 0, "operation": "plan"}),
]


def _collected(lines: list[str], returncode: int = 2):
    """The events and result of a plan run with -detailed-exitcode (2: changes, 0: none)."""
    collector = Collector("plan")
    events = [collector.take(line) for line in lines]
    return events, collector.result("terraform", returncode, [], detailed_exitcode=True)


def test_the_collector_counts_imports_apart_and_keeps_what_drifted():
    events, result = _collected(ADOPT_PLAN)
    assert (result.imported, result.added, result.changed, result.destroyed) == (2, 1, 1, 0)
    assert result.has_changes and result.drifted == ["aws_cloudwatch_metric_alarm.al"]
    assert [(e.address, e.action, e.importing) for e in events if e and e.kind == "planned_change"] == [
        ("aws_iam_role.r", "import", "adopted"), ("aws_sagemaker_model.m", "update", "sdk-model"),
        ("aws_cloudwatch_metric_alarm.new", "create", None)]


def test_the_plan_says_what_it_imports_and_counts_it(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    _, result = _collected(ADOPT_PLAN)
    changes = [{"address": "aws_iam_role.r", "action": "import", "importing": "adopted"},
               {"address": "aws_sagemaker_model.m", "action": "update", "importing": "sdk-model"},
               {"address": "aws_cloudwatch_metric_alarm.new", "action": "create"}]
    print_change_summary(result, changes)
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert "<- import aws_iam_role.r (ID adopted)" in lines
    assert "~ update aws_sagemaker_model.m (imported first, ID sdk-model)" in lines
    assert "+ create aws_cloudwatch_metric_alarm.new" in lines
    assert "Plan: 2 to import, 1 to add, 1 to change, 0 to destroy." in lines


def test_drift_is_shown_only_where_a_value_changed_and_normalisation_is_labelled(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    _, result = _collected([
        ADOPT_PLAN[0], _line("change_summary", "Plan: 0 to add, 0 to change, 0 to destroy.",
                             changes={"add": 0, "change": 0, "import": 0, "remove": 0, "operation": "plan"})],
        returncode=0)
    by_hand = DriftedValue(ValueChange(("threshold",), 1, 5), planned=1)
    attached = DriftedValue(ValueChange(("inline_policy", 0), None, {"name": "serving"}))
    drift = [Drift("aws_cloudwatch_metric_alarm.al", (), planned=False),
             Drift("aws_iam_role.r", (attached,), planned=False),
             Drift("aws_cloudwatch_metric_alarm.errors", (by_hand,), planned=True)]
    print_change_summary(result, [], drift=drift)
    out = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert out == [
        "Changed outside Terraform:",
        "aws_cloudwatch_metric_alarm.errors threshold: 1 -> 5 (the plan sets it to 1)",
        "Read back differently from the saved state, nothing for the plan to change (provider normalisation, or "
        "values the config does not set): aws_cloudwatch_metric_alarm.al, aws_iam_role.r",
        "No changes: the deployed stack matches the config.",
    ]


def test_the_progress_stream_prints_no_drift_line_per_resource(capsys):
    collector = Collector("plan")
    with Reporter() as reporter:
        reporter.operation = "plan"
        for line in ADOPT_PLAN[:1]:
            reporter.terraform_event(collector.take(line))
    captured = capsys.readouterr()
    assert "Drift detected" not in captured.err + captured.out
