"""`infra.analysis.recommend`: the Pareto front, the choice under an SLO, determinism, and the config it writes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastscale.infra.analysis.recommend.evaluation import Outcome, evaluate_all
from fastscale.infra.analysis.recommend.front import choose, pareto_front, recommend
from fastscale.infra.analysis.recommend.search import Candidate, RecommendInputError, build_search
from fastscale.infra.analysis.recommend.settings import apply_to_text, get_path
from fastscale.infra.analysis.simulate.requests.rates import ServiceRates
from fastscale.infra.analysis.simulate.requests.trace import parse_request_trace
from fastscale.infra.config import load_config, parse_config, safe_yaml
from fastscale.infra.config.yaml_edit import edit
from fastscale.infra.rules import has_errors, run_rules
from tests.conftest import ROOT

ZERO = ROOT / "examples" / "scale-to-zero-short-tail.yaml"
QWEN = ROOT / "examples" / "qwen3-8b.yaml"
MULTI = ROOT / "examples" / "multi-model.yaml"


def small_trace(seconds: int = 900, every: float = 1.5):
    """A quarter of an hour: idle 2 minutes, then a request every ``every`` seconds with a burst in the middle."""
    rows = []
    t = 120.0
    while t < seconds:
        rows.append(f"{t:.2f},{600 + int(t) % 400},{80 + int(t * 7) % 150}")
        t += every / 3 if 400 < t < 500 else every
    return parse_request_trace("timestamp,input_tokens,output_tokens\n" + "\n".join(rows) + "\n", "small.csv")


def search_for(path: Path, **kwargs):
    text = path.read_text()
    return build_search(load_config(path), safe_yaml.load(text).data, small_trace(), **kwargs)


@pytest.fixture(scope="module")
def outcomes():
    search = search_for(ZERO, instance_types=["ml.g5.xlarge", "ml.g6e.xlarge"])
    return search, evaluate_all(search, workers=1)


def _dominates(a: Outcome, b: Outcome) -> bool:
    return (a.cost_usd <= b.cost_usd and a.ttft_p99_s <= b.ttft_p99_s
            and (a.cost_usd < b.cost_usd or a.ttft_p99_s < b.ttft_p99_s))


def test_the_search_covers_every_dimension(outcomes):
    search, results = outcomes
    seen = {}
    for c in search.candidates:
        for path, value in c.settings.items():
            seen.setdefault(path.rsplit(".", 2)[-2] + "." + path.rsplit(".", 1)[-1], set()).add(value)
    assert {c.instance_type for c in search.candidates} == {"ml.g5.xlarge", "ml.g6e.xlarge"}
    assert seen["copies.min"] == {0, 1, 2}
    for t in ("ml.g5.xlarge", "ml.g6e.xlarge"):  # two maxima per shape: a little headroom over the peak, or twice it
        assert len({c.settings[f"{search.workload_path}.copies.max"] for c in search.candidates if c.instance_type == t}) == 2
    assert seen["autoscaling.metric"] == {"high_resolution", "invocations"}
    # Three targets per shape, fractions of what a copy of that shape runs at once (its KV cache differs).
    for t in ("ml.g5.xlarge", "ml.g6e.xlarge"):
        targets = {c.settings[f"{search.workload_path}.autoscaling.target_concurrency"] for c in search.candidates
                   if c.instance_type == t}
        slots = {c.rates.slots for c in search.candidates if c.instance_type == t}
        assert len(targets) == 3 and len(slots) == 1 and max(targets) < slots.pop()
    assert len({(c.settings[k1], c.settings[k2]) for c in search.candidates
                for k1, k2 in [(f"{search.workload_path}.autoscaling.scale_in_cooldown",
                                f"{search.workload_path}.autoscaling.scale_out_cooldown")]}) == 3
    assert len(results) == len(search.candidates) and all(o.error is None for o in results)


def test_the_front_is_non_dominated_and_dominates_every_other_candidate(outcomes):
    _, results = outcomes
    front = pareto_front(results, 0.0)
    assert len(front) >= 2
    for a in front:
        for b in front:
            assert a is b or not _dominates(a, b)
    eligible = [o for o in results if o.rejected_fraction <= 0.0]
    for o in eligible:
        assert o in front or any(_dominates(f, o) or (f.cost_usd, f.ttft_p99_s) == (o.cost_usd, o.ttft_p99_s) for f in front)
    assert [o.cost_usd for o in front] == sorted(o.cost_usd for o in front)


@settings(max_examples=200, deadline=None)
@given(st.floats(0.01, 120), st.floats(0.01, 120), st.sampled_from([0.0, 0.001, 0.01, 0.2]))
def test_a_stricter_slo_never_gives_a_cheaper_choice(outcomes, a, b, rejected):
    search, results = outcomes
    strict, loose = sorted((a, b))
    tight = recommend(search, results, strict, rejected).choice
    easy = recommend(search, results, loose, rejected).choice
    if tight is not None:
        assert easy is not None and easy.cost_usd <= tight.cost_usd and tight.ttft_p99_s <= strict
    # ... and the choice is the cheapest of every candidate that meets it, not only of the front.
    meeting = [o for o in results if o.ttft_p99_s is not None and o.ttft_p99_s <= loose and o.rejected_fraction <= rejected]
    assert (easy is None) == (not meeting)
    if easy is not None:
        assert easy.cost_usd == min(o.cost_usd for o in meeting)


def _outcome(i, cost, p99, rejected=0.0):
    c = Candidate(i, {"x": i}, "ml.g5.xlarge", 1, ServiceRates(1, 1.0, 1.0, 0.0))
    return Outcome(c, cost, p99, p99, rejected, 1, 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 20), st.integers(1, 20), st.sampled_from([0.0, 0.5])), max_size=40))
def test_pareto_front_on_arbitrary_points(points):
    results = [_outcome(i, float(c), float(p), r) for i, (c, p, r) in enumerate(points)]
    front = pareto_front(results, 0.1)
    assert all(o.rejected_fraction == 0.0 for o in front)
    for a in front:
        for b in front:
            assert a is b or not _dominates(a, b)
    for o in results:
        if o.rejected_fraction == 0.0 and o not in front:
            assert any(_dominates(f, o) or (f.cost_usd, f.ttft_p99_s) == (o.cost_usd, o.ttft_p99_s) for f in front)
    for slo in (1.0, 5.0, 20.0):
        chosen = choose(front, slo)
        fits = [o.cost_usd for o in results if o.rejected_fraction == 0 and o.ttft_p99_s <= slo]
        assert (chosen is None) == (not fits) and (chosen is None or chosen.cost_usd == min(fits))


def test_results_do_not_depend_on_the_number_of_workers():
    search = search_for(QWEN, instance_types=["ml.g5.xlarge"])
    one = [o.to_dict() for o in evaluate_all(search, workers=1)]
    two = [o.to_dict() for o in evaluate_all(search, workers=2)]
    assert one == two and len(one) == len(search.candidates)


def test_nothing_meets_an_impossible_slo_and_the_reason_says_why(outcomes):
    search, results = outcomes
    r = recommend(search, results, 0.001, 0.0)
    assert r.choice is None and "no candidate has a TTFT p99 within 0.001 s" in r.reason
    assert r.to_dict()["choice"] is None and r.to_dict()["reason"] == r.reason
    with pytest.raises(RecommendInputError, match="above 0"):
        recommend(search, results, 0, 0.0)


def test_the_written_config_validates_round_trips_and_keeps_comments(outcomes):
    search, results = outcomes
    choice = recommend(search, results, 60, 0.0).choice
    assert choice is not None
    text = ZERO.read_text()
    written = apply_to_text(text, choice.candidate.settings, str(ZERO))
    assert written.comments_kept and "# An internal assistant used in bursts." in written.text
    data = safe_yaml.load(written.text).data
    for path, value in choice.candidate.settings.items():
        assert get_path(data, path) == value, path
    config = parse_config(data)
    assert not has_errors(run_rules(config))
    # Written again, the same settings change nothing more.
    assert apply_to_text(written.text, choice.candidate.settings, "w").text == written.text


def test_every_candidate_config_validates(outcomes):
    from fastscale.infra.analysis.recommend.settings import candidate_config

    search, _ = outcomes
    for c in search.candidates[::7]:
        findings = [f for f in run_rules(candidate_config(search.data, c.settings)) if f.severity.value == "error"]
        assert findings == [], (c.settings, findings)


def test_single_model_endpoints_never_scale_to_zero():
    search = search_for(QWEN, instance_types=["ml.g5.xlarge"])
    assert {c.settings["endpoints[0].instances.min"] for c in search.candidates} == {1, 2}


def test_yaml_edit_in_block_flow_and_missing_mappings():
    text = "a:\n  b: 1   # keep\n  c: {d: 2}\nlist:\n  - name: x\n    k: v\n"
    out = edit(text, {"a.b": 5, "a.c.e": "ml.g5.xlarge", "a.f.g": True, "list[0].k": "two words", "list[0].n": 0.5})
    assert out == ('a:\n  b: 5   # keep\n  c: {d: 2, e: ml.g5.xlarge}\n  f: {g: true}\nlist:\n  - name: x\n'
                   '    k: "two words"\n    n: 0.5\n')
    # A value shared through an alias cannot be edited in one place (configs refuse aliases anyway).
    assert edit("base: &b {x: 1}\nother: *b\n", {"base.x": 2}) is None
    # A list where a number goes cannot be edited in place: the caller writes the data instead, comments lost.
    listed = "# a comment\nbase:\n  x: [1, 2]\n"
    assert edit(listed, {"base.x": 2}) is None
    fallback = apply_to_text(listed, {"base.x": 2}, "a.yaml")
    assert not fallback.comments_kept and "could not be kept" in fallback.text and "a comment" not in fallback.text
    assert safe_yaml.load(fallback.text).data["base"]["x"] == 2


def test_bad_selection_and_types_are_input_errors():
    with pytest.raises(RecommendInputError, match="choose one with --endpoint and --component"):
        search_for(MULTI)
    with pytest.raises(RecommendInputError, match="unknown instance type 'ml.g9.huge'"):
        search_for(ZERO, instance_types=["ml.g9.huge"])
    with pytest.raises(RecommendInputError, match="do not fit"):
        search_for(ZERO, instance_types=["ml.g4dn.xlarge"])


def test_other_components_keep_the_instance_type():
    search = search_for(MULTI, component="llama3-8b")
    assert {c.instance_type for c in search.candidates} == {"ml.g6.12xlarge"}
    assert search.workload_path == "endpoints[0].inference_components[1]"
    assert any("other components" in n for n in search.notes)
    assert len(search.candidates) > 0
