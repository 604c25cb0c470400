from tests.rules.conftest import IMAGE


def test_override_image_in_the_region_passes(run_rule, single_model):
    single_model["endpoints"][0]["capacity"] = {
        "fallback": [{"instance_type": "ml.g5.2xlarge", "model": {"image": IMAGE.replace(":1.0", ":1.0-a10g")}}]
    }
    assert run_rule("FS038", single_model) == []


def test_override_image_elsewhere_fails(run_rule, hits, components):
    components["endpoints"][0]["capacity"] = {"fallback": [
        {"instance_type": "ml.g5.12xlarge",
         "components": {"llama": {"image": IMAGE.replace("us-east-1", "eu-west-1")}, "qwen": {"image": "docker.io/vllm/vllm-openai:v1"}}}
    ]}
    found = run_rule("FS038", components)
    assert hits(found) == [
        ("FS038", "error", "endpoints[0].capacity.fallback[0].components.llama.image"),
        ("FS038", "error", "endpoints[0].capacity.fallback[0].components.qwen.image"),
    ]
    assert "eu-west-1" in found[0].message and "outside Amazon ECR" in found[1].message
