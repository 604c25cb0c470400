"""Rules about what will be built read the resolved stack, resolved once per validation."""

from __future__ import annotations

import fastscale.infra.rules as rules
from fastscale.infra.config import parse_config
from fastscale.infra.model.resolved import resolve
from fastscale.infra.rules import all_rules, run_rules
from tests.rules.conftest import components_config


def test_the_rules_about_names_alarms_and_pools_read_the_resolved_stack():
    on_stack = {r.code for r in all_rules() if r.on_stack}
    assert {"FS016", "FS032", "FS049"} <= on_stack


def test_run_rules_resolves_the_config_once(monkeypatch):
    calls = []

    def counting(config):
        calls.append(config)
        return resolve(config)

    monkeypatch.setattr(rules, "resolve", counting)
    config = parse_config(components_config())
    run_rules(config)
    assert calls == [config]


def test_a_stack_rule_run_on_its_own_resolves_the_config():
    data = components_config()
    data["endpoints"][0]["name"] = "x" * 40  # the endpoint configuration's name prefix is then too long
    (rule,) = [r for r in all_rules() if r.code == "FS016"]
    config = parse_config(data)
    assert rule.run(config) == rule.run(config, resolve(config)) != []
