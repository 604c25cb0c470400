"""`recommend`'s baseline: the current config on the same trace, exactly as `simulate --requests` replays it, shown
first; costs per month and the scaling said; one sentence on why the choice wins (or why to keep the current
config, when nothing is then written); and the plot with the current config marked."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fastscale.cli.main import cli
from fastscale.infra.analysis.recommend.baseline import (
    HOURS_PER_MONTH,
    Baseline,
    evaluate_baseline,
    monthly_factor,
    monthly_scaling,
    verdict,
)
from fastscale.infra.analysis.recommend.evaluation import Outcome, evaluate_all
from fastscale.infra.analysis.recommend.front import recommend
from fastscale.infra.analysis.recommend.plot import BASELINE_LABEL, front_figure
from fastscale.infra.analysis.recommend.search import Candidate
from fastscale.infra.analysis.simulate import load_params, select_workloads
from fastscale.infra.analysis.simulate.requests import simulate_workload_requests
from fastscale.infra.analysis.simulate.requests.rates import ServiceRates
from fastscale.infra.config import load_config
from tests.test_recommend import ZERO, search_for

QWEN_SMALL = """\
project: demo
region: us-east-1
endpoints:
  - name: chat
    instance_type: ml.g6.2xlarge
    instances: {initial: 1, min: 1, max: 4}
    model:
      image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0
      model_data: s3://demo-models/qwen3/
      model_size_gb: 16
      autoscaling: {target_concurrency: 4}
