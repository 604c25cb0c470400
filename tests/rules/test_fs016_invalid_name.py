import pytest

from fastscale.infra.config import parse_config
from fastscale.infra.model import naming


def test_legal_names_pass(run_rule, single_model, components):
    assert run_rule("FS016", single_model) == []
    assert run_rule("FS016", components) == []
    single_model["endpoints"][0]["name"] = "Chat--v2"  # repeated hyphens and capitals are legal
    assert run_rule("FS016", single_model) == []


@pytest.mark.parametrize("bad", ["qwen3_8b", "chat-", "-chat", "chat.v2", "chät", "chat\n", "chat\r\n", "\nchat"])
def test_illegal_endpoint_name(run_rule, hits, single_model, bad):
    single_model["endpoints"][0]["name"] = bad
    assert hits(run_rule("FS016", single_model)) == [("FS016", "error", "endpoints[0].name")]


def test_illegal_project_and_component_names(run_rule, hits, components):
    components["project"] = "my_project"
    components["endpoints"][0]["inference_components"][1]["name"] = "llama 3"
    found = run_rule("FS016", components)
    assert hits(found) == [
        ("FS016", "error", "project"),
        ("FS016", "error", "endpoints[0].inference_components[1].name"),
    ]
    assert "'llama-3'" in found[1].hint


def test_endpoint_name_budget_is_the_endpoint_config_prefix(run_rule, hits, single_model):
    # '{project}-{endpoint}-' plus Terraform's 26-character suffix must stay within 63 characters,
    # so 'demo-' + name may have 36 characters: the name itself 31.
    single_model["endpoints"][0]["name"] = "a" * 31
    assert run_rule("FS016", single_model) == []
    single_model["endpoints"][0]["name"] = "a" * 32
    found = run_rule("FS016", single_model)
    assert hits(found) == [("FS016", "error", "endpoints[0].name")]
    assert "endpoint configuration name" in found[0].message
    assert "at most 31 characters" in found[0].hint


def test_budget_follows_infra_naming(run_rule, single_model):
    # The rule measures the names infra.model.naming really builds, not a copy of its formulas.
    ep = single_model["endpoints"][0]
    ep["name"] = "a" * 40
    config = parse_config(single_model)
    names = naming.endpoint_names(config, config.endpoints[0])
    (finding,) = run_rule("FS016", single_model)
    assert f"'{names.endpoint_config_prefix}" in finding.message
    assert f"'{names.endpoint}'" not in finding.message  # the endpoint name itself (45 chars) is fine


def test_long_project_leaves_no_room(run_rule, hits, single_model):
    single_model["project"] = "p" * 40
    found = run_rule("FS016", single_model)
    assert hits(found) == [("FS016", "error", "endpoints[0].name")]
    assert "project and name together" in found[0].hint


def test_component_name_max_63(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["name"] = "c" * 58  # 'demo-' + 58 = 63
    assert run_rule("FS016", components) == []
    components["endpoints"][0]["inference_components"][0]["name"] = "c" * 59
    found = run_rule("FS016", components)
    assert hits(found) == [("FS016", "error", "endpoints[0].inference_components[0].name")]
    assert "at most 58" in found[0].hint


def test_a_name_is_matched_whole_and_shown_with_its_line_break(run_rule, hits, components):
    components["project"] = "demo\n"
    components["endpoints"][0]["inference_components"][0]["name"] = "llm\n"
    found = run_rule("FS016", components)
    assert hits(found) == [("FS016", "error", "project"), ("FS016", "error", "endpoints[0].inference_components[0].name")]
    assert "project 'demo\\n' is not a legal" in found[0].message
