import pytest

from tests.template_fields import PAYLOADS


def test_plain_values_pass(run_rule, single_model):
    single_model["tags"] = {"team": "ml", "cost": "$5 {per hour}", "pct": "100%"}
    single_model["endpoints"][0]["model"]["environment"] = {"PROMPT": "say $HOME or {name} or %s"}
    assert run_rule("FS073", single_model) == []


@pytest.mark.parametrize("payload", sorted(PAYLOADS.values()))
def test_template_syntax_in_a_value_is_a_warning_naming_the_path(run_rule, hits, single_model, payload):
    single_model["endpoints"][0]["model"]["environment"] = {"GREETING": payload}
    found = run_rule("FS073", single_model)
    assert hits(found) == [("FS073", "warning", "endpoints[0].model.environment.GREETING")]
    assert "AWS receives exactly this text" in found[0].message and "nothing to do" in found[0].hint
    assert payload not in found[0].message + found[0].hint  # the value (maybe a secret) is never echoed


def test_keys_and_nested_strings_are_checked(run_rule, hits, components):
    components["tags"] = {"${var.x}": "ok", "owner": "%{ if true }a%{ endif }"}
    components["endpoints"][0]["inference_components"][1]["image"] += "${x}"
    found = sorted(run_rule("FS073", components), key=lambda f: f.path)
    assert hits(found) == [
        ("FS073", "warning", "endpoints[0].inference_components[1].image"),
        ("FS073", "warning", "tags.owner"),
        ("FS073", "warning", 'tags["${var.x}"]'),
    ]
    assert "(%{)" in found[1].message and "(${)" in found[2].message
