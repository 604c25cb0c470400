def test_same_region_and_cross_account_pass(run_rule, single_model):
    single_model["endpoints"][0]["model"]["image"] = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.33.0"
    assert run_rule("FS004", single_model) == []


def test_other_region_is_an_error(run_rule, hits, components):
    components["endpoints"][0]["inference_components"][0]["image"] = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/llm:1.0"
    found = run_rule("FS004", components)
    assert hits(found) == [("FS004", "error", "endpoints[0].inference_components[0].image")]
    assert "eu-west-1" in found[0].message and "us-east-1" in found[0].message
    assert "123456789012.dkr.ecr.us-east-1.amazonaws.com/llm:1.0" in found[0].hint


def test_non_ecr_images_are_not_region_checked(run_rule, single_model):
    single_model["endpoints"][0]["model"]["image"] = "docker.io/vllm/vllm-openai:v0.9.2"
    assert run_rule("FS004", single_model) == []


def test_project_region_is_the_reference(run_rule, hits, single_model):
    single_model["region"] = "eu-west-1"
    assert hits(run_rule("FS004", single_model)) == [("FS004", "error", "endpoints[0].model.image")]
    single_model["endpoints"][0]["model"]["image"] = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/llm:1.0"
    assert run_rule("FS004", single_model) == []


def test_no_host_is_suggested_in_a_region_that_does_not_exist(run_rule, single_model):
    # FS075 reports the typo; suggesting 123456789012.dkr.ecr.us-eats-1.amazonaws.com would send users nowhere.
    single_model["region"] = "us-eats-1"
    assert run_rule("FS004", single_model) == []


def test_china_hint_names_the_china_registry_host(run_rule, single_model):
    single_model["region"] = "cn-north-1"
    (finding,) = run_rule("FS004", single_model)
    assert "123456789012.dkr.ecr.cn-north-1.amazonaws.com.cn/llm:1.0" in finding.hint


def test_a_digest_is_kept_in_the_suggested_image(run_rule, single_model):
    digest = "sha256:" + "ab" * 32
    single_model["endpoints"][0]["model"]["image"] = f"123456789012.dkr.ecr.eu-west-1.amazonaws.com/llm@{digest}"
    (finding,) = run_rule("FS004", single_model)
    assert f"123456789012.dkr.ecr.us-east-1.amazonaws.com/llm@{digest}" in finding.hint
