"""The rule set as a whole: registration, documented examples, clean bases and examples, all findings at once."""

from __future__ import annotations

import pkgutil
import re
import sys
from pathlib import Path

import pytest
import yaml

import fastscale.infra.rules
from fastscale.infra.config import load_config, parse_config
from fastscale.infra.rules import Severity, all_rules, has_errors, run_rules
from tests.rules.conftest import components_config, scale_to_zero_config, single_model_config, where

ROOT = Path(__file__).resolve().parents[2]
RULES = all_rules()

#: Warnings the shipped examples are allowed to produce, each with the reason it is acceptable. Empty: the
#: examples are what users copy, so they show a configuration with nothing to fix.
EXAMPLE_WARNINGS_ALLOWED: dict[tuple[str, str, str], str] = {}


def test_every_rule_module_registers_exactly_one_rule():
    modules = sorted(m.name for m in pkgutil.iter_modules(fastscale.infra.rules.__path__) if not m.name.startswith("_"))
    by_module = {}
    for r in RULES:
        by_module.setdefault(r.check.__module__.rsplit(".", 1)[-1], []).append(r.code)
    assert sorted(by_module) == modules
    assert all(len(codes) == 1 for codes in by_module.values()), by_module
    for r in RULES:
        # Module names start with the code, so a code is easy to find in the tree.
        assert r.check.__module__.rsplit(".", 1)[-1].startswith(r.code.lower() + "_")


def _extending_table() -> dict[str, str]:
    """Rule code -> what it reads ("stack" or "config"), from the table in docs/extending.md."""
    rows = re.findall(r"^\| (stack|config) \| ([A-Z0-9 ]+) \|", (ROOT / "docs" / "extending.md").read_text(), re.M)
    table: dict[str, str] = {}
    for reads, codes in rows:
        for code in codes.split():
            assert code not in table, f"{code} is in the table twice"
            table[code] = reads
    return table


def test_what_each_rule_reads_is_documented():
    assert _extending_table() == {r.code: "stack" if r.on_stack else "config" for r in RULES}


def test_every_stack_rule_is_held_to_the_resolved_stack_contract():
    # The import-linter contract keeps the raw config classes out of the modules it lists: every rule about
    # what will be built must be one of them, and no rule about the config as written.
    text = (ROOT / "pyproject.toml").read_text()
    contract = text[text.index("# the rules about what will be built"):text.index("forbidden_modules", text.index(
        "# the rules about what will be built"))]
    listed = set(re.findall(r"fastscale\.infra\.rules\.(fs\d{3}_\w+)", contract))
    assert listed == {r.check.__module__.rsplit(".", 1)[-1] for r in RULES if r.on_stack}


def test_codes_and_names_are_well_formed_and_unique():
    assert all(re.fullmatch(r"FS\d{3}", r.code) for r in RULES)
    names = [r.name for r in RULES]
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", n) for n in names)
    assert len(set(names)) == len(names)
    assert all(r.summary.endswith(".") for r in RULES)  # one sentence each, as shown in docs/rules.md


def test_rule_codes_stay_between_the_schema_error_and_the_live_checks():
    """FS000 is the schema's own error, FS900 and up what `validate --check-aws` and plan/deploy ask AWS:
    a rule taking one of those codes would be reported as something else (docs/extending.md: the next free
    code)."""
    from fastscale.infra.aws import preflight

    live = min(preflight.IMAGE_CODE, preflight.MODEL_DATA_CODE, preflight.QUOTA_CODE)
    assert live == "FS900"
    assert [r.code for r in RULES if not "FS000" < r.code < live] == []


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_documented_example_triggers_its_rule(rule):
    module = sys.modules[rule.check.__module__]
    assert module.__doc__ and module.__doc__.strip(), "the docstring explains the rule in docs/rules.md"
    config = parse_config(yaml.safe_load(module.EXAMPLE))
    findings = rule.run(config)
    assert findings, f"{rule.code}'s EXAMPLE does not trigger it"
    assert all(f.severity is rule.severity and f.message and f.hint for f in findings)
    # The example shows this one problem: no other rule reports an error on it.
    others = [f for f in run_rules(config) if f.code != rule.code and f.severity is Severity.ERROR]
    assert others == []


@pytest.mark.parametrize("build", [single_model_config, components_config, scale_to_zero_config])
def test_test_bases_are_clean(build):
    assert where(run_rules(parse_config(build()))) == []


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_examples_have_no_errors(path):
    findings = run_rules(load_config(path))
    assert not has_errors(findings), [f.to_dict() for f in findings]
    unexplained = {(path.name, f.code, f.path) for f in findings} - set(EXAMPLE_WARNINGS_ALLOWED)
    assert unexplained == set()


def test_a_broken_config_reports_every_problem_at_once():
    data = components_config()
    data["project"] = "my_project"  # FS016
    data["state"] = {"backend": "s3", "bucket": "s3://State", "key": "k"}  # FS029
    ep = data["endpoints"][0]
    ep["instances"] = {"initial": 0, "min": 0, "max": 1}  # FS010; min 0 with components at min 1: FS013
    ep["kms_key_arn"] = "arn:aws:kms:us-east-1:123456789012:key/abc"  # g6 has NVMe: FS019
    ep["metrics_publish_frequency"] = 15  # FS021
    ep["model_download_timeout"] = 10  # FS020
    ep["alarms"] = {"period": 45, "evaluation_periods": 0}  # FS026, FS027
    qwen, llama = ep["inference_components"]
    qwen["image"] = "docker.io/vllm/vllm-openai"  # FS003 and FS005
    qwen["resources"]["accelerators"] = 6  # FS006
    qwen["model_size_gb"] = 200  # FS007
    qwen["environment"] = {"HF_TOKEN": "hf_secret"}  # FS018
    qwen["autoscaling"] = {"metric": "invocations", "target_concurrency": 0, "scale_in_cooldown": -1}  # FS025 FS023 FS024
    llama["image"] = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/llm:1.0"  # FS004
    llama["name"] = "qwen"  # FS017
    llama["copies"] = {"initial": 5, "min": 1, "max": 4}  # FS009
    llama["model_size_gb"] = 23.5  # FS008 (94% of one L4)
    data["endpoints"].append(single_model_config()["endpoints"][0])
    single = data["endpoints"][1]
    single["instance_type"] = "ml.g6.2xlarg"  # FS001
    single["instances"] = {"initial": 1, "min": 0, "max": 2}  # FS012

    findings = run_rules(parse_config(data))
    codes = {f.code for f in findings}
    expected = {f"FS{n:03d}" for n in range(1, 30)} - {"FS002", "FS011", "FS014", "FS015", "FS022", "FS028"}
    assert expected <= codes, sorted(expected - codes)
    # Errors are listed before warnings, and warnings before notes, so the blocking problems come first.
    order = [Severity.ERROR, Severity.WARNING, Severity.INFO]
    severities = [f.severity for f in findings]
    assert severities == sorted(severities, key=order.index)