"""


@pytest.fixture(scope="module")
def zero():
    """The scale-to-zero example on a small trace: the current config rejects many requests (it starts at 0)."""
    search = search_for(ZERO, instance_types=["ml.g5.xlarge"])
    outcomes = evaluate_all(search, workers=1)
    baseline = evaluate_baseline(search, load_config(ZERO))
    return search, outcomes, baseline


def met_by_some(outcomes) -> float:
    """An SLO some candidate meets: the slowest TTFT p99 of the candidates that reject nothing."""
    return max(o.ttft_p99_s for o in outcomes if o.error is None and o.ttft_p99_s is not None and not o.rejected_fraction)


def test_the_baseline_is_the_current_config_replayed_exactly_as_simulate_requests(zero):
    search, _, baseline = zero
    config = load_config(ZERO)
    workload = select_workloads(config, search.endpoint, search.component).workloads[0]
    run = simulate_workload_requests(config, workload, search.trace, load_params())
    o = baseline.outcome
    assert o is not None and o.error is None
    assert o.cost_usd == run.cost_usd and o.rejected_fraction == run.stats.rejected_fraction
    assert (o.ttft_p99_s, o.e2e_p99_s) == (run.stats.ttft.p99, run.stats.e2e.p99)
    assert o.candidate.instance_type == "ml.g6.2xlarge"  # the file's type, not one of --instance-types
    assert baseline.settings["endpoints[0].inference_components[0].copies.min"] == 0
    assert baseline.settings["endpoints[0].inference_components[0].autoscaling.scale_in_cooldown"] == 300  # a default


def test_costs_per_month_are_the_trace_cost_scaled_to_730_hours(zero):
    search, outcomes, baseline = zero
    rec = recommend(search, outcomes, met_by_some(outcomes), 0.0, baseline)
    seconds = search.trace.seconds
    assert rec.monthly_factor == HOURS_PER_MONTH * 3600 / seconds == monthly_factor(seconds)
    assert monthly_scaling(3600) == "x 730 h / 1.00 h (the trace's 3600 s, repeated all month)"
    doc = rec.to_dict()
    assert doc["monthly"]["hours_per_month"] == 730 and doc["monthly"]["trace_seconds"] == seconds
    for row in [doc["baseline"], doc["choice"], *doc["pareto"]]:
        assert row["monthly_cost_usd"] == pytest.approx(row["cost_usd"] * rec.monthly_factor, abs=0.01 * rec.monthly_factor)
    assert doc["baseline"]["meets_slo"] is False and doc["choice"]["meets_slo"] is True


def test_the_sentence_says_what_the_choice_costs_against_the_current_config_and_what_that_misses(zero):
    search, outcomes, baseline = zero
    slo = met_by_some(outcomes)
    rec = recommend(search, outcomes, slo, 0.0, baseline)
    b = baseline.outcome
    assert rec.choice is not None and b is not None and b.rejected_fraction > 0
    f = rec.monthly_factor
    meeting = sum(1 for o in outcomes if o.error is None and o.ttft_p99_s is not None and o.ttft_p99_s <= slo
                  and o.rejected_fraction == 0)
    assert meeting > 1
    # The current config's TTFT p99 is named only where it misses the SLO too.
    slow = f" and reaches a TTFT p99 of {b.ttft_p99_s:.2f} s" if b.ttft_p99_s is not None and b.ttft_p99_s > slo else ""
    assert rec.why == (f"cheapest of the {meeting} candidates meeting the SLO (TTFT p99 <= {slo:g} s): "
                       f"${rec.choice.cost_usd * f:,.0f}/month vs the current ${b.cost_usd * f:,.0f}/month, which rejects "
                       f"{b.rejected_fraction:.2%} of the requests{slow}")
    assert not rec.keep_current


def _outcome(cost: float, ttft: float | None, rejected: float = 0.0, index: int = 0) -> Outcome:
    rates = ServiceRates(4, 1000.0, 20.0, 0.02)
    return Outcome(Candidate(index, {"endpoints[0].instances.max": index}, "ml.g5.xlarge", 1, rates), cost, ttft,
                   ttft, rejected, 1, 1)


@pytest.mark.parametrize(("choice", "current", "meeting", "expected", "keep"), [
    (_outcome(10, 1.0), _outcome(20, 1.5), 3,
     "cheapest meeting the SLO (TTFT p99 <= 2 s): $7,300/month vs the current $14,600/month, which meets it too: "
     "$7,300/month less", False),
    (_outcome(10, 1.0), _outcome(5, 1.5), 3,
     "the current settings already meet the SLO (TTFT p99 <= 2 s) at $3,650/month, no more than the cheapest "
     "candidate ($7,300/month): keep them", True),
    (_outcome(10, 1.0), _outcome(5, 1.5, rejected=0.25), 1,
     "the only settings searched that meet the SLO (TTFT p99 <= 2 s): $7,300/month vs the current $3,650/month, "
     "which rejects 25.00% of the requests", False),
    (_outcome(10, 1.0), _outcome(2, 9.0), 2,
     "cheapest of the 2 candidates meeting the SLO (TTFT p99 <= 2 s): $7,300/month vs the current $1,460/month, "
     "which reaches a TTFT p99 of 9.00 s", False),
    (None, _outcome(4, 1.0), 0,
     "no candidate searched meets the SLO (TTFT p99 <= 2 s), but the current settings do, at $2,920/month: keep them",
     True),
    (None, _outcome(4, 3.0), 0, None, False),
])
def test_why_the_choice_wins(choice, current, meeting, expected, keep):
    baseline = Baseline({}, current)
    chosen = [choice] * meeting if choice is not None else []
    assert verdict(choice, baseline, chosen, 2.0, 0.0, 730.0) == (expected, keep)


def test_a_baseline_that_cannot_be_simulated_says_why():
    b = Baseline({}, None, "no token rates")
    assert not b.meets(2.0, 0.0)
    assert verdict(_outcome(1, 1.0), b, [_outcome(1, 1.0)], 2.0, 0.0, 1.0)[0] == (
        "the only settings searched that meet the SLO (TTFT p99 <= 2 s): $1.00/month vs the current, which cannot be "
        "simulated (no token rates)")


def test_the_plot_marks_the_current_config_where_it_is(zero):
    search, outcomes, baseline = zero
    rec = recommend(search, outcomes, met_by_some(outcomes), 0.0, baseline)
    fig = front_figure(rec)
    ax = fig.axes[0]
    marked = [c for c in ax.collections if c.get_label().startswith(BASELINE_LABEL)]
    assert len(marked) == 1
    b = baseline.outcome
    assert marked[0].get_label() == f"current config (rejects {b.rejected_fraction:.2%})"
    assert tuple(marked[0].get_offsets()[0]) == pytest.approx((b.ttft_p99_s, b.cost_usd * rec.monthly_factor))
    chosen = [c for c in ax.collections if c.get_label() == "chosen"]
    assert tuple(chosen[0].get_offsets()[0]) == pytest.approx((rec.choice.ttft_p99_s, rec.monthly(rec.choice)))
    import matplotlib.pyplot as plt

    plt.close(fig)


def _recommend(*args):
    return CliRunner().invoke(cli, ["recommend", *args, "--instance-types", "ml.g6.2xlarge", "--workers", "1"])


def test_keeping_the_current_config_writes_nothing_and_exits_0(tmp_path):
    config = tmp_path / "fastscale.yaml"
    config.write_text(QWEN_SMALL)
    trace = tmp_path / "t.csv"
    trace.write_text("timestamp,input_tokens,output_tokens\n" + "\n".join(f"{60 + 6 * i},500,100" for i in range(80)) + "\n")
    out = tmp_path / "tuned.yaml"
    result = _recommend(str(config), "--trace", str(trace), "--ttft-p99", "5", "--write", str(out), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["keep_current"] is True and doc["why"].startswith("the current settings already meet the SLO")
    assert doc["written"] is None and not out.exists()
    text = _recommend(str(config), "--trace", str(trace), "--ttft-p99", "5", "--write", str(out))
    assert "nothing written to" in text.output and "now ✓" in text.output and not out.exists()


def test_recommend_plot_writes_a_png(tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("timestamp,input_tokens,output_tokens\n" + "\n".join(f"{60 + 3 * i},700,120" for i in range(150)) + "\n")
    png = tmp_path / "front.png"
    result = CliRunner().invoke(cli, ["recommend", str(ZERO), "--trace", str(trace), "--ttft-p99", "30", "--instance-types",
                                      "ml.g5.xlarge", "--workers", "1", "--plot", str(png)])
    assert result.exit_code in (0, 1), result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"plot written to {png}" in " ".join(result.output.split())

